// The command's environment (docs/policy.md, "environment"; docs/network.md
// for the proxy variables of filtered mode). Portable: every backend's
// launcher passes exactly this.
#include "core/environment.h"

#include <algorithm>
#include <cctype>

#include "core/broker_endpoint.h"

namespace cordon::core {
namespace {

std::string name_of(const std::string& entry) { return entry.substr(0, entry.find('=')); }

std::string ascii_lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

const std::string* explicit_value(const environment_policy& env, const std::string& name) {
  for (const auto& entry : env.set) {
    if (entry.first == name) return &entry.second;
  }
  return nullptr;
}

}  // namespace

std::vector<std::string> build_environment(const sandbox_policy& policy,
                                           const std::vector<std::string>& host_environment) {
  const auto& env = policy.environment;
  std::vector<std::string> out;
  auto present = [&](const std::string& name) {
    return std::any_of(out.begin(), out.end(), [&](const std::string& e) { return name_of(e) == name; });
  };
  for (const auto& entry : host_environment) {
    std::string name = name_of(entry);
    if (name.empty() || name.size() == entry.size()) continue;
    bool wanted = env.inherit == environment_inherit::all ||
                  std::find(env.allow.begin(), env.allow.end(), name) != env.allow.end();
    if (wanted && !present(name)) out.push_back(entry);
  }
  auto set = [&](const std::string& name, const std::string& value) {
    auto it = std::find_if(out.begin(), out.end(), [&](const std::string& e) { return name_of(e) == name; });
    if (it != out.end()) out.erase(it);
    out.push_back(name + "=" + value);
  };
  // Filtered network: the broker is the only way out, and these point every
  // proxy-aware tool at it. They override inherited values (a host proxy is
  // unreachable inside); an explicit environment.set still wins. NO_PROXY
  // is empty so no destination is sent around the broker.
  if (policy.network.mode == network_mode::filtered) {
    const std::string http = "http://127.0.0.1:" + std::to_string(broker::broker_port);
    const std::string socks = "socks5h://127.0.0.1:" + std::to_string(broker::broker_port);
    for (const auto& [name, value] : {std::pair<std::string, std::string>{"HTTP_PROXY", http},
                                      {"HTTPS_PROXY", http},
                                      {"ALL_PROXY", socks},
                                      {"NO_PROXY", ""}}) {
      set(name, value);
      set(ascii_lower(name), value);
    }
  }
  // TLS termination (docs/tls.md): tools trust the run's CA through these;
  // a credential's placeholder variable holds no secret. env.set still wins.
  if (policy.network.mode == network_mode::filtered &&
      std::any_of(policy.network.rules.begin(), policy.network.rules.end(),
                  [](const network_rule& r) { return r.tls == tls_mode::terminate; })) {
    for (const char* name : broker::sandbox_ca_variables) set(name, broker::sandbox_ca_bundle_path);
    for (const auto& c : policy.network.credentials)
      if (!c.placeholder_env.empty()) set(c.placeholder_env, "cordon-placeholder");
  }
  for (const auto& entry : env.set) set(entry.first, entry.second);
  // Tools read either case (curl and python prefer the lowercase one): an
  // explicit value for one case of a proxy variable is given to both.
  if (policy.network.mode == network_mode::filtered) {
    for (const char* name : {"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"}) {
      const std::string upper = name;
      const std::string lower = ascii_lower(upper);
      const std::string* u = explicit_value(env, upper);
      const std::string* l = explicit_value(env, lower);
      if (u && !l) set(lower, *u);
      if (l && !u) set(upper, *l);
    }
  }
  return out;
}

}  // namespace cordon::core
