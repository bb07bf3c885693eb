// The shortcuts of `cordon run` and the bindings: see shortcuts.h.
#include "core/shortcuts.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <limits>
#include <optional>

#include "core/caches.h"
#include "core/host_syntax.h"
#include "core/rounding.h"
#include "cordon/validation.h"

namespace cordon::core {
namespace {

// Absolute against cwd (lexically), unless it starts with a root token.
std::string absolute(const std::string& path, const std::string& cwd) {
  if (path.front() == '/' || path.front() == '{') return path;
  return normalize_path_lexically(cwd + "/" + path);
}

void add_paths(std::vector<std::string>& list, const std::vector<std::string>& paths, const std::string& cwd) {
  for (const auto& p : paths) {
    std::string path = absolute(p, cwd);
    if (std::find(list.begin(), list.end(), path) == list.end()) list.push_back(std::move(path));
  }
}

// --ro and --rw grant access to what exists: a path that does not exist would
// give no access at all (a typo, unexplained), so it is refused. Token paths
// ({workspace}/...) are resolved later, by compile.
result<void> check_exists(const char* flag, const std::vector<std::string>& paths, const std::string& cwd) {
  for (const auto& p : paths) {
    const std::string path = absolute(p, cwd);
    struct stat st {};
    if (path.front() == '{' || ::stat(path.c_str(), &st) == 0) continue;
    if (errno == ENOENT || errno == ENOTDIR) {
      return make_error(error_code::usage_error,
                        std::string(flag) + " " + p + ": " + path +
                            " does not exist; create it first or check the spelling (a path that does not exist "
                            "would give no access)");
    }
    return make_error(error_code::usage_error, std::string(flag) + " " + p + ": cannot check " + path, {}, errno);
  }
  return ok;
}

}  // namespace

bool policy_shortcuts::empty() const {
  return readable.empty() && writable.empty() && denied.empty() && network.empty() && allow_hosts.empty() &&
         env_allow.empty() &&
         env_set.empty() && memory.empty() && !max_processes && !cpu_seconds && !timeout_seconds && accept.empty() &&
         !allow_local_binding && caches.empty() && publish.empty();
}

result<std::uint64_t> parse_size(const std::string& text) {
  const auto bad = [&text](const std::string& why) {
    return make_error(error_code::usage_error, "size '" + text + "': " + why);
  };
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0) return bad("must start with a number of bytes, e.g. 512M");
  const std::string suffix = text.substr(digits);
  unsigned shift = 0;
  if (suffix.size() > 1) return bad("unknown suffix '" + suffix + "' (use K, M, G or T)");
  if (!suffix.empty()) {
    switch (suffix[0]) {
      case 'k': case 'K': shift = 10; break;
      case 'm': case 'M': shift = 20; break;
      case 'g': case 'G': shift = 30; break;
      case 't': case 'T': shift = 40; break;
      default: return bad("unknown suffix '" + suffix + "' (use K, M, G or T)");
    }
  }
  constexpr std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < digits; ++i) {
    const auto d = static_cast<std::uint64_t>(text[i] - '0');
    if (value > (max - d) / 10) return bad("larger than 2^64-1 bytes");
    value = value * 10 + d;
  }
  if (value > (max >> shift)) return bad("larger than 2^64-1 bytes");
  value <<= shift;
  if (value == 0) return bad("must be at least 1 byte");
  return value;
}

result<network_rule> parse_host_port(const std::string& text) {
  network_rule rule;
  rule.action = rule_action::allow;
  std::string port;
  if (!text.empty() && text[0] == '[') {  // [v6] or [v6]:port
    const auto close = text.find(']');
    if (close == std::string::npos || (close + 1 < text.size() && text[close + 1] != ':')) {
      return make_error(error_code::usage_error, "--allow-host " + text + ": expected [IPv6] or [IPv6]:PORT");
    }
    rule.host = text.substr(1, close - 1);
    if (close + 1 < text.size()) port = text.substr(close + 2);
  } else if (std::count(text.begin(), text.end(), ':') == 1) {
    rule.host = text.substr(0, text.find(':'));
    port = text.substr(text.find(':') + 1);
  } else {
    rule.host = text;  // a name, or a bare IPv6 literal (no port)
  }
  if (!port.empty() || text.back() == ':') {
    char* end = nullptr;
    const long value = std::strtol(port.c_str(), &end, 10);
    if (port.empty() || *end != '\0' || value < 1 || value > 65535) {
      return make_error(error_code::usage_error, "--allow-host " + text + ": PORT must be 1..65535");
    }
    rule.port = static_cast<int>(value);
  }
  // Checked here with validation's own grammar, so that the error names the flag the user typed
  // rather than a /network/rules/N/host they never wrote.
  if (const detail::parsed_host host = detail::parse_host_pattern(rule.host); !host.ok()) {
    return make_error(error_code::usage_error, "--allow-host " + text + ": " + host.reason);
  }
  return rule;
}

namespace {

// How far a requirement of `level` relaxes: 2 enforced, 1 partial, 0
// unverified, -1 not_enforced; nullopt for a level --accept all cannot take.
std::optional<int> relaxation_rank(enforcement_level level) {
  switch (level) {
    case enforcement_level::enforced: return 2;
    case enforcement_level::partial: return 1;
    case enforcement_level::unverified: return 0;
    case enforcement_level::not_enforced: return -1;
    default: return std::nullopt;
  }
}

// --accept all=LEVEL: LEVEL for every required control it relaxes. False for
// a LEVEL that relaxes nothing.
bool accept_everywhere(sandbox_policy& policy, enforcement_level level) {
  const auto rank = relaxation_rank(level);
  if (!rank || *rank == 2) return false;
  for (const auto& [which, required] : required_enforcement(policy)) {
    const auto have = relaxation_rank(required);
    if (have && *have > *rank) policy.enforcement[which] = level;
  }
  return true;
}

}  // namespace

result<published_port> parse_publish(const std::string& text) {
  const auto number = [](const std::string& digits) -> int {
    const auto digit = [](char c) { return c >= '0' && c <= '9'; };
    if (digits.empty() || digits.size() > 5 || !std::all_of(digits.begin(), digits.end(), digit)) return 0;
    const int value = std::stoi(digits);
    return value <= 65535 ? value : 0;
  };
  const auto colon = text.find(':');
  published_port port;
  port.port = number(colon == std::string::npos ? text : text.substr(colon + 1));
  port.host_port = colon == std::string::npos ? port.port : number(text.substr(0, colon));
  if (port.port == 0 || port.host_port == 0) {
    return make_error(error_code::usage_error,
                      "--publish " + text + ": expected PORT or HOSTPORT:PORT, each from 1 to 65535");
  }
  return port;
}

result<void> apply_shortcuts(sandbox_policy& policy, const policy_shortcuts& flags, const std::string& cwd,
                             const std::string& home) {
  auto& fs = policy.filesystem;
  if (auto checked = check_exists("--ro", flags.readable, cwd); !checked) return checked;
  if (auto checked = check_exists("--rw", flags.writable, cwd); !checked) return checked;
  add_paths(fs.readable, flags.readable, cwd);
  add_paths(fs.writable, flags.writable, cwd);
  add_paths(fs.denied, flags.denied, cwd);

  if (!flags.network.empty()) {
    auto& net = policy.network;
    net.mode = flags.network == "any" ? network_mode::unrestricted : network_mode::denied;
    if (net.mode == network_mode::unrestricted) net.allow_local_binding = false;
    net.rules.clear();
    net.default_action = rule_action::deny;
    policy.enforcement.erase(control::network_filter);
  }

  if (!flags.allow_hosts.empty()) {
    auto& net = policy.network;
    if (net.mode != network_mode::filtered) {
      net.mode = network_mode::filtered;
      net.rules.clear();
      net.default_action = rule_action::deny;
    }
    for (const auto& text : flags.allow_hosts) {
      auto rule = parse_host_port(text);
      if (!rule) return std::move(rule).error_value();
      net.rules.push_back(std::move(*rule));
    }
  }

  if (flags.allow_local_binding) policy.network.allow_local_binding = true;
  for (const auto& text : flags.publish) {
    auto port = parse_publish(text);
    if (!port) return std::move(port).error_value();
    policy.network.publish.push_back(*port);
    if (policy.network.mode == network_mode::filtered) policy.network.allow_local_binding = true;
  }

  auto& env = policy.environment;
  for (const auto& name : flags.env_allow) {
    if (std::find(env.allow.begin(), env.allow.end(), name) == env.allow.end()) env.allow.push_back(name);
    // A value the policy sets would win over the host's (core/environment.cpp): asking for the host's drops it.
    std::erase_if(env.set, [&](const auto& entry) { return entry.first == name; });
  }
  for (const auto& assignment : flags.env_set) {
    const auto eq = assignment.find('=');
    std::string name = assignment.substr(0, eq);
    std::string value = assignment.substr(eq + 1);
    auto it = std::find_if(env.set.begin(), env.set.end(), [&](const auto& entry) { return entry.first == name; });
    if (it != env.set.end()) {
      it->second = std::move(value);
    } else {
      env.set.emplace_back(std::move(name), std::move(value));
    }
  }

  if (auto cached = apply_caches(policy, flags.caches, home); !cached) return cached;

  auto& proc = policy.process;
  if (!flags.memory.empty()) {
    auto size = parse_size(flags.memory);
    if (!size) return std::move(size).error_value();
    proc.memory_bytes = *size;
  }
  if (flags.max_processes) proc.max_processes = *flags.max_processes;
  if (flags.cpu_seconds) proc.cpu_seconds = *flags.cpu_seconds;
  if (flags.timeout_seconds) proc.timeout_ms = detail::round_milliseconds(*flags.timeout_seconds * 1000.0);

  for (const auto& entry : flags.accept) {
    const auto eq = entry.find('=');
    const std::optional<enforcement_level> level =
        eq == std::string::npos ? std::nullopt : enforcement_level_from_string(entry.substr(eq + 1));
    if (!level) return make_error(error_code::usage_error, "--accept " + entry + ": must be CONTROL=LEVEL");
    const enforcement_level accepted = *level;
    if (entry.compare(0, eq, "all") == 0) {
      if (!accept_everywhere(policy, accepted)) {
        return make_error(error_code::usage_error,
                          "--accept " + entry + ": all takes partial, unverified or not_enforced");
      }
      continue;
    }
    const auto which = control_from_string(entry.substr(0, eq));
    if (!which) return make_error(error_code::usage_error, "--accept " + entry + ": must be CONTROL=LEVEL");
    policy.enforcement[*which] = accepted;
  }
  return ok;
}

namespace {

result<std::vector<std::string>> strings_at(const nlohmann::json& value, const std::string& key) {
  const auto bad = make_error(error_code::usage_error, "shortcuts: " + key + " is a list of strings", "/shortcuts/" + key);
  if (!value.is_array()) return bad;
  std::vector<std::string> out;
  for (const auto& item : value) {
    if (!item.is_string()) return bad;
    out.push_back(item.get<std::string>());
  }
  return out;
}

result<void> check_name(const std::string& name, const std::string& key) {
  if (name.empty() || name.find('=') != std::string::npos || name.find('\0') != std::string::npos) {
    return make_error(error_code::usage_error, "shortcuts: '" + name + "' is not a variable name (empty, '=' or NUL)",
                      "/shortcuts/" + key);
  }
  return ok;
}

}  // namespace

result<policy_shortcuts> shortcuts_from_json(const nlohmann::json& j, bool* git_identity) {
  policy_shortcuts out;
  if (git_identity != nullptr) *git_identity = false;
  if (!j.is_object()) return make_error(error_code::usage_error, "shortcuts: not a JSON object", "/shortcuts");
  for (const auto& [key, value] : j.items()) {
    if (key == "allow_local_binding" || key == "git_identity") {
      if (!value.is_boolean()) {
        return make_error(error_code::usage_error, "shortcuts: " + key + " is true or false", "/shortcuts/" + key);
      }
      if (key == "allow_local_binding") out.allow_local_binding = value.get<bool>();
      if (key == "git_identity" && git_identity != nullptr) *git_identity = value.get<bool>();
      continue;
    }
    if (key == "setenv") {
      if (!value.is_object()) {
        return make_error(error_code::usage_error, "shortcuts: setenv is {NAME: VALUE}", "/shortcuts/setenv");
      }
      for (const auto& [name, v] : value.items()) {
        if (auto checked = check_name(name, key); !checked) return std::move(checked).error_value();
        if (!v.is_string() || v.get<std::string>().find('\0') != std::string::npos) {
          return make_error(error_code::usage_error, "shortcuts: setenv values are strings without NUL",
                            "/shortcuts/setenv/" + name);
        }
        out.env_set.push_back(name + "=" + v.get<std::string>());
      }
      continue;
    }
    std::vector<std::string>* list = key == "ro"            ? &out.readable
                                     : key == "rw"          ? &out.writable
                                     : key == "deny"        ? &out.denied
                                     : key == "allow_hosts" ? &out.allow_hosts
                                     : key == "env"         ? &out.env_allow
                                     : key == "caches"      ? &out.caches
                                                            : nullptr;
    if (list == nullptr) return make_error(error_code::usage_error, "shortcuts: unknown field " + key, "/shortcuts/" + key);
    auto items = strings_at(value, key);
    if (!items) return std::move(items).error_value();
    for (const auto& item : *items) {
      if (key == "env") {
        if (auto checked = check_name(item, key); !checked) return std::move(checked).error_value();
      } else if (item.empty() || item.find('\0') != std::string::npos) {
        return make_error(error_code::usage_error, "shortcuts: an empty value or a NUL", "/shortcuts/" + key);
      }
    }
    *list = std::move(*items);
  }
  return out;
}

}  // namespace cordon::core
