// src/windows/plan.cpp — plan spellings, per-request limits, the process token.
#include "cordon/windows/plan.h"

#include <algorithm>
#include <chrono>
#include <random>

namespace cordon::windows {

std::string_view to_string(trustee t) noexcept {
  switch (t) {
    case trustee::appcontainer: return "appcontainer";
    case trustee::all_application_packages: return "all_application_packages";
    case trustee::all_restricted_application_packages: return "all_restricted_application_packages";
  }
  return "unknown";
}

std::string_view well_known_sid(trustee t) noexcept {
  switch (t) {
    case trustee::all_application_packages: return "S-1-15-2-1";
    case trustee::all_restricted_application_packages: return "S-1-15-2-2";
    case trustee::appcontainer: return "";
  }
  return "";
}

std::string_view to_string(acl_role role) noexcept {
  switch (role) {
    case acl_role::readable: return "readable";
    case acl_role::writable: return "writable";
    case acl_role::protected_read_only: return "protected_read_only";
    case acl_role::denied: return "denied";
  }
  return "unknown";
}

std::string_view to_string(mandatory_label label) noexcept {
  switch (label) {
    case mandatory_label::none: return "none";
    case mandatory_label::low: return "low";
    case mandatory_label::medium: return "medium";
  }
  return "unknown";
}

std::string_view label_sid(mandatory_label label) noexcept {
  switch (label) {
    case mandatory_label::low: return "S-1-16-4096";
    case mandatory_label::medium: return "S-1-16-8192";
    case mandatory_label::none: return "";
  }
  return "";
}

job_limits limits_for_request(const windows_plan& plan, const request_limits& request) {
  job_limits out = plan.limits();
  const auto lower = [](auto& bound, std::optional<std::uint64_t> asked, std::uint64_t scale) {
    if (!asked) return;
    using T = typename std::remove_reference_t<decltype(bound)>::value_type;
    const std::uint64_t cap = std::numeric_limits<T>::max() / scale;
    const T value = static_cast<T>(std::min(*asked, cap) * scale);
    bound = bound ? std::min(*bound, value) : value;
  };
  lower(out.active_processes, request.max_processes, 1);
  lower(out.job_memory_bytes, request.memory_bytes, 1);
  lower(out.cpu_time_100ns, request.cpu_seconds, 10'000'000);
  lower(out.timeout_ms, request.timeout_ms, 1);
  return out;
}

std::string windows_plan::describe() const {
  std::string text;
  for (const auto& c : acl_changes_) {
    text += "acl " + std::string(to_string(c.role)) + " " + c.path;
    if (c.label != mandatory_label::none) text += " label " + std::string(to_string(c.label));
    text += "\n";
  }
  text += std::string("appcontainer ") + (token_.appcontainer ? "yes" : "no") + "\n";
  if (token_.low_integrity) {
    text += "low_integrity yes restricting";
    for (const auto& sid : token_.restricting_sids) text += " " + sid;
    text += "\n";
  }
  const auto opt = [](const auto& v) { return v ? std::to_string(*v) : std::string("-"); };
  text += "job processes " + opt(limits_.active_processes) + " memory " + opt(limits_.job_memory_bytes) + " cpu_100ns " +
          opt(limits_.cpu_time_100ns) + " timeout_ms " + opt(limits_.timeout_ms) + "\n";
  for (const auto& [name, value] : environment_.entries) text += "env " + name + "\n";
  if (command_) text += "command " + command_->application + "\n";
  return text;
}

std::uint64_t windows_process_token() noexcept {
  static const std::uint64_t token = [] {
    std::uint64_t value = 0;
    try {
      std::random_device device;
      value = (static_cast<std::uint64_t>(device()) << 32) ^ device();
    } catch (...) {
      // No entropy source: the clock still differs between processes.
    }
    value ^= static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    return value | 1;
  }();
  return token;
}

}  // namespace cordon::windows
