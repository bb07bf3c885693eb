// os_sandbox_network.h — filtered networking without a network namespace
// (linux-os-sandbox; docs/linux-backend.md, "Filtered networking without a
// network namespace"; docs/network.md).
//
// The broker (broker_process.h) listens on a port of the host's loopback
// chosen per run (127.0.0.1:0). The command may make TCP streams only
// (seccomp_options::inet_stream_only) and never connects one itself: every
// connect(2) is performed by the supervisor on its own copy of the socket
// (pidfd_getfd(2)) with its own copy of the address (connect_redirect.h),
// to 127.0.0.1 and the broker's port only; listen(2) on an IP socket is
// refused. The command's Landlock domain (ABI 4) allows no TCP bind or
// connect at all, so a socket call that reached the kernel without the
// supervisor would still fail. The proxy variables name the broker's port.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cordon/plan.h"
#include "cordon/result.h"
#include "linux/broker_process.h"
#include "posix/unique_fd.h"

namespace cordon::linux_impl {

class os_sandbox_broker {
 public:
  // Binds a listener on 127.0.0.1 (a free port) and starts the broker's
  // process for the plan's network policy (spawn only: serve() hands it the
  // listener). Errors: launch_failed (socket, bind, listen, with errno; the
  // broker's process: broker_process::spawn's errors).
  static result<os_sandbox_broker> start(const sandbox_plan& plan);

  // The broker serves on the listener; waits until it is confined and
  // serving. Errors: broker_process::serve's (launch_failed).
  result<void> serve();

  // The host port the broker listens on (127.0.0.1).
  std::uint16_t port() const noexcept { return port_; }

  // The broker's process (a child of the supervisor: the tree's cleanup
  // keeps it), or -1.
  pid_t pid() const;

  // Stops the broker and returns its evidence (empty when it never served).
  std::optional<network_evidence> finish();

  os_sandbox_broker() = default;
  os_sandbox_broker(os_sandbox_broker&&) = default;
  os_sandbox_broker& operator=(os_sandbox_broker&&) = default;

 private:
  std::unique_ptr<broker_process> process_;
  unique_fd listener_;  // until serve() passes it on
  std::uint16_t port_ = 0;
};

// Points every proxy variable build_environment set to the broker's fixed
// address (http://127.0.0.1:3128, socks5h://127.0.0.1:3128: both cases of
// HTTP_PROXY, HTTPS_PROXY, ALL_PROXY) at `port` instead; a value the policy
// set explicitly to something else is left as it is.
void point_proxies_at(std::vector<std::string>& environment, std::uint16_t port);

}  // namespace cordon::linux_impl
