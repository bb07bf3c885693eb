// src/windows/linux_layout.cpp — see linux_layout.h.
#include "windows/linux_layout.h"

#include <algorithm>

#include "windows/paths.h"

namespace cordon::windows::detail {
namespace {

bool has_drive(std::string_view p) {
  return p.size() >= 3 && ((p[0] >= 'A' && p[0] <= 'Z') || (p[0] >= 'a' && p[0] <= 'z')) && p[1] == ':' &&
         (p[2] == '\\' || p[2] == '/');
}

// A PATH written for POSIX: it starts with '/' and no ';'-separated entry has a drive.
bool is_posix_path_list(const std::string& value) {
  if (value.empty() || value.front() != '/') return false;
  std::size_t start = 0;
  while (start <= value.size()) {
    std::size_t end = value.find(';', start);
    if (end == std::string::npos) end = value.size();
    if (has_drive(std::string_view(value).substr(start, end - start))) return false;
    start = end + 1;
  }
  return true;
}

bool names(const environment_policy& policy, std::string_view name) {
  const auto same = [&](const std::string& n) { return equals_ignoring_case(n, name); };
  return std::any_of(policy.allow.begin(), policy.allow.end(), same) ||
         std::any_of(policy.set.begin(), policy.set.end(), [&](const auto& s) { return same(s.first); });
}

}  // namespace

environment_policy windows_reading_of(const environment_policy& policy, const std::optional<std::string>& run_tmp,
                                      const std::string& system_root, std::vector<std::string>& warnings) {
  environment_policy out = policy;
  bool tmpdir_rerooted = false;
  for (auto& [name, value] : out.set) {
    if (equals_ignoring_case(name, "PATH") && is_posix_path_list(value) && has_drive(system_root)) {
      const std::string windows = join(system_root, "System32") + ";" + system_root;
      warnings.push_back("environment: " + name + " names POSIX directories (" + value +
                         "), which Windows has not; on Windows it is set to the system directories " + windows);
      value = windows;
    } else if (value == "/tmp" && run_tmp) {
      warnings.push_back("environment: " + name +
                         " names /tmp, the private /tmp of Linux; on Windows it is set to the per-run directory " +
                         *run_tmp);
      value = *run_tmp;
      tmpdir_rerooted = tmpdir_rerooted || equals_ignoring_case(name, "TMPDIR");
    }
  }
  if (tmpdir_rerooted) {
    for (const char* name : {"TEMP", "TMP"}) {
      if (names(policy, name)) continue;
      out.set.emplace_back(name, *run_tmp);
      warnings.push_back(std::string("environment: ") + name +
                         " (where Windows programs look for TMPDIR) is set to the per-run directory " + *run_tmp);
    }
  }
  return out;
}

}  // namespace cordon::windows::detail
