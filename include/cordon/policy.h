// cordon/policy.h — sandbox_policy, the portable intent (JSON schema v1).
//
// Only cross-platform decisions live here (docs/policy.md).
// A policy grants nothing by itself: a backend compiles it into a plan, or
// refuses. JSON spelling: schemas/policy.v1.schema.json and docs/policy.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cordon/enforcement.h"

namespace cordon {

inline constexpr int policy_schema_version = 1;

// Ordered isolation levels: none < process < os_sandbox < container < vm.
enum class isolation_level { none, process, os_sandbox, container, vm };
std::string_view to_string(isolation_level level) noexcept;
std::optional<isolation_level> isolation_level_from_string(std::string_view name) noexcept;

enum class read_mode { full, restricted };
enum class network_mode { denied, unrestricted, filtered };
enum class rule_action { allow, deny };
enum class environment_inherit { none, all };

// Path entries are absolute, or start with a root token resolved at compile
// time: "{workspace}", "{home}" (the invoking user's home), "{run_tmp}" (a
// private per-run temporary directory, seen as /tmp inside the sandbox).
inline constexpr std::string_view token_workspace = "{workspace}";
inline constexpr std::string_view token_home = "{home}";
inline constexpr std::string_view token_run_tmp = "{run_tmp}";

struct filesystem_policy {
  read_mode read = read_mode::restricted;
  // Minimal system paths a process needs to start (listed in the report).
  bool include_platform_defaults = true;
  std::vector<std::string> readable;
  std::vector<std::string> writable;
  std::vector<std::string> protected_read_only;
  std::vector<std::string> denied;
  // Protect .git/hooks, .git/config and .gitmodules of every repository found
  // under the writable roots at launch (docs/deferred-execution.md).
  bool protect_vcs_metadata = false;
  // Named unix sockets the command may connect to (connect(2), and
  // sendto/sendmsg of a datagram to a named address). Every other named
  // socket is refused with EACCES, also under a readable or writable root
  // (docs/policy.md, "filesystem.unix_sockets").
  std::vector<std::string> unix_sockets;
  // Device nodes under /dev the sandbox's private /dev gets beside the
  // standard ones (null, zero, full, random, urandom, tty): a GPU, /dev/fuse,
  // /dev/kvm. Absent from the policy, absent inside (docs/policy.md,
  // "filesystem.devices").
  std::vector<std::string> devices;
  bool operator==(const filesystem_policy&) const = default;
};

// How the broker carries an allowed connection (docs/tls.md): `tunnel`
// relays the bytes (TLS checked for its server name only); `terminate`
// ends the client's TLS with a leaf certificate of the run's own authority,
// opens its own verified TLS to the destination, and decides every HTTP/1.1
// request on it.
enum class tls_mode { tunnel, terminate };

struct network_rule {
  std::string host;          // "example.com", "*.example.com", "**.example.com", "*", IP literal
  std::optional<int> port;   // 1..65535; absent = every port
  rule_action action = rule_action::deny;
  tls_mode tls = tls_mode::tunnel;
  // Only with tls "terminate" (validation refuses them otherwise): the
  // request methods allowed (upper case; empty = every method but
  // TRACE/TRACK), and the path prefixes allowed (each starts with '/';
  // empty = every path). "read_only": true is the shorthand for
  // GET/HEAD/OPTIONS; validation expands it into `methods`.
  std::vector<std::string> methods{};
  std::vector<std::string> paths{};
  bool read_only = false;
  // Only with tls "terminate": a GET request that asks to upgrade to a
  // WebSocket (`Upgrade: websocket`, judged by `methods` and `paths` like
  // any request) is forwarded, and once the destination answers 101 the
  // connection's bytes are relayed both ways unjudged (docs/tls.md,
  // "WebSocket"). False: every Upgrade is refused with 403.
  bool websocket = false;
  // Only on an allow rule whose host is a wildcard ("*", "*.example.com",
  // "**.example.com"): what the broker forwards of the sandbox's DNS
  // queries that this rule decides, a channel out whatever the record type
  // (docs/network.md, "DNS inside the sandbox"). `dns_types`: the record
  // types forwarded, by name ("A", "AAAA", "CNAME", "HTTPS", "SVCB", "MX",
  // "TXT", "NS", "SRV", "PTR", "CAA", "SOA"; upper case; empty = every
  // type); a query of another type is answered REFUSED. `dns_queries_per_minute`: at most this many
  // queries (1..1000000) are forwarded for the rule in each minute, counted
  // from the first query of that minute; more are answered REFUSED. Each
  // refusal is evidence (action "deny").
  std::vector<std::string> dns_types{};
  std::optional<std::uint64_t> dns_queries_per_minute{};
  bool operator==(const network_rule&) const = default;
};

// A credential the broker adds to requests to one host over TLS it
// terminates (docs/tls.md, "Policy fields"). The secret is read by
// the supervisor before the run from the host environment variable
// `from_env` or the file `from_file` (exactly one); the sandbox never gets
// it. `format` is the header value with "{}" standing for the secret.
// `placeholder_env`, when set, is an environment variable the sandbox gets
// with the value "cordon-placeholder" (for tools that refuse to send a
// request without a token).
struct network_credential {
  std::string host;    // a normalized host name, matched exactly
  std::string header;  // an HTTP field name ("Authorization")
  std::string from_env;
  std::string from_file;
  std::string format = "{}";
  std::string placeholder_env;
  bool operator==(const network_credential&) const = default;
};

// A port published from the sandbox (docs/network.md, "Published ports"):
// cordon listens on the host's 127.0.0.1:host_port (only there) and relays
// each connection to 127.0.0.1:port inside the sandbox's own network
// namespace. Both 1..65535; host_port defaults to port.
struct published_port {
  int port = 0;
  int host_port = 0;
  bool operator==(const published_port&) const = default;
};

// At most this many published ports per policy (validation).
inline constexpr std::size_t max_published_ports = 16;

struct network_policy {
  network_mode mode = network_mode::denied;
  // May the command listen on loopback inside its own network namespace.
  bool allow_local_binding = false;
  // Ports relayed from the host's loopback into the sandbox's namespace:
  // mode "denied", or "filtered" with allow_local_binding (validation).
  std::vector<published_port> publish{};
  std::vector<network_rule> rules;               // only in `filtered` mode
  rule_action default_action = rule_action::deny;  // must stay deny outside `filtered`
  std::vector<network_credential> credentials{};   // only in `filtered` mode, for terminated hosts
  bool operator==(const network_policy&) const = default;
};

struct environment_policy {
  environment_inherit inherit = environment_inherit::none;
  std::vector<std::string> allow;                          // names passed through from the host
  std::vector<std::pair<std::string, std::string>> set;    // explicit values, applied last, in order
  bool operator==(const environment_policy&) const = default;
};

// The largest timeout a policy may carry: 10^12 seconds, in milliseconds. Up
// to here every millisecond value survives a JSON round trip exactly.
inline constexpr std::uint64_t max_timeout_ms = 1'000'000'000'000'000;

// Absent means unlimited; zero is a validation error.
struct process_policy {
  bool tree_cleanup = true;
  std::optional<std::uint64_t> max_processes;
  std::optional<std::uint64_t> memory_bytes;
  std::optional<std::uint64_t> cpu_seconds;
  std::optional<std::uint64_t> timeout_ms;  // JSON: "timeout_seconds" (number, may be fractional);
                                            // 1..max_timeout_ms
  // A private pty for a run whose stdin is a terminal (docs/policy.md,
  // "process.allow_pty"). Without it the terminal is relayed as a pipe and
  // the command has no terminal.
  bool allow_pty = false;
  // Core dumps: off unless set (RLIMIT_CORE 0, hard and soft, which the
  // command cannot raise). A core file holds the process's memory: secrets
  // and the host's environment (docs/policy.md, "Fields"; docs/linux-backend.md, "Core dumps").
  bool core_dumps = false;
  bool operator==(const process_policy&) const = default;
};

struct sandbox_policy {
  int schema_version = policy_schema_version;
  std::string name;
  isolation_level isolation = isolation_level::os_sandbox;
  filesystem_policy filesystem;
  network_policy network;
  environment_policy environment;
  process_policy process;
  // Per-control minimum acceptable level. Overrides the requirement the
  // policy's content implies; a value below the implied one is a relaxation
  // and is repeated as a warning in every report.
  std::map<control, enforcement_level> enforcement;
  // The same per platform ("linux", "macos", "windows"): what the policy
  // requires where that platform's mechanisms give less (a built-in profile
  // states here that macOS cleans up a process group, not a tree). Applied
  // for the platform a plan is compiled for, before `enforcement`, whose
  // entries hold on every platform and win. A value below the implied one is
  // a relaxation and is repeated as a warning in every report of that platform.
  std::map<std::string, std::map<control, enforcement_level>> platform_enforcement;
  // Free host labels. They grant nothing.
  std::map<std::string, std::string> metadata;
  bool operator==(const sandbox_policy&) const = default;
};

// The level each control must reach for this policy: what its content implies
// (e.g. network denied -> network_deny enforced), then the explicit
// `enforcement` entries on top. Controls absent from the map are not required.
// This overload ignores `platform_enforcement`; the compile driver uses the
// one below with the plan's platform.
std::map<control, enforcement_level> required_enforcement(const sandbox_policy& policy);

// The same for a plan compiled for `platform` ("linux", "macos", "windows"):
// implied, then `platform_enforcement[platform]`, then `enforcement`
// (docs/policy.md, "Enforcement requirements").
std::map<control, enforcement_level> required_enforcement(const sandbox_policy& policy, std::string_view platform);

// The entries that lower an implied requirement on `platform`, as one warning
// line each (e.g. "memory: policy accepts partial (its content implies
// enforced)"; an entry of `platform_enforcement` adds " on macos").
// Without a platform, only `enforcement` is read.
std::vector<std::string> relaxation_warnings(const sandbox_policy& policy, std::string_view platform = {});

}  // namespace cordon
