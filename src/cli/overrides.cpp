// The shortcut flags: see overrides.h.
#include "cli/overrides.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <limits>

#include "core/caches.h"
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
  if (text.substr(0, eq) == "all") {
    const auto level = text.substr(eq + 1);
    return level == "partial" || level == "unverified" || level == "not_enforced"
               ? ""
               : "all takes partial, unverified or not_enforced, not '" + level + "'";
  }
  if (!control_from_string(text.substr(0, eq))) {
    std::string names;  // the choices, as the level's message lists its own
    for (control c : all_controls) names += (names.empty() ? "" : ", ") + std::string(to_string(c));
    return "unknown control '" + text.substr(0, eq) + "' (" + names + "; or all)";
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

}  // namespace


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
  app.add_option("--publish", out.publish,
                 "Relay the host's 127.0.0.1:HOSTPORT (default: PORT) to 127.0.0.1:PORT inside the sandbox's own "
                 "network namespace, for a server the command starts; listed in the report (repeatable)")
      ->group(group)
      ->type_name("[HOSTPORT:]PORT")
      ->allow_extra_args(false);
  each("--cache", "NAME", out.caches, CLI::IsMember(core::cache_names()),
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
       "Accept LEVEL for CONTROL, e.g. memory=partial (an explicit relaxation, repeated in the report); "
       "all=LEVEL (partial, unverified, not_enforced) for every required control it relaxes, e.g. all=unverified "
       "with --platform macos|windows, each warned");
}

result<void> apply_overrides(sandbox_policy& policy, const policy_overrides& flags, const std::string& cwd) {
  const char* home = std::getenv("HOME");
  return core::apply_shortcuts(policy, flags, cwd, home != nullptr ? home : "");
}

}  // namespace cordon::cli
