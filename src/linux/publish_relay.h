// publish_relay.h — published ports (policy network.publish; docs/network.md,
// "Published ports"): the host's 127.0.0.1:host_port relayed to 127.0.0.1:port
// inside the sandbox's own network namespace.
//
// The supervisor binds the host listeners before the sandbox exists (a port
// in use refuses the run, typed), then forks one relay process. The relay
// enters the sandbox's user namespace (when it has one of its own) and its
// network namespace, so that every socket it opens towards the command lives
// there, drops every capability, sets no_new_privs and relays each accepted
// connection with two bounded buffers. It is not in the sandbox's PID
// namespace: the command cannot see or signal it. It dies with the
// supervisor (PR_SET_PDEATHSIG) and is stopped after the run, when it hands
// its counts back.
//
// Nothing else reaches in: the listener is on 127.0.0.1 only (not the host's
// other addresses), and only the published port inside is a destination.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <vector>

#include "cordon/launch.h"
#include "cordon/policy.h"
#include "cordon/result.h"
#include "posix/unique_fd.h"

namespace cordon::linux_impl {

// Bounds of one published port's relay.
inline constexpr std::uint64_t publish_max_connections = 32;     // open at once; more are closed at accept
inline constexpr std::uint64_t publish_buffer_bytes = 64 * 1024;  // per direction and connection
// After the run: how long what the command sent last may still take to reach the host.
inline constexpr std::uint64_t publish_drain_ms = 1000;

class publish_relay {
 public:
  publish_relay() = default;
  publish_relay(const publish_relay&) = delete;
  publish_relay& operator=(const publish_relay&) = delete;
  publish_relay(publish_relay&&) noexcept;
  publish_relay& operator=(publish_relay&&) noexcept;
  ~publish_relay();  // kills and reaps a relay process still running

  // Binds 127.0.0.1:host_port for each port (SO_REUSEADDR, listening).
  // Errors: io_error with errno (EADDRINUSE: another program has the port;
  // EACCES: a port below the unprivileged limit) and the port in the message.
  static result<publish_relay> bind(const std::vector<published_port>& ports);

  bool empty() const noexcept { return ports_.empty(); }

  // Forks the relay process into the namespaces of `sandbox_pid` (PID 1 of
  // the sandbox) and waits until it is in them. Call it while PID 1 waits at
  // its sync pipe: PID 1 is then still dumpable (it makes itself not
  // dumpable once it wrote its maps, sandbox_init.cpp, after which a relay
  // without CAP_SYS_PTRACE may no longer open /proc/PID/ns/*), and the relay
  // serves from before the command exists to the end of the run. Errors:
  // launch_failed with errno: fork or pipe failed; the hard RLIMIT_NOFILE is
  // below what the connection slots need (EMFILE); the relay could not
  // enter the namespaces (EACCES/EPERM: /proc/PID/ns/* or setns refused;
  // EINVAL: the sandbox has no network namespace of its own, where relaying
  // would reach the host's loopback; EPIPE: the relay ended without saying).
  // On an error no relay runs and the listeners are closed.
  result<void> start(pid_t sandbox_pid);

  // Stops the relay process and returns what it carried, one entry per port
  // in the policy's order. Call it once the sandbox's tree is gone: what the
  // command sent that the relay still holds is passed on to the host for at
  // most publish_drain_ms (it waits that long only for a host that does not
  // read), then every connection ends. Without start(): the ports with zero
  // counts.
  std::vector<published_port_evidence> stop();

  // After stop(): the relay ended without handing over its counts (every
  // count is then 0).
  bool counts_missing() const noexcept { return counts_missing_; }

 private:
  std::vector<published_port> ports_;
  std::vector<unique_fd> listeners_;
  unique_fd stop_write_;    // closed by stop(): the relay's signal to hand over its counts
  unique_fd counts_read_;   // the relay's counts, one record per port
  pid_t pid_ = -1;
  bool counts_missing_ = false;
};

}  // namespace cordon::linux_impl
