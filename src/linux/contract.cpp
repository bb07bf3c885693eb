#include "linux/contract.h"

#include <string>

#include "linux/process_limits.h"

namespace cordon::linux_impl {
namespace {

std::string landlock_suffix(const linux_host_facts& facts) {
  if (facts.landlock_abi == 0) return "";
  return " + landlock abi " + std::to_string(facts.landlock_abi);
}

control_status status(enforcement_level level, std::string mechanism, std::string detail = {}) {
  return {level, std::move(mechanism), std::move(detail)};
}

}  // namespace

enforcement_contract linux_contract(const sandbox_policy& policy, const linux_plan_payload& payload,
                                    const linux_host_facts& facts) {
  using L = enforcement_level;
  enforcement_contract c;
  const auto& fs = policy.filesystem;
  // The exact Landlock features a run applies (ABI, rights groups, scopes).
  const std::string ll = payload.landlock.abi > 0 ? " + " + payload.landlock.describe() : landlock_suffix(facts);

  // Without Landlock (not built, or left out of lsm=) the binds carry every rule alone.
  const std::string only_layer =
      facts.landlock_abi == 0 ? "Landlock not available: the mount namespace is the only layer" : "";
  if (fs.read == read_mode::restricted) {
    c[control::filesystem_read] =
        status(L::enforced, "mount namespace (fresh root of read-only binds)" + ll, only_layer);
  } else {
    c[control::filesystem_read] = status(L::not_applicable, "", "read = full: every path not denied is readable");
  }
  c[control::filesystem_write] =
      status(L::enforced, "mount namespace (read-only binds; writable binds only for writable roots)" + ll, only_layer);
  c[control::filesystem_deny] = status(
      L::enforced, "mount namespace (denied paths masked; protected paths re-bound read-only)",
      facts.landlock_abi > 0 ? "Landlock cannot subtract from a granted tree, so masks are the only layer here"
                             : only_layer);

  switch (policy.network.mode) {
    case network_mode::denied:
      // The namespace is the layer: its only interface is its own loopback,
      // which the command may use (local servers); seccomp narrows the
      // socket families and checks every connect(2) (loopback only).
      c[control::network_deny] = status(
          L::enforced, std::string("network namespace (own loopback only, no route out)") +
                           (policy.network.allow_local_binding
                                ? " + seccomp (connect(2) checked: loopback only)"
                                : " + seccomp (socket families other than AF_UNIX/AF_INET/AF_INET6; connect(2) "
                                  "checked: loopback only)"));
      c[control::network_filter] = status(L::not_applicable, "", "network mode is denied");
      break;
    case network_mode::unrestricted:
      c[control::network_deny] = status(L::not_applicable, "", "network mode is unrestricted");
      c[control::network_filter] = status(L::not_applicable, "", "network mode is unrestricted");
      break;
    case network_mode::filtered:
      // Direct networking is cut exactly as in denied mode, except that the
      // broker's loopback listener is reachable.
      c[control::network_deny] = status(
          L::enforced, std::string("network namespace (loopback only)") +
                           " + seccomp (socket families other than AF_UNIX/AF_INET/AF_INET6; connect(2) checked)" +
                           (facts.landlock_abi >= 4 && payload.landlock.restrict_tcp
                                ? " + landlock tcp connect only to port " + std::to_string(broker_port)
                                : ""));
      // Both layers or nothing: a broker without the namespace would be a
      // suggestion, and the namespace alone filters nothing.
      if (payload.new_network_namespace && payload.network_broker) {
        c[control::network_filter] =
            status(L::enforced, "network broker outside the sandbox (HTTP CONNECT, HTTP forward, SOCKS5) on 127.0.0.1:" +
                                    std::to_string(broker_port) + " and " + broker_socket_path +
                                    "; ordered host rules, names resolved by the broker");
      } else {
        c[control::network_filter] = status(L::not_enforced, "", "the broker or the network namespace is missing");
      }
      break;
  }
  {
    std::string mechanism = "private /tmp and /dev";
    if (payload.new_network_namespace) mechanism += ", network namespace (abstract sockets)";
    if (facts.landlock_abi >= 6) mechanism += ", landlock abstract-socket scope";
    std::string detail =
        "a named socket under a readable or writable root stays connectable; "
        "no Landlock ABI here restricts connect(2) to named sockets";
    // The host's network and no abstract-socket scope (Landlock ABI 6): nothing separates them.
    if (!payload.new_network_namespace && facts.landlock_abi < 6) {
        detail += "; the host's abstract sockets are connectable too (the host's network namespace, and no "
                  "Landlock abstract-socket scope on this kernel)";
    }
    if (payload.seccomp.unix_connect_checked) {
      // Named sockets: every connect(2) is performed by the supervisor on
      // the inode it checked (unix_connect.h); datagrams cannot name one.
      std::string allowed = payload.seccomp.unix_private_tmp ? "the run's private /tmp" : "";
      for (const auto& path : payload.seccomp.unix_sockets_allowed) allowed += (allowed.empty() ? "" : ", ") + path;
      c[control::unix_sockets] = status(
          L::enforced,
          mechanism + ", seccomp: connect(2) performed by the supervisor on the named socket it resolved inside "
                      "the sandbox's root (openat2 RESOLVE_IN_ROOT), AF_UNIX datagram sockets refused",
          "connectable named sockets: " + (allowed.empty() ? std::string("none") : allowed));
    } else {
      c[control::unix_sockets] = status(L::partial, mechanism, detail);
    }
  }
  c[control::environment] = status(L::enforced, "clean environment built by the supervisor");
  c[control::process_tree_cleanup] =
      status(L::enforced, "PID namespace (every descendant dies with its init) + supervisor");

  state_limit_levels(policy, {payload.rlimits, payload.cgroups, payload.tree_limits}, c);
  if (policy.process.timeout_ms) {
    c[control::timeout] = status(L::enforced, "supervisor deadline; SIGKILL of the PID namespace's init");
  } else {
    c[control::timeout] = status(L::not_applicable, "", "no timeout set");
  }
  c[control::privilege] = status(
      L::enforced, "user namespace, no_new_privs, empty capability sets (bounding, ambient), locked securebits");
  c[control::descriptor_hygiene] = status(L::enforced, "close_range(3, ~0, CLOSE_RANGE_CLOEXEC) before exec");
  if (facts.seccomp) {
    c[control::syscall_filter] =
        status(L::enforced, "seccomp (libseccomp), " + std::to_string(payload.seccomp.blocked.size()) + " rules");
  } else {
    c[control::syscall_filter] = status(L::not_enforced, "", "seccomp is not available in this kernel");
  }
  // stdio (stdio_plan.h): the caller's terminal is never the command's.
  std::string terminal = policy.process.allow_pty
                             ? "an interactive terminal (stdin and stdout) becomes a private pty (own devpts) relayed by the supervisor; "
                               "new session"
                             : "a terminal is relayed as a pipe (process.allow_pty is false); new session";
  if (facts.seccomp) terminal += " + seccomp (TIOCSTI, TIOCLINUX)";
  // Relayed output bound for a terminal passes the escape sequence filter (core/terminal_filter.h).
  terminal += "; escape sequences to the caller's terminal filtered (clipboard, answers, keys, passthrough, C1)";
  c[control::terminal] = status(L::enforced, terminal);
  c[control::devices] = status(L::enforced, "private /dev (null zero full random urandom tty, devpts, shm)");
  return c;
}

}  // namespace cordon::linux_impl
