// src/core/validation.cpp — semantic checks and lexical normalization of a
// sandbox_policy (docs/policy.md).
//
// Every problem is reported (not just the first) with a JSON pointer into the
// policy's JSON shape, so a host can fix a policy in one pass. Nothing here
// touches the filesystem.
#include "cordon/validation.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

#include "core/broker_endpoint.h"
#include "core/dns_types.h"
#include "core/host_syntax.h"
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
// Hosts: the grammar lives in host_syntax.h, shared with the matcher.

std::optional<std::string> env_name_problem(const std::string& name);

// A rule's TLS fields (docs/tls.md): method and path limits need the
// broker to see the requests, so only a terminated rule may carry them (and
// `websocket`, which opts a terminated rule into upgrades); a deny rule
// terminates nothing. Returns false when the rule is refused.
bool check_tls_fields(const network_rule& rule, const std::string& here, std::vector<policy_error>& errors) {
  const std::size_t before = errors.size();
  const bool terminated = rule.tls == tls_mode::terminate;
  if (terminated && rule.action != rule_action::allow) {
    errors.push_back({here + "/tls", "tls \"terminate\" needs action \"allow\": a denied connection is never opened"});
  }
  const char* tunnel_only = "needs tls \"terminate\": a tunnel's requests are encrypted, the broker cannot see them";
  if (!terminated && !rule.methods.empty()) errors.push_back({here + "/methods", std::string("methods ") + tunnel_only});
  if (!terminated && !rule.paths.empty()) errors.push_back({here + "/paths", std::string("paths ") + tunnel_only});
  if (!terminated && rule.read_only) errors.push_back({here + "/read_only", std::string("read_only ") + tunnel_only});
  if (!terminated && rule.websocket) {
    // A tunnel already carries a WebSocket like any bytes; the field would
    // promise a judged upgrade that nothing performs.
    errors.push_back({here + "/websocket",
                      "websocket needs tls \"terminate\": a tunnel relays its bytes unjudged, WebSockets included"});
  }
  if (rule.read_only && !rule.methods.empty()) {
    errors.push_back({here + "/methods", "methods and read_only together: read_only means GET, HEAD and OPTIONS"});
  }
  if (rule.read_only && rule.websocket) {
    // The upgrade is a GET, but its frames then write both ways unjudged:
    // a read-only rule that allowed it would not be read-only.
    errors.push_back({here + "/websocket",
                      "websocket and read_only together: a WebSocket's frames go both ways, unjudged by any method"});
  }
  for (std::size_t m = 0; m < rule.methods.size(); ++m) {
    const std::string& method = rule.methods[m];
    const bool token = !method.empty() && std::all_of(method.begin(), method.end(), [](char c) {
      return (c >= 'A' && c <= 'Z') || c == '-' || c == '_';
    });
    if (!token) {
      errors.push_back({pointer_join(here + "/methods", m), "method must be an upper-case HTTP method name"});
    } else if (method == "TRACE" || method == "TRACK" || method == "CONNECT") {
      errors.push_back({pointer_join(here + "/methods", m), method + " is never forwarded on a terminated connection"});
    }
  }
  for (std::size_t p = 0; p < rule.paths.size(); ++p) {
    const std::string& path = rule.paths[p];
    const bool clean = !path.empty() && path[0] == '/' &&
                       std::none_of(path.begin(), path.end(), [](char c) {
                         return static_cast<unsigned char>(c) <= 0x20 || c == 0x7f || c == '?' || c == '#' || c == '%';
                       }) &&
                       path.find("/../") == std::string::npos && path.find("/./") == std::string::npos &&
                       !path.ends_with("/..") && !path.ends_with("/.");
    if (!clean) {
      errors.push_back({pointer_join(here + "/paths", p),
                        "path prefix must start with '/' and hold no spaces, '?', '#', '%' or dot segments"});
    }
  }
  return errors.size() == before;
}

// A rule's DNS limits (docs/network.md, "DNS inside the sandbox"): only an
// allow rule for a wildcard decides queries for names the command chooses,
// so only there may it limit what is forwarded; the types must be ones the
// broker knows by name. Returns false when refused.
bool check_dns_fields(const network_rule& rule, const std::string& normalized_host, const std::string& here,
                      std::vector<policy_error>& errors) {
  if (rule.dns_types.empty() && !rule.dns_queries_per_minute) return true;
  const std::size_t before = errors.size();
  const std::string field = rule.dns_types.empty() ? "/dns_queries_per_minute" : "/dns_types";
  if (rule.action != rule_action::allow) {
    errors.push_back({here + field, "DNS limits need action \"allow\": a denied name is answered NXDOMAIN"});
  } else if (normalized_host.find('*') == std::string::npos) {
    errors.push_back({here + field, "DNS limits apply to a wildcard rule (\"*\", \"*.example.com\"): a rule for one "
                                    "name or address gives the command no names of its own to ask"});
  }
  for (std::size_t t = 0; t < rule.dns_types.size(); ++t) {
    if (!core::dns_type_number(rule.dns_types[t])) {
      std::string known;
      for (const auto& [name, number] : core::dns_type_names) known += (known.empty() ? "" : ", ") + std::string(name);
      errors.push_back({pointer_join(here + "/dns_types", t), "unknown DNS record type \"" + rule.dns_types[t] +
                                                                   "\" (known: " + known + ")"});
    }
  }
  if (rule.dns_queries_per_minute && (*rule.dns_queries_per_minute < 1 || *rule.dns_queries_per_minute > 1000000)) {
    errors.push_back({here + "/dns_queries_per_minute", "dns_queries_per_minute must be in 1..1000000"});
  }
  return errors.size() == before;
}

// network.credentials (docs/tls.md): each names a terminated host exactly,
// a header, and one secret source.
void check_credentials(const network_policy& in, const network_policy& out, std::vector<policy_error>& errors) {
  if (!in.credentials.empty() && in.mode != network_mode::filtered) {
    errors.push_back({"/network/credentials", "credentials are only allowed when mode is \"filtered\""});
    return;
  }
  for (std::size_t i = 0; i < in.credentials.size(); ++i) {
    const network_credential& c = in.credentials[i];
    const std::string here = pointer_join("/network/credentials", i);
    const detail::parsed_host host = detail::parse_host_pattern(c.host);
    const bool exact = host.ok() && host.normalized.find('*') == std::string::npos;
    if (!exact) {
      errors.push_back({here + "/host", "credential host must be one host name, without wildcards"});
    } else {
      const bool terminated = std::any_of(out.rules.begin(), out.rules.end(), [&](const network_rule& r) {
        return r.tls == tls_mode::terminate && r.host == host.normalized;
      });
      if (!terminated) {
        errors.push_back({here + "/host", "no rule with tls \"terminate\" for " + host.normalized +
                                              ": a credential goes only into requests the broker decrypts"});
      }
    }
    const bool token = !c.header.empty() && std::all_of(c.header.begin(), c.header.end(), [](char ch) {
      return std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_';
    });
    if (!token) errors.push_back({here + "/header", "header must be an HTTP field name"});
    if (c.from_env.empty() == c.from_file.empty()) {
      errors.push_back({here + "/value_from", "value_from needs exactly one of \"env\" and \"file\""});
    } else if (!c.from_file.empty() && c.from_file[0] != '/') {
      errors.push_back({here + "/value_from/file", "the secret's file must be an absolute path"});
    }
    if (c.format.find("{}") == std::string::npos) errors.push_back({here + "/format", "format must contain \"{}\""});
    if (!c.placeholder_env.empty()) {
      if (auto problem = env_name_problem(c.placeholder_env)) errors.push_back({here + "/placeholder_env", *problem});
    }
  }
}

// network.publish: ports 1..65535, each host port once, at most
// max_published_ports, and a namespace where the command may listen.
void check_publish(const network_policy& in, std::vector<policy_error>& errors) {
  const std::string at = "/network/publish";
  if (in.publish.empty()) return;
  if (in.mode == network_mode::unrestricted) {
    errors.push_back({at, "publish needs a network namespace of the sandbox's own: mode \"unrestricted\" shares "
                          "the host's, where a listener is already reachable"});
  } else if (in.mode == network_mode::filtered && !in.allow_local_binding) {
    errors.push_back({at, "publish in mode \"filtered\" needs allow_local_binding (the command must listen)"});
  }
  if (in.publish.size() > max_published_ports) {
    errors.push_back({at, "at most " + std::to_string(max_published_ports) + " published ports"});
  }
  std::set<int> host_ports;
  for (std::size_t i = 0; i < in.publish.size(); ++i) {
    const published_port& p = in.publish[i];
    const std::string here = pointer_join(at, i);
    if (p.port < 1 || p.port > 65535) errors.push_back({here + "/port", "must be from 1 to 65535"});
    if (in.mode == network_mode::filtered &&
        (p.port == broker::broker_port || p.port == broker::broker_transparent_port ||
         p.port == broker::broker_dns_port)) {
      // The host would reach the broker inside: its rules and injected credentials for any host process.
      errors.push_back({here + "/port", "port " + std::to_string(p.port) +
                                            " is the network broker's inside a filtered sandbox and cannot be "
                                            "published (ports 3128, 3129 and 53 are its own)"});
    }
    if (p.host_port < 1 || p.host_port > 65535) errors.push_back({here + "/host_port", "must be from 1 to 65535"});
    if (!host_ports.insert(p.host_port).second) {
      errors.push_back({here + "/host_port", "host port " + std::to_string(p.host_port) + " is published twice"});
    }
  }
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

  check_publish(in, errors);
  out.publish = in.publish;

  // Same normalized host and port (absent is its own value) -> first index.
  std::map<std::pair<std::string, std::optional<int>>, std::size_t> first_rule;
  out.rules.clear();
  for (std::size_t i = 0; i < in.rules.size(); ++i) {
    const network_rule& rule = in.rules[i];
    const std::string here = pointer_join(at + "/rules", i);
    bool ok = true;
    detail::parsed_host host = detail::parse_host_pattern(rule.host);
    if (!host.ok()) {
      errors.push_back({here + "/host", std::move(host.reason)});
      ok = false;
    }
    if (rule.port && (*rule.port < 1 || *rule.port > 65535)) {
      errors.push_back({here + "/port", "port " + std::to_string(*rule.port) +
                                            " is outside 1..65535"});
      ok = false;
    }
    if (!check_tls_fields(rule, here, errors)) continue;
    if (!ok) continue;
    if (!check_dns_fields(rule, host.normalized, here, errors)) continue;
    network_rule normalized = rule;
    normalized.host = host.normalized;
    if (normalized.read_only) normalized.methods = {"GET", "HEAD", "OPTIONS"};
    const auto [it, inserted] = first_rule.try_emplace({normalized.host, normalized.port}, i);
    if (!inserted) {
      const network_rule& earlier = in.rules[it->second];
      if (earlier.action != rule.action || earlier.tls != rule.tls || earlier.methods != rule.methods ||
          earlier.paths != rule.paths || earlier.read_only != rule.read_only || earlier.websocket != rule.websocket ||
          earlier.dns_types != rule.dns_types || earlier.dns_queries_per_minute != rule.dns_queries_per_minute) {
        // First match wins, so this rule would be dead and the author's
        // intent unclear: refuse rather than guess.
        errors.push_back({here, "rule conflicts with rule " + std::to_string(it->second) +
                                    ": same host and port, different action or TLS handling"});
      }
      continue;  // an exact duplicate is dropped
    }
    out.rules.push_back(std::move(normalized));
  }
  check_credentials(in, out, errors);
  out.credentials = in.credentials;
  for (auto& c : out.credentials) {
    const detail::parsed_host host = detail::parse_host_pattern(c.host);
    if (host.ok()) c.host = host.normalized;
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
  } else if (proc.timeout_ms && *proc.timeout_ms > max_timeout_ms) {
    // Above this a fractional number of seconds no longer reads back as the
    // same milliseconds (a double has 53 bits), so the policy could not be
    // written and read back unchanged.
    errors.push_back({"/process/timeout_seconds", "must be at most 1000000000000 seconds (about 31700 years)"});
  }
}

// platform_enforcement names a platform cordon has a backend for, and its
// entries follow the rule of `enforcement` (docs/policy.md).
void check_platform_enforcement(const sandbox_policy& policy, std::vector<policy_error>& errors) {
  for (const auto& [platform, entries] : policy.platform_enforcement) {
    const std::string at = pointer_join("/platform_enforcement", platform);
    if (platform != "linux" && platform != "macos" && platform != "windows") {
      errors.push_back({at, "unknown platform \"" + platform + "\" (one of \"linux\", \"macos\", \"windows\")"});
    }
    if (policy.network.mode != network_mode::filtered && entries.contains(control::network_filter)) {
      errors.push_back({pointer_join(at, "network_filter"),
                        "network_filter only applies when network mode is \"filtered\""});
    }
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
  out.filesystem.unix_sockets = check_paths(fs.unix_sockets, "/filesystem/unix_sockets", true, errors);
  out.filesystem.devices = check_paths(fs.devices, "/filesystem/devices", false, errors);
  for (std::size_t i = 0; i < out.filesystem.devices.size(); ++i) {
    const std::string& device = out.filesystem.devices[i];
    if (device.rfind("/dev/", 0) != 0 || device.size() <= 5) {
      errors.push_back({pointer_join("/filesystem/devices", i), "a device is a path under /dev/"});
    }
  }

  check_network(policy.network, out.network, errors);
  check_environment(policy.environment, errors);
  check_process(policy.process, errors);

  if (policy.network.mode != network_mode::filtered &&
      policy.enforcement.contains(control::network_filter)) {
    errors.push_back({"/enforcement/network_filter",
                      "network_filter only applies when network mode is \"filtered\""});
  }
  check_platform_enforcement(policy, errors);
  check_strings(policy.metadata, "/metadata", errors);
  return res;
}

}  // namespace cordon
