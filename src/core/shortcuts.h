// shortcuts.h — the shortcuts of `cordon run` and `cordon policy explain`
// (--ro, --rw, --deny, --net, --allow-host, --env, --setenv, --memory,
// --max-procs, --cpu, --timeout, --accept, --allow-local-binding, --publish,
// --cache;
// the flags: cli/overrides.h) and of the bindings (the C API's "shortcuts",
// include/cordon/cordon_c.h). They edit the chosen policy or profile before
// its one compile; there is no second launch path (docs/architecture.md).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cordon/policy.h"
#include "cordon/result.h"

namespace cordon::core {

struct policy_shortcuts {
  std::vector<std::string> readable;   // --ro PATH
  std::vector<std::string> writable;   // --rw PATH
  std::vector<std::string> denied;     // --deny PATH
  std::string network;                 // --net none|any; empty = unchanged
  std::vector<std::string> allow_hosts;  // --allow-host HOST[:PORT]: filtered mode, appended allow rules
  std::vector<std::string> env_allow;  // --env NAME
  std::vector<std::string> env_set;    // --setenv NAME=VALUE
  std::string memory;                  // --memory SIZE; empty = unchanged
  std::optional<std::uint64_t> max_processes;  // --max-procs N
  std::optional<std::uint64_t> cpu_seconds;    // --cpu SECONDS
  std::optional<double> timeout_seconds;       // --timeout SECONDS
  std::vector<std::string> accept;             // --accept CONTROL=LEVEL
  bool allow_local_binding = false;            // --allow-local-binding
  std::vector<std::string> publish;            // --publish [HOSTPORT:]PORT
  std::vector<std::string> caches;             // --cache NAME (core/caches.h)

  bool empty() const;
};


// Parses a size: decimal bytes, or with a suffix K, M, G or T (either case;
// powers of 1024), e.g. "512M" = 536870912. Errors (usage_error): no digits,
// an unknown suffix, zero, or more than 2^64-1 bytes.
result<std::uint64_t> parse_size(const std::string& text);

// Parses --allow-host: "HOST", "HOST:PORT", "[IPv6]" or "[IPv6]:PORT" (a
// bare IPv6 literal has no port) into an allow rule. The host pattern itself
// is checked later by validation, like any policy's.
// Errors (usage_error): an unclosed bracket, a port outside 1..65535.
result<network_rule> parse_host_port(const std::string& text);

// Parses --publish: "PORT" (the same port on the host) or "HOSTPORT:PORT"
// into a published port. Errors (usage_error): not one or two decimal
// numbers, a port outside 1..65535.
result<published_port> parse_publish(const std::string& text);

// Applies the shortcuts to `policy` (as loaded, before validation):
//  --ro/--rw/--deny append to filesystem.readable/writable/denied (a relative
//    PATH is made absolute against `cwd`; a PATH starting with a root token
//    such as {workspace}/sub is kept); paths already listed are not repeated;
//  --net none: network.mode denied; --net any: unrestricted (local binding
//    off, it is meaningless there). Either way the rules are dropped, the
//    default action becomes deny and a network_filter requirement is
//    removed, since they only exist in filtered mode;
//  --allow-local-binding: network.allow_local_binding (a loopback inside the
//    sandbox's own network namespace, for dev servers, with a filtered network
//    too; denied networks on linux-namespaces have it already; validation
//    refuses it with an unrestricted network, where it means nothing);
//  --publish [HOSTPORT:]PORT appends to network.publish (docs/network.md,
//    "Published ports"); with a filtered network it also sets
//    allow_local_binding (the command must listen);
//  --env NAME adds NAME to environment.allow (once) and removes a value the
//    policy sets for NAME (the profiles set PATH and HOME), so that the host's
//    value really passes; NAME unset on the host is then unset inside;
//  --cache NAME: apply_caches() (core/caches.h) with `home`;
//  --setenv NAME=VALUE sets NAME (replacing a value the policy sets);
//  --memory, --max-procs, --cpu, --timeout set the process limits;
//  --accept CONTROL=LEVEL sets enforcement[CONTROL] = LEVEL: the policy then
//    accepts that level (a relaxation, repeated as a warning in the report)
//    or demands it. --accept all=LEVEL (LEVEL partial, unverified or
//    not_enforced) does so for every control the policy requires (explicitly
//    or by its content, required_enforcement) at a level LEVEL would relax:
//    partial lowers `enforced`; unverified and not_enforced lower `enforced`
//    and `partial` (and not_enforced `unverified`). Each such control is a
//    relaxation the plan and every report warn of, one line each; a control
//    required at LEVEL or less is left as it is.
// Errors (usage_error): a --memory value parse_size refuses; an --accept
// naming an unknown control or level; all=LEVEL with a LEVEL that relaxes
// nothing (enforced, not_applicable, planned); a --publish value
// parse_publish refuses.
result<void> apply_shortcuts(sandbox_policy& policy, const policy_shortcuts& flags, const std::string& cwd,
                             const std::string& home);


// The C API's "shortcuts" object (the bindings' keywords) as shortcuts:
// {"ro": [PATH...], "rw": [...], "deny": [...], "allow_hosts": ["HOST[:PORT]"...],
// "env": [NAME...], "setenv": {NAME: VALUE}, "allow_local_binding": bool,
// "caches": [NAME...], "git_identity": bool}, each meaning what the flag of
// the same name means. *git_identity receives "git_identity" (default
// false): add_git_identity() (core/git_identity.h). Errors (usage_error,
// location "/shortcuts/KEY"): an unknown key, a value of another type, a
// variable name that is empty or holds "=" or a NUL.
result<policy_shortcuts> shortcuts_from_json(const nlohmann::json& j, bool* git_identity);

}  // namespace cordon::core
