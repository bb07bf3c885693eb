// src/core/result.cpp — spelling and description of errors.
#include "cordon/result.h"

#include <system_error>

namespace cordon {

std::string_view to_string(error_code code) noexcept {
  switch (code) {
    case error_code::parse_error: return "parse_error";
    case error_code::invalid_policy: return "invalid_policy";
    case error_code::unknown_profile: return "unknown_profile";
    case error_code::backend_unavailable: return "backend_unavailable";
    case error_code::unsupported_platform: return "unsupported_platform";
    case error_code::isolation_insufficient: return "isolation_insufficient";
    case error_code::enforcement_unavailable: return "enforcement_unavailable";
    case error_code::plan_null: return "plan_null";
    case error_code::plan_foreign: return "plan_foreign";
    case error_code::plan_other_platform: return "plan_other_platform";
    case error_code::plan_stale: return "plan_stale";
    case error_code::command_not_found: return "command_not_found";
    case error_code::command_not_executable: return "command_not_executable";
    case error_code::launch_failed: return "launch_failed";
    case error_code::io_error: return "io_error";
    case error_code::usage_error: return "usage_error";
    case error_code::invalid_destination: return "invalid_destination";
    case error_code::plan_recorded_facts: return "plan_recorded_facts";
  }
  return "unknown_error";
}

std::optional<error_code> error_code_from_string(std::string_view name) noexcept {
  for (int i = 0; i <= static_cast<int>(error_code::plan_recorded_facts); ++i) {
    if (to_string(static_cast<error_code>(i)) == name) return static_cast<error_code>(i);
  }
  return std::nullopt;
}

std::string error::describe() const {
  // A policy error's message may list further problems on later lines; the
  // location belongs to the first line, so it is attached there.
  const auto newline = message.find('\n');
  std::string first = message.substr(0, newline);
  std::string out(to_string(code));
  out += ": ";
  out += first;
  if (!location.empty()) {
    out += " (at ";
    out += location;
    out += ')';
  }
  if (sys_errno != 0) {
    out += ": ";
    // std::generic_category().message() is thread-safe, unlike strerror().
    out += std::error_code(sys_errno, std::generic_category()).message();
  }
  if (newline != std::string::npos) out += message.substr(newline);
  return out;
}

error make_error(error_code code, std::string message, std::string location, int errno_value) {
  error e;
  e.code = code;
  e.message = std::move(message);
  e.location = std::move(location);
  e.sys_errno = errno_value;
  return e;
}

}  // namespace cordon
