// connect_redirect.h — the supervisor's answer to a filtered command's
// connect(2) (docs/network.md, "Transparent routing").
//
// Every connect(2) of a filtered-network command stops in the seccomp filter
// (USER_NOTIF) until the supervisor answers. The supervisor never lets the
// kernel continue a call it decided by reading the caller's memory: it takes
// its own copy of the caller's socket (pidfd_getfd(2): the same open file,
// so the same socket, in the sandbox's network namespace) and of the
// address, and performs the connect itself:
//  - TCP to the broker's listener (127.0.0.1:3128), and to loopback when the
//    policy allows local binding: connected as asked;
//  - TCP to anywhere else: bound to a loopback port, the original
//    destination noted under that port (broker/destination_table.h), and
//    connected to the broker's transparent listener instead, which decides
//    it like any other connection. A non-blocking socket gets EINPROGRESS
//    and completes as usual; a blocking one waits here (at most
//    `connect_wait`);
//  - UDP to the sandbox's DNS listener (127.0.0.1:53) as asked; any other
//    UDP or raw destination is refused (EACCES) and recorded;
//  - a unix socket: connected here too, to a named socket only when the
//    policy allows it (unix_connect.h). No call is ever let through with
//    SECCOMP_USER_NOTIF_FLAG_CONTINUE: the kernel would look up the
//    descriptor and re-read the address, both of which another thread of
//    the command can change after the supervisor looked.
#pragma once

#include <linux/seccomp.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "cordon/policy.h"

#include "broker/destination_table.h"
#include "linux/seccomp_filter.h"
#include "linux/violations.h"

namespace cordon::linux_impl {

struct connect_redirect {
  // Null: no transparent routing (TCP elsewhere is refused with EACCES).
  std::shared_ptr<broker::destination_table> destinations;
  std::uint16_t transparent_port = 0;  // the broker's transparent listener inside
  bool transparent_v6 = false;         // that listener is dual-stack [::] (else 127.0.0.1 only)
  std::uint16_t dns_port = 0;          // UDP DNS listener on 127.0.0.1 inside; 0: none
  std::chrono::milliseconds connect_wait{10000};  // bound on a blocking connect to the broker
  // Ports some rule (or the default action) could allow: a TCP connect to
  // any other port is refused at once (EACCES) and recorded as a violation,
  // since no name it could send would change the broker's answer. Empty:
  // every port goes to the broker.
  std::vector<bool> port_may_be_allowed;
};

// Which ports `policy` could allow for some destination (indexed 0..65535).
std::vector<bool> ports_rules_may_allow(const network_policy& policy);

// Transparent routing to the broker's transparent listener `listener_fd`
// (a socket the sandbox's PID 1 made: its family says whether it is
// dual-stack), with a fresh destination table; `transparent_port` is its
// port. Only reads the descriptor.
connect_redirect transparent_routing(int listener_fd, std::uint16_t transparent_port);

// Answers the connect(2) notification `request` (already received from
// `listener_fd`): fills `response` (error, flags) and records refusals in
// `log`. Never sets SECCOMP_USER_NOTIF_FLAG_CONTINUE.
void answer_connect(int listener_fd, const seccomp_notif& request, seccomp_notif_resp& response,
                    const seccomp_program& program, const connect_redirect& redirect, violation_log& log);

// Answers the listen(2) notification `request` (seccomp_program::
// listen_checked: no network namespace of the sandbox's own): on our copy of
// the caller's socket, an AF_UNIX socket listens with the caller's backlog
// (the kernel's errno); an IPv4/IPv6 one is refused with EACCES and
// recorded as a "network_listen" violation (a listen on an unbound socket
// would bind a port on every host address). ENOTSOCK and EBADF as
// listen(2) gives them. Never sets SECCOMP_USER_NOTIF_FLAG_CONTINUE.
void answer_listen(int listener_fd, const seccomp_notif& request, seccomp_notif_resp& response, violation_log& log);

}  // namespace cordon::linux_impl
