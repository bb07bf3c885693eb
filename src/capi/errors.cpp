// The C API's error codes, strings and error JSON (include/cordon/cordon_c.h,
// "Error JSON"; the codes are docs/errors.md's).
#include <cstdlib>
#include <cstring>
#include <new>

#include "capi/capi.h"
#include "cordon/version.h"

namespace cordon::capi {

// The C values are error_code's + 1 (0 is CORDON_OK): a new error_code gets
// the next C value; these pin the ones already published.
static_assert(static_cast<int>(error_code::parse_error) + 1 == CORDON_E_PARSE_ERROR);
static_assert(static_cast<int>(error_code::enforcement_unavailable) + 1 == CORDON_E_ENFORCEMENT_UNAVAILABLE);
static_assert(static_cast<int>(error_code::command_not_found) + 1 == CORDON_E_COMMAND_NOT_FOUND);
static_assert(static_cast<int>(error_code::usage_error) + 1 == CORDON_E_USAGE_ERROR);
static_assert(static_cast<int>(error_code::invalid_destination) + 1 == CORDON_E_INVALID_DESTINATION);
static_assert(static_cast<int>(error_code::plan_recorded_facts) + 1 == CORDON_E_PLAN_RECORDED_FACTS);

char* copy_string(const std::string& text) noexcept {
  auto* out = static_cast<char*>(std::malloc(text.size() + 1));
  if (out != nullptr) std::memcpy(out, text.c_str(), text.size() + 1);
  return out;
}

nlohmann::ordered_json error_json(const error& err) {
  nlohmann::ordered_json errors = nlohmann::ordered_json::array();
  for (const auto& e : err.errors) errors.push_back({{"location", e.location}, {"reason", e.reason}});
  nlohmann::ordered_json blockers = nlohmann::ordered_json::array();
  for (const auto& b : err.blockers) {
    const char* subject = b.subject == blocker_subject::control   ? "control"
                          : b.subject == blocker_subject::backend ? "backend"
                                                                  : "isolation";
    blockers.push_back({{"subject", subject},
                        {"control", b.subject_name()},
                        {"required", b.required_name()},
                        {"available", b.available_name()},
                        {"reason", b.reason}});
  }
  return {{"code", std::string(to_string(err.code))},
          {"message", err.message},
          {"location", err.location},
          {"errno", err.sys_errno},
          {"errors", errors},
          {"blockers", blockers}};
}

nlohmann::ordered_json embedded(const std::string& text) {
  if (text.empty()) return nullptr;
  auto parsed = nlohmann::ordered_json::parse(text, nullptr, false);
  return parsed.is_discarded() ? nlohmann::ordered_json(text) : parsed;
}

int code_of(const error& err) noexcept { return static_cast<int>(err.code) + 1; }

int fail(const error& err, char** out) noexcept {
  if (out != nullptr) {
    try {
      *out = copy_string(error_json(err).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    } catch (...) {
      *out = nullptr;  // out of memory: the code alone still says what failed
    }
  }
  return code_of(err);
}

int succeed(char** out) noexcept {
  if (out != nullptr) *out = nullptr;
  return CORDON_OK;
}

}  // namespace cordon::capi

extern "C" {

uint32_t cordon_abi_version(void) { return CORDON_ABI_VERSION; }

const char* cordon_library_version(void) {
  static const std::string version(cordon::library_version());
  return version.c_str();
}

const char* cordon_error_code_name(int code) {
  if (code == CORDON_OK) return "ok";
  if (code < 1) return nullptr;
  // to_string() returns views of string literals: NUL-terminated, static.
  auto name = cordon::to_string(static_cast<cordon::error_code>(code - 1));
  if (!cordon::error_code_from_string(name)) return nullptr;  // past the last code
  return name.data();
}

void cordon_string_free(char* text) { std::free(text); }

}  // extern "C"
