// overrides.h — the shortcut flags of `cordon run` and `cordon policy
// explain` (--ro, --rw, --deny, --net, --env, --setenv, --memory,
// --max-procs, --cpu, --timeout, --accept). They edit the chosen policy or profile
// before its one compile; there is no second launch path (docs/architecture.md).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cordon/policy.h"
#include "cordon/result.h"

namespace cordon::cli {

struct policy_overrides {
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
  std::vector<std::string> caches;             // --cache NAME (cli/caches.h)

  bool empty() const;
};

// Declares the flags on `app`, storing into `out`. Values are checked by
// CLI11 validators, so a malformed value is a usage error before anything
// runs.
void add_policy_flags(CLI::App& app, policy_overrides& out);

// Parses a size: decimal bytes, or with a suffix K, M, G or T (either case;
// powers of 1024), e.g. "512M" = 536870912. Errors (usage_error): no digits,
// an unknown suffix, zero, or more than 2^64-1 bytes.
result<std::uint64_t> parse_size(const std::string& text);

// Parses --allow-host: "HOST", "HOST:PORT", "[IPv6]" or "[IPv6]:PORT" (a
// bare IPv6 literal has no port) into an allow rule. The host pattern itself
// is checked later by validation, like any policy's.
// Errors (usage_error): an unclosed bracket, a port outside 1..65535.
result<network_rule> parse_host_port(const std::string& text);

// Applies the flags to `policy` (as loaded, before validation):
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
//  --env NAME adds NAME to environment.allow (once) and removes a value the
//    policy sets for NAME (the profiles set PATH and HOME), so that the host's
//    value really passes; NAME unset on the host is then unset inside;
//  --cache NAME: apply_caches() (cli/caches.h) with $HOME;
//  --setenv NAME=VALUE sets NAME (replacing a value the policy sets);
//  --memory, --max-procs, --cpu, --timeout set the process limits;
//  --accept CONTROL=LEVEL sets enforcement[CONTROL] = LEVEL: the policy then
//    accepts that level (a relaxation, repeated as a warning in the report)
//    or demands it.
// Errors (usage_error): a --memory value parse_size refuses; an --accept
// naming an unknown control or level.
result<void> apply_overrides(sandbox_policy& policy, const policy_overrides& flags, const std::string& cwd);

}  // namespace cordon::cli
