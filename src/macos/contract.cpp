// contract.cpp — levels of the macOS mechanisms (see contract.h).
#include "macos/contract.h"

#include <string>

namespace cordon::macos_impl {
namespace {

control_status status(enforcement_level level, std::string mechanism, std::string detail = {}) {
  return {level, std::move(mechanism), std::move(detail)};
}

void network_levels(enforcement_contract& c, const sandbox_policy& policy, std::uint16_t broker_port) {
  using L = enforcement_level;
  const network_mode mode = policy.network.mode;
  const std::string mode_name = mode == network_mode::denied ? "denied" : mode == network_mode::filtered ? "filtered" : "unrestricted";
  // Neither control has anything to act on unless the mode says otherwise below.
  c[control::network_deny] = c[control::network_filter] = status(L::not_applicable, "", "network mode is " + mode_name);
  if (mode == network_mode::denied) {
    c[control::network_deny] = status(L::enforced, "seatbelt deny default (no network-outbound, -bind or -inbound rule)");
  }
  if (mode == network_mode::filtered) {
    c[control::network_deny] = status(
        L::enforced, "seatbelt: network-outbound only to (remote ip \"localhost:" + std::to_string(broker_port) + "\")",
        "localhost is the host's loopback here (no network namespace): the broker's port is the only one open");
    c[control::network_filter] = status(
        L::enforced, "cordon's network broker on 127.0.0.1:" + std::to_string(broker_port) +
                         " outside the sandbox (HTTP CONNECT, HTTP forward, SOCKS5); ordered host rules, names "
                         "resolved by the broker",
        "the broker's rule code is the Linux backend's, tested there; its splice relay is Linux-only");
  }
}

void limit_levels(enforcement_contract& c, const process_policy& p) {
  using L = enforcement_level;
  c[control::process_tree_cleanup] =
      p.tree_cleanup ? status(L::partial, "process group (setsid) killed with killpg(SIGKILL) when the command ends",
                              "a descendant that calls setsid() or setpgid() leaves the group; macOS has no "
                              "per-tree container to kill")
                     : status(L::not_applicable, "", "tree_cleanup is off");
  c[control::process_count] =
      p.max_processes ? status(L::not_enforced, "",
                               "refused: RLIMIT_NPROC counts every process of the user, not the tree, and Seatbelt "
                               "has no process count")
                      : status(L::not_applicable, "", "no limit set");
  c[control::memory] = p.memory_bytes
                           ? status(L::not_enforced, "",
                                    "refused: XNU does not enforce RLIMIT_AS as a virtual-memory ceiling and nothing "
                                    "bounds a tree")
                           : status(L::not_applicable, "", "no limit set");
  c[control::cpu] = p.cpu_seconds ? status(L::partial, "RLIMIT_CPU (soft = hard) on the command",
                                           "per process, not tree-wide: every descendant starts its own budget")
                                  : status(L::not_applicable, "", "no limit set");
  c[control::timeout] = p.timeout_ms ? status(L::partial, "supervisor deadline; killpg(SIGKILL) of the process group",
                                              "reaches the process group only (see process_tree_cleanup)")
                                     : status(L::not_applicable, "", "no timeout set");
}

}  // namespace

enforcement_contract macos_design_contract(const sandbox_policy& policy, std::uint16_t broker_port) {
  using L = enforcement_level;
  enforcement_contract c;
  const std::string hardlinks = "a hard link made earlier to a protected file is checked by its own path";
  c[control::filesystem_read] =
      policy.filesystem.read == read_mode::restricted
          ? status(L::enforced, "seatbelt file-read* allow-list (platform defaults, readable, writable, protected)")
          : status(L::not_applicable, "", "read = full: every path not denied is readable");
  c[control::filesystem_write] = status(L::enforced, "seatbelt file-write* allow-list (writable roots, /dev/null, /dev/fd)");
  c[control::filesystem_deny] = status(
      L::enforced, "seatbelt (require-not ...) exclusions on every allow, plus deny rules; no rule order involved",
      hardlinks);
  network_levels(c, policy, broker_port);
  c[control::unix_sockets] = status(
      L::enforced,
      "seatbelt: AF_UNIX bind only inside writable roots, connect only there and to the policy's unix_sockets "
      "(denied paths excluded); mach-lookup of listed services only",
      "a socket another process bound inside a writable root is reachable, as on Linux");
  c[control::environment] = status(L::enforced, "environment built from the policy by the launcher (execve envp)");
  limit_levels(c, policy.process);
  c[control::privilege] =
      status(L::partial, "the sandbox is inherited across exec and cannot be left",
             "set-user-ID executables still change the uid (no no_new_privs on macOS); the profile still bounds them");
  c[control::descriptor_hygiene] = status(L::enforced, "launcher closes every descriptor above 2 before execve");
  c[control::syscall_filter] =
      status(L::not_enforced, "", "no seccomp on macOS; Seatbelt filters operations, not system calls");
  c[control::terminal] = status(L::enforced,
                                "new session (setsid) + seatbelt: read and write of the inherited terminal only, no "
                                "file-ioctl on any terminal (TIOCSTI)",
                                "programs see no terminal: isatty(3) fails on a tty");
  c[control::devices] = status(L::partial, "seatbelt: /dev/null, zero, random, urandom and /dev/fd only",
                               "the host's /dev, not a private one; other nodes are denied by the profile");
  return c;
}

}  // namespace cordon::macos_impl
