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
  // the sandbox). The relay's own failure to enter them ends it; its
  // listeners then refuse nothing and relay nothing (every count 0, the
  // connections closed: a host client gets ECONNRESET or EOF). Errors:
  // launch_failed (fork failed).
  result<void> start(pid_t sandbox_pid);

  // Stops the relay process (its open connections end) and returns what it
  // carried, one entry per port in the policy's order. Without start(): the
  // ports with zero counts.
  std::vector<published_port_evidence> stop();

  // After stop(): 0, or the errno with which the relay failed to enter the
  // sandbox's namespaces (nothing was relayed; EPIPE: it ended without
  // handing over its counts).
  int entry_error() const noexcept { return entry_error_; }

 private:
  std::vector<published_port> ports_;
  std::vector<unique_fd> listeners_;
  unique_fd stop_write_;    // closed by stop(): the relay's signal to hand over its counts
  unique_fd counts_read_;   // the relay's counts, one record per port
  pid_t pid_ = -1;
  int entry_error_ = 0;
};

}  // namespace cordon::linux_impl
