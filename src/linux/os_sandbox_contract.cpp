// os_sandbox_contract.cpp — the levels of the os_sandbox backend (os_sandbox_contract.h).
#include "linux/os_sandbox_contract.h"

#include <algorithm>
#include <string>

namespace cordon::linux_impl {
namespace {

using L = enforcement_level;

void state_filesystem(const sandbox_policy& policy, const os_sandbox_payload& payload, enforcement_contract& c) {
  const std::string ll = payload.landlock.describe();
  const std::string shared_paths = "no private view: the command sees the host's paths, and what Landlock grants";
  if (policy.filesystem.read == read_mode::restricted) {
    c[control::filesystem_read] = {L::enforced, ll + " (read rules: readable roots, platform defaults, /proc)",
                                   shared_paths};
  } else {
    c[control::filesystem_read] = {L::not_applicable, "", "read = full: every path not denied is readable"};
  }
  if (payload.landlock.abi >= 3) {
    c[control::filesystem_write] = {L::enforced, ll + " (write rules for writable roots only)", shared_paths};
  } else {
    c[control::filesystem_write] = {
        L::partial, ll + " (write rules for writable roots only)",
        "Landlock ABI " + std::to_string(payload.landlock.abi) +
            " handles no truncate right (ABI 3): truncate(2) of a readable file the user may write is not refused"};
  }
  const bool exceptions = !policy.filesystem.denied.empty() || !policy.filesystem.protected_read_only.empty() ||
                          policy.filesystem.protect_vcs_metadata;
  if (!exceptions) {
    c[control::filesystem_deny] = {L::not_applicable, "", "no denied or protected paths"};
  } else if (payload.split.empty()) {
    c[control::filesystem_deny] = {L::enforced, ll + " (no granted root holds a denied or protected path)", ""};
  } else {
    std::string dirs;
    for (const auto& d : payload.split) dirs += (dirs.empty() ? "" : ", ") + d;
    c[control::filesystem_deny] = {
        L::enforced, ll + " (roots holding a denied or protected path granted entry by entry)",
        "Landlock cannot take a right back below a granted directory; these directories accept no new entries "
        "and an entry that appears in them after compile is not visible inside: " + dirs};
  }
  c[control::devices] = {L::enforced, ll + " (device rights on /dev/null, zero, full, random, urandom and "
                                           "filesystem.devices only)",
                         "the host's /dev, without a private one: other nodes are listed but not opened"};
}

// Filtered: the broker on a host loopback port (os_sandbox_network.h).
void state_filtered(const sandbox_policy& policy, const os_sandbox_payload& payload, enforcement_contract& c) {
  const bool terminate = std::any_of(policy.network.rules.begin(), policy.network.rules.end(),
                                     [](const network_rule& r) { return r.tls == tls_mode::terminate; });
  const std::string no_dns =
      "no network namespace: no resolver inside (UDP sockets are refused and /etc/resolv.conf is the host's), "
      "so names reach the broker only through the proxy variables (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY with "
      "socks5h); no transparent routing: a program that ignores them gets EACCES";
  const std::string mechanism =
      "broker on a host loopback port chosen per run (127.0.0.1); seccomp: IPv4/IPv6 TCP streams only, "
      "connect(2) performed by the supervisor on its own copy of the socket (pidfd_getfd) and address, to the "
      "broker's port on 127.0.0.1 only, listen(2) on them refused; landlock tcp bind/connect (none allowed to "
      "the command itself)";
  if (payload.landlock.abi < 4 || !payload.seccomp.listen_checked) {
    const std::string why = payload.landlock.abi < 4
                                ? "Landlock ABI " + std::to_string(payload.landlock.abi) +
                                      " has no TCP rules (ABI 4): a TCP socket could bind a port on every host "
                                      "address; use linux-namespaces"
                                : "seccomp is not available: connect(2) cannot be taken over by the supervisor";
    c[control::network_deny] = {L::not_enforced, "", why};
    c[control::network_filter] = {L::not_enforced, "", why};
    return;
  }
  if (terminate) {
    c[control::network_deny] = {L::enforced, mechanism, no_dns};
    c[control::network_filter] = {L::not_enforced, "",
                                  "TLS termination needs the run's CA bundle at a fixed path of the sandbox's own "
                                  "view (a mount namespace); use linux-namespaces"};
    return;
  }
  c[control::network_deny] = {L::enforced, mechanism, no_dns};
  c[control::network_filter] = {L::enforced, mechanism, no_dns};
}

void state_network(const sandbox_policy& policy, const os_sandbox_payload& payload, enforcement_contract& c) {
  const bool tcp = payload.landlock.restrict_tcp && payload.landlock.abi >= 4;
  const std::string tcp_layer =
      tcp ? " + landlock tcp bind/connect (none allowed)"
          : "; no Landlock TCP rules before ABI 4: seccomp's socket families are the only layer";
  switch (policy.network.mode) {
    case network_mode::denied:
      if (policy.network.allow_local_binding) {
        c[control::network_deny] = {L::not_enforced, "",
                                    "allow_local_binding needs a network namespace of the sandbox's own: on the "
                                    "host's, a socket that may reach loopback may reach every address"};
      } else {
        c[control::network_deny] = {L::enforced, "seccomp (socket families other than AF_UNIX)" + tcp_layer,
                                    "no network namespace: the host's network, reached by no IP socket (IPv4/IPv6 sockets fail "
                                    "with EAFNOSUPPORT, so a local server needs linux-namespaces)"};
      }
      c[control::network_filter] = {L::not_applicable, "", "network mode is denied"};
      break;
    case network_mode::unrestricted:
      c[control::network_deny] = {L::not_applicable, "", "network mode is unrestricted"};
      c[control::network_filter] = {L::not_applicable, "", "network mode is unrestricted"};
      break;
    case network_mode::filtered:
      state_filtered(policy, payload, c);
      break;
  }
  const bool scoped = payload.landlock.scope_signals_and_abstract_sockets && payload.landlock.abi >= 6;
  const std::string abstract = scoped ? ", landlock abstract-socket scope" : "";
  if (payload.seccomp.unix_connect_checked) {
    c[control::unix_sockets] = {
        L::enforced,
        "seccomp: connect(2) performed by the supervisor on the named socket it resolved, only when "
        "filesystem.unix_sockets lists it or it is in the run's temporary directory; abstract names (the host's: "
        "no network namespace) and AF_UNIX datagram sockets refused" + abstract,
        "the command's own processes cannot reach each other by abstract names either; it may bind an abstract "
        "name that a host program then connects to"};
  } else {
    c[control::unix_sockets] = {
        L::partial, scoped ? "landlock abstract-socket scope" : "",
        scoped ? "network unrestricted: every named unix socket the user may write is connectable"
               : "network unrestricted: every named unix socket the user may write is connectable, and the "
                 "host's abstract sockets are connectable (no Landlock abstract-socket scope before ABI 6)"};
  }
}

}  // namespace

enforcement_contract os_sandbox_contract(const sandbox_policy& policy, const os_sandbox_payload& payload,
                                         const host_facts& facts, const linux_host_facts& linux_facts) {
  enforcement_contract c;
  state_filesystem(policy, payload, c);
  state_network(policy, payload, c);
  c[control::environment] = {L::enforced, "clean environment built by the supervisor",
                             payload.run_tmp ? "TMPDIR names the run's temporary directory" : ""};
  c[control::process_tree_cleanup] = {
      L::enforced,
      "own session and process group + the supervisor as child subreaper (every orphan of the tree comes to it); "
      "at the end the group and every such process are SIGKILLed until none is left",
      "no PID namespace"};
  state_limit_levels(policy, payload.limits, c);
  if (policy.process.timeout_ms) {
    c[control::timeout] = {L::enforced, "supervisor deadline; SIGKILL of the tree",
                           "the supervisor's clock: a stopped cordon delays the kill"};
  } else {
    c[control::timeout] = {L::not_applicable, "", "no timeout set"};
  }
  const bool scoped = payload.landlock.abi >= 6;
  std::string privilege = "no_new_privs, Landlock domain (no ptrace of processes outside it), seccomp";
  if (facts.uid == 0) privilege += ", empty capability sets and locked securebits (the caller is root)";
  c[control::privilege] = {
      L::enforced, privilege,
      std::string("no PID or IPC namespace: the host's processes are visible in /proc, and the caller's System V "
                  "IPC objects (shared memory, semaphores, message queues) are reachable by their keys; ") +
          (scoped ? "signals to processes outside the sandbox refused (landlock signal scope)"
                  : "the command can signal the caller's other processes (no Landlock signal scope before ABI 6)")};
  c[control::descriptor_hygiene] = {L::enforced, "close_range(3, ~0, CLOSE_RANGE_CLOEXEC) before exec", ""};
  if (linux_facts.seccomp) {
    c[control::syscall_filter] = {
        L::enforced, "seccomp (libseccomp), " + std::to_string(payload.seccomp.blocked.size()) + " rules", ""};
  } else {
    c[control::syscall_filter] = {L::not_enforced, "", "seccomp is not available in this kernel"};
  }
  c[control::terminal] = {L::enforced,
                          "new session; a terminal is relayed as a pipe (no private pty without a devpts of the "
                          "sandbox's own) + seccomp (TIOCSTI, TIOCLINUX); escape sequences to the caller's terminal "
                          "filtered",
                          ""};
  return c;
}

}  // namespace cordon::linux_impl
