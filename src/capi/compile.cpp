// The C API's policies and plans: built-in profiles, compile, the plan as
// JSON (explain) and the host's capabilities (probe). cordon_c.h documents
// each function.
#include <cstdlib>
#include <filesystem>
#include <new>
#include <optional>
#include <string>

#include "capi/capi.h"
#include "cordon/profiles.h"
#include "cordon/selection.h"
#include "core/git_identity.h"
#include "core/shortcuts.h"
#include "core/strict_json.h"

namespace cordon::capi {
namespace {

using json = nlohmann::ordered_json;

// What cordon_compile's options_json may say. Unknown fields are refused: a
// misspelt "workspace" must not compile a policy for another directory.
struct c_options {
  compile_options compile;
  sandbox_preference preference = sandbox_preference::automatic;
  std::optional<json> shortcuts;  // the bindings' shortcuts (core/shortcuts.h)
};

result<c_options> read_options(const char* text) {
  c_options out;
  auto object = options_object(text);
  if (!object) return std::move(object).error_value();
  for (const auto& [key, value] : object->items()) {
    if (key == "shortcuts") {
      out.shortcuts = value;
      continue;
    }
    if (!value.is_string()) return make_error(error_code::usage_error, "options: " + key + " is not a string", "/" + key);
    const auto text_value = value.get<std::string>();
    if (key == "workspace") {
      out.compile.workspace = text_value;
    } else if (key == "home") {
      out.compile.home = text_value;
    } else if (key == "cgroup_parent") {
      out.compile.cgroup_parent = text_value;
    } else if (key == "sandbox") {
      if (text_value == "auto") {
        out.preference = sandbox_preference::automatic;
      } else if (text_value == "require") {
        out.preference = sandbox_preference::require;
      } else if (text_value == "forbid") {
        out.preference = sandbox_preference::forbid;
      } else {
        return make_error(error_code::usage_error, "options: sandbox is auto, require or forbid", "/sandbox");
      }
    } else {
      return make_error(error_code::usage_error, "options: unknown field " + key, "/" + key);
    }
  }
  return out;
}


}  // namespace

result<nlohmann::ordered_json> options_object(const char* text) {
  if (text == nullptr || text[0] == '\0') return nlohmann::ordered_json::object();
  auto parsed = detail::parse_strict_json(text);
  if (!parsed.syntax_ok) {
    return make_error(error_code::parse_error, "options: " + parsed.syntax_error, parsed.syntax_location);
  }
  if (!parsed.duplicates.empty()) {
    return make_error(error_code::usage_error, "options: duplicated field", parsed.duplicates.front().location);
  }
  if (!parsed.root.is_object()) return make_error(error_code::usage_error, "options: not a JSON object");
  return std::move(parsed.root);
}

// Selects the backend and compiles: the one path every plan of the C API
// comes from (capi.h).
result<cordon_plan> compile_policy(const sandbox_policy& policy, const char* options_json) {
  auto options = read_options(options_json);
  if (!options) return std::move(options).error_value();
  sandbox_policy edited = policy;
  if (options->shortcuts) {
    auto applied = apply_shortcuts_json(edited, nlohmann::json::parse(options->shortcuts->dump()),
                                        options->compile.home);
    if (!applied) return std::move(applied).error_value();
  }
  auto backend = select_backend(options->preference);
  if (!backend) return std::move(backend).error_value();
  auto compiled = (*backend)->compile(edited, options->compile);
  if (!compiled) return compiled.failure();
  return cordon_plan{std::move(*backend), std::move(compiled.plan())};
}

result<void> apply_shortcuts_json(sandbox_policy& policy, const nlohmann::json& shortcuts, const std::string& home) {
  bool git_identity = false;
  auto parsed = core::shortcuts_from_json(shortcuts, &git_identity);
  if (!parsed) return std::move(parsed).error_value();
  std::string home_dir = home;
  if (home_dir.empty()) {
    const char* env_home = std::getenv("HOME");
    home_dir = env_home != nullptr ? env_home : "";
  }
  if (git_identity) core::add_git_identity(policy, home_dir);
  return core::apply_shortcuts(policy, *parsed, std::filesystem::current_path().string(), home_dir);
}

result<cordon_plan> compile_plan(const char* policy_json, const char* options_json) {
  if (policy_json == nullptr) return make_error(error_code::usage_error, "no policy JSON");
  if (auto options = read_options(options_json); !options) return std::move(options).error_value();
  auto policy = sandbox_policy_from_json(policy_json);
  if (!policy) return std::move(policy).error_value();
  return compile_policy(*policy, options_json);
}

namespace {

json status_json(const control_status& status) {
  json c = {{"level", std::string(to_string(status.level))}};
  if (!status.mechanism.empty()) c["mechanism"] = status.mechanism;
  if (!status.detail.empty()) c["detail"] = status.detail;
  return c;
}

json contract_json(const enforcement_contract& contract) {
  json out = json::object();
  for (const auto& [which, status] : contract) out[std::string(to_string(which))] = status_json(status);
  return out;
}

json plan_json(const sandbox_plan& plan) {
  const process_policy& p = plan.policy().process;
  json limits = json::object();
  if (p.timeout_ms) limits["timeout_ms"] = *p.timeout_ms;
  if (p.memory_bytes) limits["memory_bytes"] = *p.memory_bytes;
  if (p.cpu_seconds) limits["cpu_seconds"] = *p.cpu_seconds;
  if (p.max_processes) limits["max_processes"] = *p.max_processes;
  return {{"compiles", true},
          {"policy", plan.policy().name},
          {"backend", plan.backend_name()},
          {"platform", plan.platform()},
          {"isolation", std::string(to_string(plan.isolation()))},
          {"workspace", plan.workspace()},
          {"fingerprint", plan_fingerprint(plan)},
          {"controls", contract_json(plan.contract())},
          {"limits", limits},
          {"warnings", plan.warnings()}};
}

std::string dump(const json& j) { return j.dump(2, ' ', false, json::error_handler_t::replace); }

}  // namespace
}  // namespace cordon::capi

using namespace cordon::capi;
using cordon::error_code;
using cordon::make_error;

extern "C" {

int cordon_profile_json(const char* name, char** policy_json, char** error_json) {
  try {
    if (policy_json == nullptr) return fail(make_error(error_code::usage_error, "policy_json is NULL"), error_json);
    *policy_json = nullptr;
    auto text = cordon::builtin_profile_json(name == nullptr || name[0] == '\0' ? cordon::default_profile_name
                                                                                : std::string_view(name));
    if (!text) return fail(text.error_value(), error_json);
    *policy_json = copy_string(*text);
    if (*policy_json == nullptr) throw std::bad_alloc();
    return succeed(error_json);
  } catch (...) {
    return fail(make_error(error_code::launch_failed, "out of memory", {}, ENOMEM), error_json);
  }
}

int cordon_compile(const char* policy_json, const char* options_json, cordon_plan** plan, char** error_json) {
  try {
    if (plan == nullptr) return fail(make_error(error_code::usage_error, "plan is NULL"), error_json);
    *plan = nullptr;
    auto compiled = compile_plan(policy_json, options_json);
    if (!compiled) return fail(compiled.error_value(), error_json);
    *plan = new cordon_plan(std::move(*compiled));
    return succeed(error_json);
  } catch (...) {
    return fail(make_error(error_code::launch_failed, "out of memory", {}, ENOMEM), error_json);
  }
}

void cordon_plan_free(cordon_plan* plan) { delete plan; }

char* cordon_plan_json(const cordon_plan* plan) {
  if (plan == nullptr) return nullptr;
  try {
    return copy_string(dump(cordon::capi::plan_json(*plan->plan)));
  } catch (...) {
    return nullptr;
  }
}

int cordon_explain(const char* policy_json, const char* options_json, char** explain_json, char** error_json) {
  try {
    if (explain_json == nullptr) return fail(make_error(error_code::usage_error, "explain_json is NULL"), error_json);
    *explain_json = nullptr;
    if (policy_json == nullptr) return fail(make_error(error_code::usage_error, "no policy JSON"), error_json);
    // Options that cannot be read are the caller's mistake, not the policy's answer.
    if (auto options = read_options(options_json); !options) return fail(options.error_value(), error_json);
    auto compiled = compile_plan(policy_json, options_json);
    json answer = compiled ? cordon::capi::plan_json(*compiled->plan)
                           : json{{"compiles", false}, {"error", cordon::capi::error_json(compiled.error_value())}};
    *explain_json = copy_string(dump(answer));
    if (*explain_json == nullptr) throw std::bad_alloc();
    return succeed(error_json);
  } catch (...) {
    return fail(make_error(error_code::launch_failed, "out of memory", {}, ENOMEM), error_json);
  }
}

int cordon_probe(char** probe_json, char** error_json) {
  try {
    if (probe_json == nullptr) return fail(make_error(error_code::usage_error, "probe_json is NULL"), error_json);
    const cordon::host_capabilities caps = cordon::make_host_backend()->probe();
    cordon::error carrier;  // the blockers, spelled as in every error JSON
    carrier.blockers = caps.blockers;
    nlohmann::ordered_json blockers = cordon::capi::error_json(carrier)["blockers"];
    nlohmann::ordered_json j = {{"platform", caps.platform},
                                {"backend", caps.backend},
                                {"available", caps.available},
                                {"isolation", std::string(to_string(caps.isolation))},
                                {"best", contract_json(caps.best)},
                                {"blockers", blockers},
                                {"facts", caps.facts}};
    *probe_json = copy_string(dump(j));
    if (*probe_json == nullptr) throw std::bad_alloc();
    return succeed(error_json);
  } catch (...) {
    return fail(make_error(error_code::launch_failed, "out of memory", {}, ENOMEM), error_json);
  }
}

}  // extern "C"
