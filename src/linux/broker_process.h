// broker_process.h — the network broker in a confined process of its own
// (docs/network.md, "The broker's process").
//
// The supervisor starts it once the sandbox's PID 1 has handed over the
// broker's listeners: it forks and the child executes the supervisor helper
// (cordon-supervisor --network-broker, found as the run API finds it:
// posix/helper_spawn.h) with an empty environment, keeping only those
// sockets, the DNS socket and its end of a unix stream socket pair to the
// supervisor (the channel). So the broker's memory holds what it is sent
// and nothing else of the supervisor's: not the host's environment, not
// the plan. Its first line on the channel is its options
// (broker/broker_options_json.h); it then confines itself
// (broker_confinement.h: no filesystem, a seccomp allowlist, no
// capability, no_new_privs, a bounded descriptor limit), dies with the
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
  // Starts the broker's process with `options` (validated, as for
  // broker::network_broker::start, with no hooks: tests give
  // options.test_routes; options.destinations, when set, is switched to
  // forwarding its entries to the broker) on `listener_fds` (at most six)
  // and options.dns_socket (ownership passes, also on error), and waits
  // until it is confined and serving. Errors: usage_error (hooks are set);
  // launch_failed (the supervisor helper is not an executable file: the
  // message names its path; socketpair, fork, pidfd_open; the broker could
  // not start or confine itself: the message says which step, e.g.
  // "seccomp: Invalid argument", or that the helper is of another version;
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

// Is this process the broker's (argv is {"cordon-supervisor",
// "--network-broker"})? The helper's main() asks first thing.
bool is_broker_invocation(int argc, char** argv);

// The broker's process, after execve: reads its options from descriptor 3
// (the channel), finds its listeners on 4 and up and the DNS socket after
// them, confines itself and serves until the supervisor stops it. Returns
// the process's exit status: 0 once the evidence is sent, 1 when it could
// not start or be confined (the reason went to the supervisor first).
int serve_as_broker();

}  // namespace cordon::linux_impl
