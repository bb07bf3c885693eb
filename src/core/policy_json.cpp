// src/core/policy_json.cpp — strict reading and stable writing of policy JSON v1.
//
// Reading checks structure only (fields, types, enum spellings); meaning is
// validate_sandbox_policy()'s job. Unknown fields are errors because a typo
// ("writeable") must never silently weaken a policy.
#include "cordon/policy_json.h"

#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <span>
#include <utility>

#include <nlohmann/json.hpp>

#include "cordon/validation.h"
#include "core/json_pointer.h"
#include "core/rounding.h"
#include "core/strict_json.h"

namespace cordon {
namespace {

using json = nlohmann::ordered_json;
using detail::pointer_join;

template <class E>
using names_t = std::span<const std::pair<E, std::string_view>>;

constexpr std::pair<read_mode, std::string_view> read_mode_names[] = {
    {read_mode::full, "full"}, {read_mode::restricted, "restricted"}};
constexpr std::pair<network_mode, std::string_view> network_mode_names[] = {
    {network_mode::denied, "denied"},
    {network_mode::unrestricted, "unrestricted"},
    {network_mode::filtered, "filtered"}};
constexpr std::pair<rule_action, std::string_view> rule_action_names[] = {
    {rule_action::allow, "allow"}, {rule_action::deny, "deny"}};
constexpr std::pair<tls_mode, std::string_view> tls_mode_names[] = {
    {tls_mode::tunnel, "tunnel"}, {tls_mode::terminate, "terminate"}};
constexpr std::pair<environment_inherit, std::string_view> inherit_names[] = {
    {environment_inherit::none, "none"}, {environment_inherit::all, "all"}};
constexpr std::pair<isolation_level, std::string_view> isolation_names[] = {
    {isolation_level::none, "none"},
    {isolation_level::process, "process"},
    {isolation_level::os_sandbox, "os_sandbox"},
    {isolation_level::container, "container"},
    {isolation_level::vm, "vm"}};

template <class E>
std::string_view name_of(E value, names_t<E> names) {
  for (const auto& [v, n] : names) {
    if (v == value) return n;
  }
  return "unknown";
}

template <class E>
std::string one_of(names_t<E> names) {
  std::string out = "must be one of";
  const char* sep = " ";
  for (const auto& entry : names) {
    out += sep;
    out += '"';
    out += entry.second;
    out += '"';
    sep = ", ";
  }
  return out;
}

// ---------------------------------------------------------------------------
// Structure. Each reader walks one object in document order, so errors come
// out in document order too.

class reader {
 public:
  std::vector<policy_error> errors;

  void fail(std::string at, std::string reason) {
    errors.push_back({std::move(at), std::move(reason)});
  }

  bool object(const json& j, const std::string& at) {
    if (j.is_object()) return true;
    fail(at, "must be an object");
    return false;
  }

  void unknown(const std::string& at, const std::string& key) {
    fail(pointer_join(at, key), "unknown field \"" + key + "\"");
  }

  void boolean(const json& j, const std::string& at, bool& out) {
    if (j.is_boolean()) {
      out = j.get<bool>();
    } else {
      fail(at, "must be a boolean");
    }
  }

  void string(const json& j, const std::string& at, std::string& out) {
    if (j.is_string()) {
      out = j.get<std::string>();
    } else {
      fail(at, "must be a string");
    }
  }

  void string_list(const json& j, const std::string& at, std::vector<std::string>& out) {
    if (!j.is_array()) {
      fail(at, "must be an array of strings");
      return;
    }
    out.clear();
    for (std::size_t i = 0; i < j.size(); ++i) {
      std::string s;
      string(j[i], pointer_join(at, i), s);
      out.push_back(std::move(s));
    }
  }

  void string_map(const json& j, const std::string& at,
                  std::vector<std::pair<std::string, std::string>>& out) {
    if (!object(j, at)) return;
    out.clear();
    for (const auto& [k, v] : j.items()) {
      std::string s;
      string(v, pointer_join(at, k), s);
      out.emplace_back(k, std::move(s));
    }
  }

  // A count or size: an integer in 0..2^64-1. Zero is left to validation.
  void count(const json& j, const std::string& at, std::optional<std::uint64_t>& out) {
    if (j.is_number_unsigned()) {
      out = j.get<std::uint64_t>();
    } else {
      fail(at, "must be a non-negative integer");
    }
  }

  template <class E>
  void enumeration(const json& j, const std::string& at, E& out, names_t<E> names) {
    if (j.is_string()) {
      const auto& s = j.get_ref<const std::string&>();
      for (const auto& [v, n] : names) {
        if (n == s) {
          out = v;
          return;
        }
      }
    }
    fail(at, one_of(names));
  }
};

void read_filesystem(reader& r, const json& j, const std::string& at, filesystem_policy& fs) {
  if (!r.object(j, at)) return;
  for (const auto& [k, v] : j.items()) {
    const std::string here = pointer_join(at, k);
    if (k == "read") {
      r.enumeration<read_mode>(v, here, fs.read, read_mode_names);
    } else if (k == "include_platform_defaults") {
      r.boolean(v, here, fs.include_platform_defaults);
    } else if (k == "readable") {
      r.string_list(v, here, fs.readable);
    } else if (k == "writable") {
      r.string_list(v, here, fs.writable);
    } else if (k == "protected_read_only") {
      r.string_list(v, here, fs.protected_read_only);
    } else if (k == "denied") {
      r.string_list(v, here, fs.denied);
    } else if (k == "protect_vcs_metadata") {
      r.boolean(v, here, fs.protect_vcs_metadata);
    } else if (k == "unix_sockets") {
      r.string_list(v, here, fs.unix_sockets);
    } else if (k == "devices") {
      r.string_list(v, here, fs.devices);
    } else {
      r.unknown(at, k);
    }
  }
}

void read_port(reader& r, const json& j, const std::string& at, std::optional<int>& out) {
  // The range 1..65535 is validation's; here the value only has to be an
  // integer that fits, so that validation can name the bad value.
  if (j.is_number_unsigned() && j.get<std::uint64_t>() <= static_cast<std::uint64_t>(INT_MAX)) {
    out = static_cast<int>(j.get<std::uint64_t>());
  } else if (j.is_number_integer() && !j.is_number_unsigned() &&
             j.get<std::int64_t>() >= static_cast<std::int64_t>(INT_MIN)) {
    out = static_cast<int>(j.get<std::int64_t>());
  } else if (j.is_number_integer()) {
    r.fail(at, "port must be in 1..65535");
  } else {
    r.fail(at, "must be an integer");
  }
}

void read_rule(reader& r, const json& j, const std::string& at, network_rule& rule) {
  if (!r.object(j, at)) return;
  bool has_host = false;
  bool has_action = false;
  for (const auto& [k, v] : j.items()) {
    const std::string here = pointer_join(at, k);
    if (k == "host") {
      has_host = true;
      r.string(v, here, rule.host);
    } else if (k == "port") {
      read_port(r, v, here, rule.port);
    } else if (k == "action") {
      has_action = true;
      r.enumeration<rule_action>(v, here, rule.action, rule_action_names);
    } else if (k == "tls") {
      r.enumeration<tls_mode>(v, here, rule.tls, tls_mode_names);
    } else if (k == "methods") {
      r.string_list(v, here, rule.methods);
    } else if (k == "paths") {
      r.string_list(v, here, rule.paths);
    } else if (k == "read_only") {
      r.boolean(v, here, rule.read_only);
    } else if (k == "websocket") {
      r.boolean(v, here, rule.websocket);
    } else if (k == "dns_types") {
      r.string_list(v, here, rule.dns_types);
    } else if (k == "dns_queries_per_minute") {
      r.count(v, here, rule.dns_queries_per_minute);
    } else {
      r.unknown(at, k);
    }
  }
  // A rule must say what it matches and what it does; no silent default.
  if (!has_host) r.fail(pointer_join(at, "host"), "missing required field \"host\"");
  if (!has_action) r.fail(pointer_join(at, "action"), "missing required field \"action\"");
}

// {"host", "header", "value_from": {"env": NAME} | {"file": PATH}, "format", "placeholder_env"}
void read_credential(reader& r, const json& j, const std::string& at, network_credential& c) {
  if (!r.object(j, at)) return;
  bool has_source = false;
  for (const auto& [k, v] : j.items()) {
    const std::string here = pointer_join(at, k);
    if (k == "host") {
      r.string(v, here, c.host);
    } else if (k == "header") {
      r.string(v, here, c.header);
    } else if (k == "format") {
      r.string(v, here, c.format);
    } else if (k == "placeholder_env") {
      r.string(v, here, c.placeholder_env);
    } else if (k == "value_from") {
      has_source = true;
      if (!r.object(v, here)) continue;
      for (const auto& [sk, sv] : v.items()) {
        if (sk == "env") {
          r.string(sv, pointer_join(here, sk), c.from_env);
        } else if (sk == "file") {
          r.string(sv, pointer_join(here, sk), c.from_file);
        } else {
          r.unknown(here, sk);
        }
      }
    } else {
      r.unknown(at, k);
    }
  }
  if (c.host.empty()) r.fail(pointer_join(at, "host"), "missing required field \"host\"");
  if (c.header.empty()) r.fail(pointer_join(at, "header"), "missing required field \"header\"");
  if (!has_source) r.fail(pointer_join(at, "value_from"), "missing required field \"value_from\"");
}

// network.publish: [{"port": P, "host_port": H}] (host_port optional: P).
void read_publish(reader& r, const json& v, const std::string& at, std::vector<published_port>& out) {
  if (!v.is_array()) {
    r.fail(at, "must be an array of {\"port\", \"host_port\"} objects");
    return;
  }
  out.clear();
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string here = pointer_join(at, i);
    if (!r.object(v[i], here)) continue;
    published_port p;
    bool has_port = false;
    for (const auto& [k, e] : v[i].items()) {
      const std::string field = pointer_join(here, k);
      if ((k == "port" || k == "host_port") && e.is_number_integer()) {
        (k == "port" ? p.port : p.host_port) = e.get<int>();
        has_port = has_port || k == "port";
      } else if (k == "port" || k == "host_port") {
        r.fail(field, "must be an integer from 1 to 65535");
      } else {
        r.unknown(here, k);
      }
    }
    if (!has_port) r.fail(pointer_join(here, "port"), "missing required field \"port\"");
    if (p.host_port == 0) p.host_port = p.port;
    out.push_back(p);
  }
}

void read_network(reader& r, const json& j, const std::string& at, network_policy& net) {
  if (!r.object(j, at)) return;
  for (const auto& [k, v] : j.items()) {
    const std::string here = pointer_join(at, k);
    if (k == "mode") {
      r.enumeration<network_mode>(v, here, net.mode, network_mode_names);
    } else if (k == "allow_local_binding") {
      r.boolean(v, here, net.allow_local_binding);
    } else if (k == "publish") {
      read_publish(r, v, here, net.publish);
    } else if (k == "rules") {
      if (!v.is_array()) {
        r.fail(here, "must be an array of rules");
        continue;
      }
      net.rules.clear();
      for (std::size_t i = 0; i < v.size(); ++i) {
        network_rule rule;
        read_rule(r, v[i], pointer_join(here, i), rule);
        net.rules.push_back(std::move(rule));
      }
    } else if (k == "default_action") {
      r.enumeration<rule_action>(v, here, net.default_action, rule_action_names);
    } else if (k == "credentials") {
      if (!v.is_array()) {
        r.fail(here, "must be an array of credentials");
        continue;
      }
      net.credentials.clear();
      for (std::size_t i = 0; i < v.size(); ++i) {
        network_credential c;
        read_credential(r, v[i], pointer_join(here, i), c);
        net.credentials.push_back(std::move(c));
      }
    } else {
      r.unknown(at, k);
    }
  }
}

void read_environment(reader& r, const json& j, const std::string& at, environment_policy& env) {
  if (!r.object(j, at)) return;
  for (const auto& [k, v] : j.items()) {
    const std::string here = pointer_join(at, k);
    if (k == "inherit") {
      r.enumeration<environment_inherit>(v, here, env.inherit, inherit_names);
    } else if (k == "allow") {
      r.string_list(v, here, env.allow);
    } else if (k == "set") {
      r.string_map(v, here, env.set);
    } else {
      r.unknown(at, k);
    }
  }
}

// "timeout_seconds": a number of seconds, possibly fractional, kept in ms.
void read_timeout(reader& r, const json& j, const std::string& at,
                  std::optional<std::uint64_t>& out_ms) {
  constexpr std::uint64_t max_seconds = UINT64_MAX / 1000;
  if (j.is_number_unsigned()) {
    const auto s = j.get<std::uint64_t>();
    if (s > max_seconds) {
      r.fail(at, "timeout is too large");
    } else {
      out_ms = s * 1000;
    }
    return;
  }
  if (!j.is_number()) {
    r.fail(at, "must be a number of seconds");
    return;
  }
  const double s = j.get<double>();
  if (!(s >= 0.0)) {  // also catches NaN
    r.fail(at, "must be a positive number of seconds");
  } else if (s * 1000.0 >= 9.0e18) {  // the range of a millisecond count
    r.fail(at, "timeout is too large");
  } else {
    out_ms = detail::round_milliseconds(s * 1000.0);
  }
}

void read_process(reader& r, const json& j, const std::string& at, process_policy& proc) {
  if (!r.object(j, at)) return;
  for (const auto& [k, v] : j.items()) {
    const std::string here = pointer_join(at, k);
    if (k == "tree_cleanup") {
      r.boolean(v, here, proc.tree_cleanup);
    } else if (k == "max_processes") {
      r.count(v, here, proc.max_processes);
    } else if (k == "memory_bytes") {
      r.count(v, here, proc.memory_bytes);
    } else if (k == "cpu_seconds") {
      r.count(v, here, proc.cpu_seconds);
    } else if (k == "timeout_seconds") {
      read_timeout(r, v, here, proc.timeout_ms);
    } else if (k == "allow_pty") {
      r.boolean(v, here, proc.allow_pty);
    } else if (k == "core_dumps") {
      r.boolean(v, here, proc.core_dumps);
    } else {
      r.unknown(at, k);
    }
  }
}

void read_enforcement(reader& r, const json& j, const std::string& at,
                      std::map<control, enforcement_level>& out) {
  if (!r.object(j, at)) return;
  for (const auto& [k, v] : j.items()) {
    const std::string here = pointer_join(at, k);
    const auto c = control_from_string(k);
    if (!c) {
      r.fail(here, "unknown control \"" + k + "\"");
      continue;
    }
    const auto level = v.is_string() ? enforcement_level_from_string(v.get<std::string>())
                                     : std::nullopt;
    if (!level) {
      r.fail(here,
             "must be one of \"enforced\", \"partial\", \"not_enforced\", \"not_applicable\", "
             "\"planned\", \"unverified\"");
      continue;
    }
    out[*c] = *level;
  }
}

// "platform_enforcement": {"macos": {CONTROL: LEVEL, ...}, ...}; the platform
// names themselves are checked by validation.
void read_platform_enforcement(reader& r, const json& j, const std::string& at,
                               std::map<std::string, std::map<control, enforcement_level>>& out) {
  if (!r.object(j, at)) return;
  for (const auto& [k, v] : j.items()) read_enforcement(r, v, pointer_join(at, k), out[k]);
}

void read_metadata(reader& r, const json& j, const std::string& at,
                   std::map<std::string, std::string>& out) {
  if (!r.object(j, at)) return;
  for (const auto& [k, v] : j.items()) {
    std::string s;
    r.string(v, pointer_join(at, k), s);
    out[k] = std::move(s);
  }
}

void read_policy(reader& r, const json& root, sandbox_policy& p) {
  if (!root.is_object()) {
    r.fail("", "a policy must be a JSON object");
    return;
  }
  // The version decides how everything else is read, so it is checked first
  // and an unsupported one stops reading.
  const auto version = root.find("schema_version");
  if (version == root.end()) {
    r.fail("/schema_version", "missing required field \"schema_version\"");
  } else if (!version->is_number_unsigned()) {
    r.fail("/schema_version", "must be the integer 1");
  } else if (version->get<std::uint64_t>() != static_cast<std::uint64_t>(policy_schema_version)) {
    r.fail("/schema_version", "unsupported schema_version " +
                                  std::to_string(version->get<std::uint64_t>()) +
                                  " (this version of cordon reads 1)");
    return;
  }
  for (const auto& [k, v] : root.items()) {
    const std::string here = pointer_join("", k);
    if (k == "schema_version") {
      continue;
    } else if (k == "name") {
      r.string(v, here, p.name);
    } else if (k == "isolation") {
      r.enumeration<isolation_level>(v, here, p.isolation, isolation_names);
    } else if (k == "filesystem") {
      read_filesystem(r, v, here, p.filesystem);
    } else if (k == "network") {
      read_network(r, v, here, p.network);
    } else if (k == "environment") {
      read_environment(r, v, here, p.environment);
    } else if (k == "process") {
      read_process(r, v, here, p.process);
    } else if (k == "enforcement") {
      read_enforcement(r, v, here, p.enforcement);
    } else if (k == "platform_enforcement") {
      read_platform_enforcement(r, v, here, p.platform_enforcement);
    } else if (k == "metadata") {
      read_metadata(r, v, here, p.metadata);
    } else {
      r.unknown("", k);
    }
  }
}

error policy_errors_to_error(const std::vector<policy_error>& errors) {
  std::string message = errors.front().reason;
  for (std::size_t i = 1; i < errors.size(); ++i) {
    message += '\n';
    message += errors[i].location.empty() ? std::string("(document)") : errors[i].location;
    message += ": ";
    message += errors[i].reason;
  }
  error e = make_error(error_code::invalid_policy, std::move(message), errors.front().location);
  e.errors = errors;  // the list itself, each with its JSON pointer (docs/errors.md)
  return e;
}

}  // namespace

result<sandbox_policy> sandbox_policy_from_json(std::string_view text) {
  detail::strict_json doc = detail::parse_strict_json(text);
  if (!doc.syntax_ok) {
    return make_error(error_code::parse_error, "not valid JSON: " + doc.syntax_error,
                      doc.syntax_location);
  }
  reader r;
  r.errors = std::move(doc.duplicates);
  sandbox_policy policy;
  read_policy(r, doc.root, policy);
  if (!r.errors.empty()) return policy_errors_to_error(r.errors);
  policy.schema_version = policy_schema_version;
  return policy;
}

namespace {

// True when `pointer` is `base` or lies beneath it ("/network/rules/0" is
// within "/network"; "" holds everything).
bool pointer_within(const std::string& pointer, const std::string& base) {
  return base.empty() || pointer == base || pointer.rfind(base + "/", 0) == 0;
}

std::string pointer_parent(const std::string& pointer) {
  const auto slash = pointer.find_last_of('/');
  return slash == std::string::npos ? std::string() : pointer.substr(0, slash);
}

}  // namespace

std::vector<policy_error> sandbox_policy_errors(std::string_view text) {
  detail::strict_json doc = detail::parse_strict_json(text);
  if (!doc.syntax_ok) return {{doc.syntax_location, "not valid JSON: " + doc.syntax_error}};
  reader r;
  r.errors = std::move(doc.duplicates);
  sandbox_policy policy;
  read_policy(r, doc.root, policy);
  std::vector<policy_error> errors = r.errors;
  // A field that could not be read keeps its default, which may contradict
  // its siblings: meaning is only checked where everything was read. An
  // unknown field is skipped without touching anything.
  std::vector<std::string> unread;
  for (const auto& e : r.errors) {
    if (e.reason.rfind("unknown field", 0) != 0) unread.push_back(pointer_parent(e.location));
  }
  policy.schema_version = policy_schema_version;
  for (const auto& e : validate_sandbox_policy(policy).errors) {
    bool tainted = false;
    for (const auto& base : unread) tainted = tainted || pointer_within(e.location, base);
    if (!tainted) errors.push_back(e);
  }
  return errors;
}

std::string sandbox_policy_to_json(const sandbox_policy& p) {
  json j = json::object();
  j["schema_version"] = p.schema_version;
  j["name"] = p.name;
  j["isolation"] = name_of<isolation_level>(p.isolation, isolation_names);

  const auto& fs = p.filesystem;
  json& jfs = j["filesystem"] = json::object();
  jfs["read"] = name_of<read_mode>(fs.read, read_mode_names);
  jfs["include_platform_defaults"] = fs.include_platform_defaults;
  jfs["readable"] = fs.readable;
  jfs["writable"] = fs.writable;
  jfs["protected_read_only"] = fs.protected_read_only;
  jfs["denied"] = fs.denied;
  jfs["protect_vcs_metadata"] = fs.protect_vcs_metadata;
  // Written only when set, so that every policy without them keeps its
  // normalized text and fingerprint.
  if (!fs.unix_sockets.empty()) jfs["unix_sockets"] = fs.unix_sockets;
  if (!fs.devices.empty()) jfs["devices"] = fs.devices;

  const auto& net = p.network;
  json& jnet = j["network"] = json::object();
  jnet["mode"] = name_of<network_mode>(net.mode, network_mode_names);
  jnet["allow_local_binding"] = net.allow_local_binding;
  // Written only when set: policies without it keep their fingerprint.
  if (!net.publish.empty()) {
    json& jp = jnet["publish"] = json::array();
    for (const auto& port : net.publish) jp.push_back({{"port", port.port}, {"host_port", port.host_port}});
  }
  jnet["rules"] = json::array();
  for (const auto& rule : net.rules) {
    json jr = json::object();
    jr["host"] = rule.host;
    if (rule.port) jr["port"] = *rule.port;
    jr["action"] = name_of<rule_action>(rule.action, rule_action_names);
    // Written only when set: policies without them keep their fingerprint.
    if (rule.tls != tls_mode::tunnel) jr["tls"] = name_of<tls_mode>(rule.tls, tls_mode_names);
    if (!rule.methods.empty()) jr["methods"] = rule.methods;
    if (!rule.paths.empty()) jr["paths"] = rule.paths;
    if (rule.read_only) jr["read_only"] = true;
    if (rule.websocket) jr["websocket"] = true;
    if (!rule.dns_types.empty()) jr["dns_types"] = rule.dns_types;
    if (rule.dns_queries_per_minute) jr["dns_queries_per_minute"] = *rule.dns_queries_per_minute;
    jnet["rules"].push_back(std::move(jr));
  }
  jnet["default_action"] = name_of<rule_action>(net.default_action, rule_action_names);
  if (!net.credentials.empty()) {
    json jc = json::array();
    for (const auto& c : net.credentials) {
      json e = {{"host", c.host}, {"header", c.header}};
      e["value_from"] = c.from_env.empty() ? json{{"file", c.from_file}} : json{{"env", c.from_env}};
      e["format"] = c.format;
      if (!c.placeholder_env.empty()) e["placeholder_env"] = c.placeholder_env;
      jc.push_back(std::move(e));
    }
    jnet["credentials"] = std::move(jc);
  }

  const auto& env = p.environment;
  json& jenv = j["environment"] = json::object();
  jenv["inherit"] = name_of<environment_inherit>(env.inherit, inherit_names);
  jenv["allow"] = env.allow;
  jenv["set"] = json::object();
  for (const auto& [name, value] : env.set) jenv["set"][name] = value;

  const auto& proc = p.process;
  json& jproc = j["process"] = json::object();
  jproc["tree_cleanup"] = proc.tree_cleanup;
  if (proc.max_processes) jproc["max_processes"] = *proc.max_processes;
  if (proc.memory_bytes) jproc["memory_bytes"] = *proc.memory_bytes;
  if (proc.cpu_seconds) jproc["cpu_seconds"] = *proc.cpu_seconds;
  jproc["allow_pty"] = proc.allow_pty;
  if (proc.core_dumps) jproc["core_dumps"] = true;
  if (proc.timeout_ms) {
    // Whole seconds are written as integers so hand-written values survive
    // a round trip looking the same.
    if (*proc.timeout_ms % 1000 == 0) {
      jproc["timeout_seconds"] = *proc.timeout_ms / 1000;
    } else {
      jproc["timeout_seconds"] = static_cast<double>(*proc.timeout_ms) / 1000.0;
    }
  }

  j["enforcement"] = json::object();
  for (const auto& [c, level] : p.enforcement) {
    j["enforcement"][std::string(to_string(c))] = to_string(level);
  }
  if (!p.platform_enforcement.empty()) {
    j["platform_enforcement"] = json::object();
    for (const auto& [platform, entries] : p.platform_enforcement) {
      json& jp = j["platform_enforcement"][platform] = json::object();
      for (const auto& [c, level] : entries) jp[std::string(to_string(c))] = to_string(level);
    }
  }
  j["metadata"] = json::object();
  for (const auto& [k, v] : p.metadata) j["metadata"][k] = v;

  // Invalid UTF-8 (only possible in a policy built in code, and rejected by
  // validation) is replaced rather than thrown.
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

result<sandbox_policy> load_sandbox_policy(const std::string& path) {
  // Policies are small; the cap keeps a mistaken path (a device, a huge log)
  // from being read forever.
  constexpr std::size_t max_size = 16U << 20U;
  std::FILE* f = std::fopen(path.c_str(), "rbe");
  if (f == nullptr) {
    const int e = errno;
    return make_error(error_code::io_error, "cannot open policy file " + path, {}, e);
  }
  std::string text;
  char buf[65536];
  int read_errno = 0;
  for (;;) {
    const std::size_t n = std::fread(buf, 1, sizeof buf, f);
    text.append(buf, n);
    if (text.size() > max_size) break;
    if (n < sizeof buf) {
      if (std::ferror(f) != 0) read_errno = errno != 0 ? errno : EIO;
      break;
    }
  }
  std::fclose(f);
  if (read_errno != 0) {
    return make_error(error_code::io_error, "cannot read policy file " + path, {}, read_errno);
  }
  if (text.size() > max_size) {
    return make_error(error_code::io_error, "policy file " + path + " is larger than 16 MiB", {},
                      EFBIG);
  }
  auto parsed = sandbox_policy_from_json(text);
  if (!parsed) {
    error e = std::move(parsed).error_value();
    e.message = path + ": " + e.message;
    return e;
  }
  return parsed;
}

}  // namespace cordon
