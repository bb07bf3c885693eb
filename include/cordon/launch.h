// cordon/launch.h — what a launcher is asked to run, and what it returns.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace cordon {

// The command of a prepared sandbox (cordon/prepared.h), as the host sent
// it: what launch_request carries for an ordinary run, plus the command's
// three standard descriptors (owned by the launcher once returned).
struct prepared_command {
  std::vector<std::string> argv;
  std::string working_directory;
  std::vector<std::string> host_environment;
  int stdio[3] = {-1, -1, -1};
};

struct launch_request {
  std::vector<std::string> argv;             // argv[0] is looked up in the sandbox's PATH
  std::string working_directory;             // absolute; empty = the workspace, else "/"
  std::vector<std::string> host_environment; // "NAME=VALUE" entries the policy may pass through
  // When >= 0: a descriptor the supervisor watches; readable or hung up means
  // "cancel": the tree is killed and run_outcome::cancelled set. Used by the
  // run API's helper (cordon/run.h); the caller keeps ownership.
  int cancel_fd = -1;
  // A prepared sandbox (cordon/prepared.h, docs/prepared.md), used by the
  // cordon-supervisor helper: when next_command is set, argv is empty and the
  // launcher sets the sandbox up to just before the command, calls `ready`,
  // and once cancel_fd is readable calls next_command, which returns the
  // command, or nullopt when the host gave the sandbox up (the tree is then
  // killed and the run reported cancelled).
  std::function<void(const std::string& prepared_at)> ready{};
  std::function<std::optional<prepared_command>()> next_command{};
};

// A kind of attempt that confinement stopped.
struct violation {
  std::string kind;    // e.g. "seccomp", "network_connect"
  std::string target;  // e.g. syscall name, address
  std::uint64_t count = 0;
};

// One connection the network broker decided (filtered mode), as the report
// lists it. Times in milliseconds, sizes in bytes.
// One HTTP request on a connection the broker terminated (docs/tls.md).
struct network_request {
  std::string method;
  std::string host;
  std::string path;          // the request target without its query
  int status = 0;            // the status the command got (the broker's own 403, 400 or 502 included)
  std::string action;        // "allow" (forwarded) or "deny" (answered by the broker)
  std::string reason;        // why it was refused, or why a forwarded one got the broker's 502; else empty
  std::uint64_t bytes_sent = 0;      // request head and body sent upstream
  std::uint64_t bytes_received = 0;  // response head and body relayed to the command
  std::vector<std::string> injected;  // the credentials added (their header names), never the values
  // "websocket" once the destination answered 101 and the broker relayed
  // the connection both ways unjudged (a rule with "websocket": true,
  // docs/tls.md); else empty. The bytes relayed after the 101, towards the
  // destination and towards the command (bytes_sent and bytes_received
  // count the HTTP request and response heads only).
  std::string upgraded;
  std::uint64_t upgraded_bytes_sent = 0;
  std::uint64_t upgraded_bytes_received = 0;
};

struct network_connection {
  // "http_connect", "http_forward", "socks5", "transparent" (a connect(2) the
  // supervisor routed to the broker), "dns" (a query to the sandbox's
  // resolver; `host` is the name, `address` the first answer), or "unknown"
  // when unparsed
  std::string protocol;
  std::string original;      // transparent: the address:port the command connected to
  // transparent: what named the destination: "tls_sni", "http_host", "dns"
  // (the name the sandbox resolved to that address) or "address"
  std::string name_source;
  std::string host;          // destination as the command named it (normalized); empty if unparsed
  int port = 0;              // destination port; 0 if unparsed
  std::optional<std::size_t> rule;  // index of the rule that matched; empty = default_action
  bool rule_consulted = false;       // false: no rule decided (malformed request, broker limit); `rule` is meaningless
  // What happened, one value per outcome: "allow" (relayed), "deny" (refused
  // by a rule, the default action or the address check; or new work refused
  // past the broker's memory budget, rule_consulted false and a reason that
  // starts "broker_budget: ", docs/network.md "Memory budget"), "unreachable"
  // (allowed, but resolution or the connection failed), "malformed" (no valid
  // request, no rule consulted; or no valid TLS where the deciding rule
  // required it), "error" (the broker's limits, an internal error, or the run
  // ended before a decision). A `tls: "terminate"` connection: docs/tls.md,
  // "Evidence".
  std::string action;
  std::string reason;        // why it was not relayed; empty when it was
  std::string address;       // the address the broker connected to, when it did
  std::uint64_t bytes_sent = 0;      // command -> destination
  std::uint64_t bytes_received = 0;  // destination -> command
  std::int64_t duration_ms = 0;      // accept to close
  std::string tls{};                 // "terminate" when the broker ended the command's TLS; empty otherwise
  std::vector<network_request> requests{};  // terminated: each request, in order (at most 256 kept)
  // DNS: how many queries this entry stands for (repeated queries for one
  // name with one answer are listed once, docs/network.md "Evidence"); 1 otherwise
  std::uint64_t count = 1;
};

// A credential the broker injected (docs/tls.md): its host and header, and
// how many requests got it. Never the value.
struct network_injection {
  std::string host;
  std::string header;
  std::uint64_t count = 0;
};

// Everything the broker decided during one run. At most `max_recorded`
// entries are listed; a full list makes room for a more informative entry
// by dropping a less informative one (broker/evidence_stream.h,
// add_connection); the counters count all of them.
struct network_evidence {
  static constexpr std::size_t max_recorded = 256;
  std::vector<std::string> listeners;  // where the command reaches the broker ("127.0.0.1:3128", a socket path)
  std::vector<network_connection> connections;
  std::uint64_t total = 0;
  std::uint64_t allowed = 0;           // relayed (connected to the destination)
  std::uint64_t denied = 0;            // refused by a rule, the default action or the address check
  std::uint64_t unreachable = 0;       // allowed, but resolution or the connection failed
  std::uint64_t malformed = 0;         // no valid request (or no valid TLS where a rule required it)
  std::uint64_t error = 0;             // broker limits, internal errors, run ended before a decision
  std::uint64_t not_recorded = 0;      // connections beyond max_recorded
  std::uint64_t aggregated = 0;        // DNS queries counted into an earlier entry for the same name (its `count`)
  // The broker's relay memory (docs/network.md, "Memory budget"): the
  // budget for bulk buffers, and the most its connections held at once
  // (kernel socket queues, pipe contents and user-space buffers, sampled
  // every 100 ms and at the end), bytes.
  std::uint64_t memory_budget_bytes = 0;
  std::uint64_t memory_peak_bytes = 0;
  // TLS termination (docs/tls.md): where the sandbox finds the run CA's
  // certificate, the variables that name it, and the credentials injected.
  std::string ca_certificate{};
  std::vector<std::string> ca_variables{};
  std::vector<network_injection> injections{};
};

// Deferred execution (docs/deferred-execution.md): something the command
// left in a writable root that the host's git, shell or desktop would later
// run or trust. Each finding is also a violation of the same kind.
struct deferred_execution_finding {
  // "repository_created" (a .git directory or file, a bare repository, the
  // gitdir a .git file names), "repository_changed" (a config, hooks,
  // commondir, gitdir or included config file of a repository that existed:
  // its inode, ctime or content differs), "repository_redirect_created"
  // (commondir or config.worktree), "executable_config" (a key git runs or
  // follows: core.fsmonitor, filter.*.clean, alias.x = !cmd, ...),
  // "hooks_path" (core.hooksPath), "hook" (a hook in a new repository),
  // "gitlink_added" (mode 160000 in an index), "startup_file" (a shell,
  // systemd, autostart, ~/.local/bin or git start-up path created or
  // changed), "scan_incomplete" (the bound was reached: what lies beyond is
  // unknown)
  std::string kind;
  std::string path;    // host path of the file or repository
  std::string key;     // executable_config / hooks_path: the key, lowercased as `git config --list` prints it; else ""
  std::string detail;  // the value, what changed, or the bound
};

struct deferred_execution_evidence {
  std::vector<deferred_execution_finding> findings;
  std::uint64_t entries = 0;  // directories the post-run scan visited
  bool complete = true;       // false: the bound was reached (a scan_incomplete finding says which)
  // How the post-run scan took its directory listings: "watch" (a pool's
  // inotify watch sets, docs/deferred-execution.md "The pool's watch
  // sets"), or "walk" (every directory examined), "walk: <why>" when a
  // watch set was in doubt (IN_Q_OVERFLOW, ENOSPC, ...).
  std::string listings = "walk";
};

// One published port's relay (docs/network.md, "Published ports"): where
// it listened on the host, and what it carried. The relay holds at most
// max_connections at once, each with two buffers of buffer_bytes.
struct published_port_evidence {
  int port = 0;                          // inside the sandbox (127.0.0.1)
  int host_port = 0;                     // on the host
  std::string host_address = "127.0.0.1";
  std::uint64_t max_connections = 0;
  std::uint64_t buffer_bytes = 0;        // per direction and connection
  std::uint64_t accepted = 0;            // connections relayed into the sandbox
  std::uint64_t refused = 0;             // closed at once: max_connections were open
  std::uint64_t failed = 0;              // the sandbox's port did not accept (nothing listening)
  std::uint64_t bytes_in = 0;            // host -> sandbox
  std::uint64_t bytes_out = 0;           // sandbox -> host
};

struct run_outcome {
  bool exited = false;          // the command exited normally
  int exit_code = 0;            // valid when exited
  int signal = 0;               // terminating signal when !exited
  bool timed_out = false;       // the wall-clock timeout fired and killed the tree
  bool interrupted = false;     // cordon received SIGINT/SIGTERM/SIGHUP and forwarded it
  bool cancelled = false;       // the run API's cancel() (launch_request::cancel_fd) killed the tree
  std::int64_t wall_ms = 0;     // launch to exit of the whole tree, milliseconds
  std::int64_t user_cpu_ms = 0; // CPU time of reaped descendants, milliseconds
  std::int64_t system_cpu_ms = 0;
  std::uint64_t max_rss_bytes = 0;      // largest resident set of any one process in the tree
  // With a cgroup for the run: the tree's peak memory (bytes) and CPU time
  // (milliseconds), as the kernel accounted them.
  std::optional<std::uint64_t> peak_memory_bytes;
  std::optional<std::uint64_t> tree_cpu_ms;
  bool memory_limit_hit = false;   // the memory controller killed a process (OOM)
  bool process_limit_hit = false;  // a fork was refused at the process ceiling
  bool cpu_limit_hit = false;      // the tree used its CPU time and was killed
  std::vector<std::string> environment_names;  // names (never values) passed to the command
  std::vector<std::string> mounts;      // the mount table applied, one line per mount, in order
  std::vector<violation> violations;
  std::vector<std::string> warnings;    // found at launch (e.g. an absent .gitmodules)
  std::string working_directory;        // inside the sandbox
  std::optional<network_evidence> network;  // filtered mode: the broker's decisions
  std::vector<published_port_evidence> published{};  // network.publish: the relays
  // The post-run check of the writable roots (filesystem.protect_vcs_metadata).
  std::optional<deferred_execution_evidence> deferred_execution;
  // A prepared run (cordon/prepared.h): when its sandbox was ready (UTC,
  // "YYYY-MM-DDTHH:MM:SS.mmmZ"); empty for an ordinary run.
  std::optional<std::string> prepared_at{};
};

}  // namespace cordon
