// environment.cpp — build_environment() (environment.h).
#include "macos/environment.h"

#include <algorithm>

namespace cordon::macos_impl {

std::vector<std::string> build_environment(const environment_spec& spec, const std::vector<std::string>& host,
                                           const std::string& run_tmp) {
  std::vector<std::pair<std::string, std::string>> env;
  const auto put = [&env](const std::string& name, const std::string& value) {
    auto it = std::find_if(env.begin(), env.end(), [&](const auto& e) { return e.first == name; });
    if (it == env.end()) {
      env.emplace_back(name, value);
    } else {
      it->second = value;
    }
  };
  for (const auto& entry : host) {
    const auto eq = entry.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    const std::string name = entry.substr(0, eq);
    const bool wanted = spec.inherit == environment_inherit::all ||
                        std::find(spec.allow.begin(), spec.allow.end(), name) != spec.allow.end();
    if (wanted) put(name, entry.substr(eq + 1));
  }
  for (const auto& [name, value] : spec.set) put(name, value);
  for (auto& [name, value] : env) {
    if (std::find(spec.rerooted.begin(), spec.rerooted.end(), name) == spec.rerooted.end()) continue;
    if (value == "/tmp") {
      value = run_tmp;
    } else if (value.rfind("/tmp/", 0) == 0) {
      value = run_tmp + value.substr(4);
    }
  }
  std::vector<std::string> out;
  out.reserve(env.size());
  for (const auto& [name, value] : env) out.push_back(name + "=" + value);
  return out;
}

}  // namespace cordon::macos_impl
