// The shortcut flags: see overrides.h.
#include "cli/overrides.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <limits>

#include "cli/caches.h"
#include "cordon/validation.h"
#include "core/host_syntax.h"
#include "core/rounding.h"

namespace cordon::cli {
namespace {

// "NAME" for --env, "NAME=VALUE" for --setenv (split at the first '=').
std::string env_name_problem(const std::string& name) {
  if (name.empty()) return "the variable name is empty";
  if (name.find('=') != std::string::npos) return "a variable name cannot contain '='";
  if (name.find('\0') != std::string::npos) return "a variable name cannot contain NUL";
  return {};
}

// A check without a description: the option's type name says what it takes.
CLI::Validator validator(std::function<std::string(const std::string&)> check) {
  return CLI::Validator(std::move(check), "");
}

const CLI::Validator kPath = validator([](const std::string& text) -> std::string {
  if (text.empty()) return "a path cannot be empty";
  // `cordon run --rw -- CMD`: the `--` that ends cordon's options was taken as the path.
  if (text == "--") return "needs a PATH before `--` (write ./-- for a file named --)";
  return "";
});

const CLI::Validator kEnvName = validator(env_name_problem);

const CLI::Validator kAssignment = validator([](const std::string& text) -> std::string {
  const auto eq = text.find('=');
  if (eq == std::string::npos) return "must be NAME=VALUE";
  return env_name_problem(text.substr(0, eq));
});

const CLI::Validator kAccept = validator([](const std::string& text) -> std::string {
  const auto eq = text.find('=');
  if (eq == std::string::npos) return "must be CONTROL=LEVEL, e.g. memory=partial";
  if (!control_from_string(text.substr(0, eq))) {
    std::string names;  // the choices, as the level's message lists its own
    for (control c : all_controls) names += (names.empty() ? "" : ", ") + std::string(to_string(c));
    return "unknown control '" + text.substr(0, eq) + "' (" + names + ")";
  }
  if (!enforcement_level_from_string(text.substr(eq + 1))) {
    return "unknown level '" + text.substr(eq + 1) + "' (enforced, partial, not_enforced, not_applicable, planned, unverified)";
  }
  return {};
});

const CLI::Validator kSize = validator([](const std::string& text) -> std::string {
  auto size = parse_size(text);
  return size ? "" : size.error_value().message;
});

// A whole number from 1 to 2^64-1 (CLI11's own conversion would saturate).
CLI::Validator positive() {
  return validator([](const std::string& text) -> std::string {
    auto value = parse_size(text);
    if (!value || text.find_first_not_of("0123456789") != std::string::npos) {
      return "must be a whole number from 1 to 18446744073709551615";
    }
    return {};
  });
}

const CLI::Validator kSeconds = validator([](const std::string& text) -> std::string {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !(value >= 0.001) || value > 1e9) {
    return "must be a number of seconds from 0.001 to 1e9";
  }
  return {};
});

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

bool policy_overrides::empty() const {
  return readable.empty() && writable.empty() && denied.empty() && network.empty() && allow_hosts.empty() &&
         env_allow.empty() &&
         env_set.empty() && memory.empty() && !max_processes && !cpu_seconds && !timeout_seconds && accept.empty() &&
         !allow_local_binding && caches.empty();
}

void add_policy_flags(CLI::App& app, policy_overrides& out) {
  const std::string group = "Policy shortcuts (edit the policy or profile before it is compiled)";
  const auto each = [&](const char* name, const char* type, std::vector<std::string>& into,
                        const CLI::Validator& check, const char* help) {
    app.add_option(name, into, help)->group(group)->type_name(type)->allow_extra_args(false)->check(check);
  };
  each("--ro", "PATH", out.readable, kPath, "Add a readable PATH (repeatable)");
  each("--rw", "PATH", out.writable, kPath, "Add a writable PATH (repeatable)");
  each("--deny", "PATH", out.denied, kPath,
       "Deny PATH: neither readable nor writable, even if covered otherwise (repeatable)");
  app.add_option("--net", out.network, "Network: none (denied) or any (unrestricted)")
      ->group(group)
      ->type_name("none|any")
      ->check(validator([](const std::string& text) -> std::string {
        return text == "none" || text == "any" ? "" : "must be none or any";
      }));
  app.add_option("--allow-host", out.allow_hosts,
                 "Filtered network: allow HOST (a name, *.name, **.name, * or an IP literal; [v6]:PORT) "
                 "through the broker, optionally on PORT only; everything else is denied (repeatable, in order)")
      ->group(group)
      ->type_name("HOST[:PORT]")
      ->allow_extra_args(false)
      ->excludes("--net");
  app.add_flag("--allow-local-binding", out.allow_local_binding,
               "Let the command bind and connect on the sandbox's own loopback (dev servers) with a filtered "
               "network too, and require a network namespace of its own; the host's is still unreachable "
               "(under --net none the loopback is the command's already where the sandbox has a namespace)")
      ->group(group);
  each("--cache", "NAME", out.caches, CLI::IsMember(cache_names()),
       "Keep a persistent cache writable: pip, npm, cargo or ccache (repeatable; the report warns of the risk)");
  each("--env", "NAME", out.env_allow, kEnvName,
       "Pass host variable NAME through, replacing a value the policy sets (repeatable)");
  each("--setenv", "NAME=VALUE", out.env_set, kAssignment, "Set variable NAME to VALUE inside (repeatable)");
  app.add_option("--memory", out.memory, "Memory ceiling: bytes, or with a K, M, G or T suffix (powers of 1024)")
      ->group(group)
      ->type_name("SIZE")
      ->check(kSize);
  app.add_option("--max-procs", out.max_processes, "Ceiling on processes in the tree")
      ->group(group)
      ->type_name("N")
      ->check(positive());
  app.add_option("--cpu", out.cpu_seconds, "CPU-time ceiling in whole seconds")
      ->group(group)
      ->type_name("SECONDS")
      ->check(positive());
  app.add_option("--timeout", out.timeout_seconds,
                 "Wall-clock timeout in seconds (fractions allowed); kills the whole tree")
      ->group(group)
      ->type_name("SECONDS")
      ->check(kSeconds);
  each("--accept", "CONTROL=LEVEL", out.accept, kAccept,
       "Accept LEVEL for CONTROL, e.g. memory=partial (an explicit relaxation, repeated in the report)");
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

result<void> apply_overrides(sandbox_policy& policy, const policy_overrides& flags, const std::string& cwd) {
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

  const char* home = std::getenv("HOME");
  if (auto cached = apply_caches(policy, flags.caches, home != nullptr ? home : ""); !cached) return cached;

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
    const auto which = control_from_string(entry.substr(0, eq));
    const auto level = eq == std::string::npos ? std::nullopt : enforcement_level_from_string(entry.substr(eq + 1));
    if (!which || !level) return make_error(error_code::usage_error, "--accept " + entry + ": must be CONTROL=LEVEL");
    policy.enforcement[*which] = *level;
  }
  return ok;
}

}  // namespace cordon::cli
