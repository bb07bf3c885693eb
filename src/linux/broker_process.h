// broker_process.h — the network broker in a confined process of its own
// (docs/network.md, "The broker's process").
//
// The supervisor forks once the sandbox's PID 1 has handed over the
// broker's listeners; the child keeps only those sockets, the DNS socket and
// its end of a unix stream socket pair to the supervisor (the channel),
// confines itself (broker_confinement.h: no filesystem, a seccomp allowlist,
// no capability, no_new_privs, a bounded descriptor limit), dies with the
// supervisor (PR_SET_PDEATHSIG), and serves on its only thread
// (broker_link.h). Over the channel the supervisor sends the transparent
// listener's destinations (destination_table.h) and answers name
// resolutions (the broker has no resolv.conf, hosts file or NSS modules to
// read); the broker streams its evidence (each entry when it is complete,
// each connection still open when it is decided: broker/evidence_stream.h)
// and sends what is left once a stop has drained it.
// The supervisor watches it through a pidfd and a thread of its own here.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "broker/broker.h"
#include "cordon/launch.h"
#include "cordon/result.h"

namespace cordon::linux_impl {

class broker_process {
 public:
  // Forks the broker with `options` (validated, as for
  // broker::network_broker::start; options.destinations, when set, is
  // switched to forwarding its entries to the broker) on `listener_fds` and
  // options.dns_socket (ownership passes, also on error), and waits until
  // it is confined and serving. The calling process must not hold a lock
  // another thread could be holding (it forks). Errors: launch_failed
  // (socketpair, fork, pidfd_open; the broker could not start or confine
  // itself: the message says which step, e.g. "seccomp: Invalid argument";
  // it did not answer within 10 s).
  static result<std::unique_ptr<broker_process>> start(broker::broker_options options, std::vector<int> listener_fds);

  // Asks the broker to stop (drain its listen queues, end every connection,
  // record everything), waits for its evidence (at most 10 s, then the
  // process is killed and the evidence says so) and reaps it. Idempotent.
  void stop();

  // The evidence, as merged so far; complete after stop(). A broker that
  // died leaves every entry it had sent, each connection it had reported
  // open (its last reported action, a reason saying the broker died while
  // it was open) and one `error` entry saying how it ended.
  network_evidence evidence() const;

  pid_t pid() const;

  // Test hook: asks the broker to open `path` read-only and returns the
  // errno it got (0: it opened it), or -1 when it did not answer in 5 s.
  int probe_open(const std::string& path);

  ~broker_process();
  broker_process(const broker_process&) = delete;
  broker_process& operator=(const broker_process&) = delete;

  struct state;

 private:
  explicit broker_process(std::shared_ptr<state> s);
  std::shared_ptr<state> state_;
};

}  // namespace cordon::linux_impl
