// src/core/validation.cpp — semantic checks and lexical normalization of a
// sandbox_policy (DESIGN.md, "Validation and normalization").
//
// Every problem is reported (not just the first) with a JSON pointer into the
// policy's JSON shape, so a host can fix a policy in one pass. Nothing here
// touches the filesystem.
#include "cordon/validation.h"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

#include "core/json_pointer.h"

namespace cordon {
namespace {

using detail::is_valid_utf8;
using detail::pointer_join;

constexpr std::array<std::string_view, 3> root_tokens = {token_workspace, token_home,
                                                         token_run_tmp};

bool is_root_token(std::string_view s) {
  for (auto t : root_tokens) {
    if (s == t) return true;
  }
  return false;
}

std::string_view first_component(std::string_view path) {
  return path.substr(0, path.find('/'));
}

// Calls f(component) for every component of `rest` ('/'-separated).
template <class F>
void for_each_component(std::string_view rest, F&& f) {
  while (!rest.empty()) {
    const auto slash = rest.find('/');
    f(rest.substr(0, slash));
    if (slash == std::string_view::npos) break;
    rest.remove_prefix(slash + 1);
  }
}

// Calls f(label) for every '.'-separated label, empty ones included.
template <class F>
void for_each_component_dotted(std::string_view name, F&& f) {
  for (;;) {
    const auto dot = name.find('.');
    f(name.substr(0, dot));
    if (dot == std::string_view::npos) return;
    name.remove_prefix(dot + 1);
  }
}

// ---------------------------------------------------------------------------
// Paths

// True when ".." would leave the directory a root token stands for. For "/"
// that is harmless ("/.." is "/"), but "{home}/../x" names something outside
// the home directory that normalization would silently turn into "{home}/x".
bool climbs_above_token(std::string_view path) {
  if (!is_root_token(first_component(path))) return false;
  const auto slash = path.find('/');
  if (slash == std::string_view::npos) return false;
  int depth = 0;
  bool climbed = false;
  for_each_component(path.substr(slash + 1), [&](std::string_view c) {
    if (c.empty() || c == ".") return;
    if (c == "..") {
      if (--depth < 0) climbed = true;
    } else {
      ++depth;
    }
  });
  return climbed;
}

// Why `path` (an entry of one of the filesystem lists) is unacceptable, or
// nothing. `normalized` is its lexical normal form.
std::optional<std::string> path_problem(const std::string& path, const std::string& normalized,
                                        bool run_tmp_allowed) {
  if (path.empty()) return "path is empty";
  if (path.find('\0') != std::string::npos) return "path contains a NUL byte";
  if (!is_valid_utf8(path)) return "path is not valid UTF-8";

  std::string_view rest = path;
  if (path.front() == '{') {
    const auto first = first_component(path);
    if (!is_root_token(first)) {
      for (auto t : root_tokens) {
        if (first.starts_with(t)) {
          return "root token " + std::string(t) + " must be the whole first path component";
        }
      }
      if (first.back() == '}') return "unknown root token " + std::string(first);
      return "relative path; a path must be absolute or start with {workspace}, {home} or "
             "{run_tmp}";
    }
    if (first == token_run_tmp) {
      if (!run_tmp_allowed) return "{run_tmp} is only allowed in /filesystem/writable";
      if (normalized != token_run_tmp) return "{run_tmp} must stand alone (nothing after it)";
    }
    if (climbs_above_token(path)) {
      return "\"..\" climbs above " + std::string(first);
    }
    rest.remove_prefix(first.size());
  } else if (path.front() != '/') {
    return "relative path; a path must be absolute or start with {workspace}, {home} or "
           "{run_tmp}";
  }
  for (auto t : root_tokens) {
    if (rest.find(t) != std::string_view::npos) {
      return "root token " + std::string(t) + " is only allowed as the first path component";
    }
  }
  return std::nullopt;
}

std::vector<std::string> check_paths(const std::vector<std::string>& in, const std::string& at,
                                     bool run_tmp_allowed, std::vector<policy_error>& errors) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < in.size(); ++i) {
    std::string normalized = normalize_path_lexically(in[i]);
    if (auto problem = path_problem(in[i], normalized, run_tmp_allowed)) {
      errors.push_back({pointer_join(at, i), std::move(*problem)});
      continue;
    }
    if (seen.insert(normalized).second) out.push_back(std::move(normalized));
  }
  return out;
}

// ---------------------------------------------------------------------------
// Hosts

std::optional<std::string> dns_name_problem(std::string_view name) {
  if (name.empty()) return "host name is empty";
  if (name.size() > 253) return "host name is longer than 253 characters";
  std::optional<std::string> problem;
  std::string_view last;
  for_each_component_dotted(name, [&](std::string_view label) {
    last = label;
    if (problem) return;
    if (label.empty()) {
      problem = "host name has an empty label";
    } else if (label.size() > 63) {
      problem = "host name label is longer than 63 characters";
    } else if (!std::all_of(label.begin(), label.end(), [](char c) {
                 return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
               })) {
      problem =
          "host name may contain only letters, digits, hyphens and dots (write "
          "international names in punycode, xn--)";
    } else if (label.front() == '-' || label.back() == '-') {
      problem = "host name label may not start or end with a hyphen";
    }
  });
  if (problem) return problem;
  // No top-level domain is numeric; such a name is a malformed IP address
  // ("1.2.3", "256.1.1.1") that resolvers might still interpret as one.
  bool numeric = true;
  for (char c : last) numeric = numeric && c >= '0' && c <= '9';
  if (numeric) return "not a valid IPv4 address or host name";
  return std::nullopt;
}

std::optional<std::string> canonical_ipv6(const std::string& s) {
  in6_addr addr{};
  if (inet_pton(AF_INET6, s.c_str(), &addr) != 1) return std::nullopt;
  char buf[INET6_ADDRSTRLEN] = {};
  if (inet_ntop(AF_INET6, &addr, buf, sizeof buf) == nullptr) return std::nullopt;
  return std::string(buf);
}

bool is_ipv4(const std::string& s) {
  in_addr addr{};
  return inet_pton(AF_INET, s.c_str(), &addr) == 1;
}

constexpr std::string_view port_in_host =
    "host must not carry a port; use the rule's \"port\" field";

struct host_result {
  std::string host;    // normalized, when reason is empty
  std::string reason;  // why the pattern is rejected
};

host_result check_host(const std::string& raw) {
  const auto bad = [](std::string reason) { return host_result{{}, std::move(reason)}; };
  if (raw.empty()) return bad("host is empty");
  if (raw.find('\0') != std::string::npos) return bad("host contains a NUL byte");
  if (raw.find("://") != std::string::npos) {
    return bad("host must be a bare host, not a URL (no scheme)");
  }
  if (raw.find('@') != std::string::npos) return bad("host must be a bare host (no userinfo)");
  if (raw.find('/') != std::string::npos) return bad("host must be a bare host (no path)");
  if (raw.find('?') != std::string::npos) return bad("host must be a bare host (no query)");
  if (raw.find('#') != std::string::npos) return bad("host must be a bare host (no fragment)");

  if (raw.front() == '[') {
    const auto close = raw.find(']');
    if (close == std::string::npos) return bad("unterminated '[' in IPv6 address");
    const std::string after = raw.substr(close + 1);
    if (!after.empty()) {
      return bad(after.front() == ':' ? std::string(port_in_host)
                                      : "unexpected text after ']' in IPv6 address");
    }
    if (auto v6 = canonical_ipv6(raw.substr(1, close - 1))) return {*v6, {}};
    return bad("invalid IPv6 address");
  }
  if (raw.find(':') != std::string::npos) {
    if (auto v6 = canonical_ipv6(raw)) return {*v6, {}};
    // One colon and digits after it: a name or IPv4 address with a port.
    const auto colon = raw.find(':');
    if (raw.find(':', colon + 1) == std::string::npos) return bad(std::string(port_in_host));
    return bad("invalid IPv6 address");
  }

  std::string h;
  h.reserve(raw.size());
  for (char c : raw) {
    const auto u = static_cast<unsigned char>(c);
    h += u < 0x80 ? static_cast<char>(std::tolower(u)) : c;
  }
  if (h.back() == '.') h.pop_back();  // "example.com." is the same name
  if (is_ipv4(h)) return {h, {}};
  if (h == "*") return {h, {}};

  std::string_view prefix;
  if (h.starts_with("**.")) {
    prefix = "**.";
  } else if (h.starts_with("*.")) {
    prefix = "*.";
  }
  const std::string_view base = std::string_view(h).substr(prefix.size());
  if (base.find('*') != std::string_view::npos) {
    return bad("wildcard is only allowed as the whole first label (*, *.name or **.name)");
  }
  if (auto problem = dns_name_problem(base)) return bad(std::move(*problem));
  return {h, {}};
}

void check_network(const network_policy& in, network_policy& out,
                   std::vector<policy_error>& errors) {
  const std::string at = "/network";
  if (in.mode != network_mode::filtered) {
    if (!in.rules.empty()) {
      errors.push_back({at + "/rules", "rules are only allowed when mode is \"filtered\""});
    }
    if (in.default_action != rule_action::deny) {
      errors.push_back(
          {at + "/default_action", "default_action must be \"deny\" unless mode is \"filtered\""});
    }
  }
  if (in.mode == network_mode::unrestricted && in.allow_local_binding) {
    errors.push_back({at + "/allow_local_binding",
                      "allow_local_binding is meaningless when mode is \"unrestricted\""});
  }

  // Same normalized host and port (absent is its own value) -> first index.
  std::map<std::pair<std::string, std::optional<int>>, std::size_t> first_rule;
  out.rules.clear();
  for (std::size_t i = 0; i < in.rules.size(); ++i) {
    const network_rule& rule = in.rules[i];
    const std::string here = pointer_join(at + "/rules", i);
    bool ok = true;
    host_result host = check_host(rule.host);
    if (!host.reason.empty()) {
      errors.push_back({here + "/host", std::move(host.reason)});
      ok = false;
    }
    if (rule.port && (*rule.port < 1 || *rule.port > 65535)) {
      errors.push_back({here + "/port", "port " + std::to_string(*rule.port) +
                                            " is outside 1..65535"});
      ok = false;
    }
    if (!ok) continue;
    network_rule normalized{host.host, rule.port, rule.action};
    const auto [it, inserted] = first_rule.try_emplace({normalized.host, normalized.port}, i);
    if (!inserted) {
      const network_rule& earlier = in.rules[it->second];
      if (earlier.action != rule.action) {
        // First match wins, so this rule would be dead and the author's
        // intent unclear: refuse rather than guess.
        errors.push_back({here, "rule conflicts with rule " + std::to_string(it->second) +
                                    ": same host and port, different action"});
      }
      continue;  // an exact duplicate is dropped
    }
    out.rules.push_back(std::move(normalized));
  }
}

// ---------------------------------------------------------------------------
// Environment

std::optional<std::string> env_name_problem(const std::string& name) {
  if (name.empty()) return "environment variable name is empty";
  if (name.find('=') != std::string::npos) return "environment variable name contains '='";
  if (name.find('\0') != std::string::npos) return "environment variable name contains NUL";
  if (!is_valid_utf8(name)) return "environment variable name is not valid UTF-8";
  return std::nullopt;
}

void check_environment(const environment_policy& env, std::vector<policy_error>& errors) {
  std::map<std::string, std::size_t> seen;
  for (std::size_t i = 0; i < env.allow.size(); ++i) {
    const std::string here = pointer_join("/environment/allow", i);
    if (auto problem = env_name_problem(env.allow[i])) {
      errors.push_back({here, std::move(*problem)});
    } else if (auto [it, inserted] = seen.try_emplace(env.allow[i], i); !inserted) {
      errors.push_back({here, "duplicate name \"" + env.allow[i] + "\" (first at index " +
                                  std::to_string(it->second) + ")"});
    }
  }
  std::set<std::string> set_names;
  for (const auto& [name, value] : env.set) {
    const std::string here = pointer_join("/environment/set", name);
    if (auto problem = env_name_problem(name)) {
      errors.push_back({here, std::move(*problem)});
    } else if (!set_names.insert(name).second) {
      errors.push_back({here, "duplicate name \"" + name + "\""});
    } else if (value.find('\0') != std::string::npos) {
      errors.push_back({here, "value contains a NUL byte"});
    } else if (!is_valid_utf8(value)) {
      errors.push_back({here, "value is not valid UTF-8"});
    }
  }
}

// ---------------------------------------------------------------------------
// Process limits, enforcement, labels

void check_limit(const std::optional<std::uint64_t>& limit, const char* at,
                 std::vector<policy_error>& errors) {
  if (limit && *limit == 0) {
    errors.push_back({at, "must be at least 1 (omit the field for no limit)"});
  }
}

void check_process(const process_policy& proc, std::vector<policy_error>& errors) {
  check_limit(proc.max_processes, "/process/max_processes", errors);
  check_limit(proc.memory_bytes, "/process/memory_bytes", errors);
  check_limit(proc.cpu_seconds, "/process/cpu_seconds", errors);
  if (proc.timeout_ms && *proc.timeout_ms == 0) {
    errors.push_back({"/process/timeout_seconds",
                      "must be positive (at least 0.001 seconds; omit the field for no limit)"});
  }
}

void check_strings(const std::map<std::string, std::string>& labels, const char* at,
                   std::vector<policy_error>& errors) {
  for (const auto& [k, v] : labels) {
    if (!is_valid_utf8(k) || !is_valid_utf8(v)) {
      errors.push_back({pointer_join(at, k), "label is not valid UTF-8"});
    }
  }
}

}  // namespace

std::string normalize_path_lexically(const std::string& path) {
  if (path.empty()) return {};
  std::string root;
  std::string_view rest = path;
  if (path.front() == '/') {
    root = "/";
    rest.remove_prefix(1);
  } else if (is_root_token(first_component(path))) {
    root = std::string(first_component(path));
    rest.remove_prefix(root.size());
  }
  std::vector<std::string_view> parts;
  for_each_component(rest, [&](std::string_view c) {
    if (c.empty() || c == ".") return;
    if (c == "..") {
      if (!parts.empty() && parts.back() != "..") {
        parts.pop_back();
      } else if (root.empty()) {
        parts.push_back(c);  // a relative path keeps leading ".."
      }
      return;  // ".." never climbs above "/" or a token
    }
    parts.push_back(c);
  });
  std::string out = root;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (!out.empty() && out.back() != '/') out += '/';
    out += parts[i];
  }
  if (out.empty()) out = ".";  // a relative path that cancelled out
  return out;
}

validation_result validate_sandbox_policy(const sandbox_policy& policy) {
  validation_result res;
  res.policy = policy;
  auto& errors = res.errors;
  sandbox_policy& out = res.policy;

  if (policy.schema_version != policy_schema_version) {
    errors.push_back({"/schema_version", "unsupported schema_version " +
                                             std::to_string(policy.schema_version) +
                                             " (this version of cordon reads 1)"});
  }
  if (!is_valid_utf8(policy.name)) errors.push_back({"/name", "name is not valid UTF-8"});

  const auto& fs = policy.filesystem;
  out.filesystem.readable = check_paths(fs.readable, "/filesystem/readable", false, errors);
  out.filesystem.writable = check_paths(fs.writable, "/filesystem/writable", true, errors);
  out.filesystem.protected_read_only =
      check_paths(fs.protected_read_only, "/filesystem/protected_read_only", false, errors);
  out.filesystem.denied = check_paths(fs.denied, "/filesystem/denied", false, errors);

  check_network(policy.network, out.network, errors);
  check_environment(policy.environment, errors);
  check_process(policy.process, errors);

  if (policy.network.mode != network_mode::filtered &&
      policy.enforcement.contains(control::network_filter)) {
    errors.push_back({"/enforcement/network_filter",
                      "network_filter only applies when network mode is \"filtered\""});
  }
  check_strings(policy.metadata, "/metadata", errors);
  return res;
}

}  // namespace cordon
