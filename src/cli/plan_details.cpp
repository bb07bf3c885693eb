// Mounts and environment of a plan, as text: see plan_details.h.
#include "cli/plan_details.h"

#include <algorithm>

#include "core/environment.h"

extern char** environ;

namespace cordon::cli {
namespace {

std::string name_of(const std::string& entry) { return entry.substr(0, entry.find('=')); }

// The variables build_environment points at the broker (either case).
bool is_proxy_variable(const std::string& name) {
  std::string upper = name;
  for (auto& c : upper) c = (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
  return upper == "HTTP_PROXY" || upper == "HTTPS_PROXY" || upper == "ALL_PROXY" || upper == "NO_PROXY";
}

}  // namespace

std::vector<std::string> plan_mounts(const sandbox_plan& plan) {
  std::vector<std::string> out;
  if (plan.payload() == nullptr) return out;
  const std::string text = plan.payload()->describe();
  for (std::size_t start = 0; start < text.size();) {
    auto end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    if (line.rfind("mount ", 0) == 0) out.push_back(line.substr(6));
    start = end + 1;
  }
  return out;
}

std::vector<std::string> plan_environment(const sandbox_plan& plan, const std::vector<std::string>& host) {
  const auto& env = plan.policy().environment;
  std::vector<std::string> out;
  for (const auto& entry : core::build_environment(plan.policy(), host)) {
    const std::string name = name_of(entry);
    const bool set = std::any_of(env.set.begin(), env.set.end(), [&](const auto& s) { return s.first == name; });
    const bool proxy = plan.policy().network.mode == network_mode::filtered && is_proxy_variable(name);
    const char* why = set     ? "(set by the policy)"
                      : proxy ? "(set by cordon: the filtered network's broker)"
                      : env.inherit == environment_inherit::all ? "(inherited: all)"
                                                                : "(inherited: allowed by name)";
    out.push_back(name + "  " + why);
  }
  return out;
}

std::vector<std::string> host_environment() {
  std::vector<std::string> out;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) out.emplace_back(*e);
  return out;
}

}  // namespace cordon::cli
