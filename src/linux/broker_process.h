// broker_process.h — the network broker in a confined process of its own
// (docs/network.md, "The broker's process").
//
// The supervisor starts it before it clones the sandbox, so that its start
// overlaps the sandbox's set-up: it forks and the child executes the
// supervisor helper (cordon-supervisor --network-broker, found as the run
// API finds it: posix/helper_spawn.h) with an empty environment and no
// descriptor but /dev/null on 0-2 and its end of a unix stream socket pair
// to the supervisor (the channel). So the broker's memory holds what it is sent
// and nothing else of the supervisor's: not the host's environment, not
// the plan. Its first line on the channel is its options
// (broker/broker_options_json.h); it makes the run's TLS authority when
// asked (its key never leaves this process) and answers with the
// certificate; once the sandbox's PID 1 has handed over the listeners, the
// supervisor passes them on (SCM_RIGHTS) and the process confines itself
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
  // options.test_routes; no authority or upstream context made already:
  // options.tls.make_authority and make_upstream ask the process to make
  // them) and sends it its options; it then waits for its listeners
  // (serve()). With make_authority, waits until the process has made the
  // authority and stores its CA certificate (PEM) in `certificate_pem`.
  // Errors: usage_error (hooks, or an authority, are set); launch_failed
  // (the supervisor helper is not an executable file: the message names
  // its path; socketpair, fork, pidfd_open; the process could not read its
  // options or make the authority, or is of another version: the message
  // says so; it did not answer within 10 s).
  static result<std::unique_ptr<broker_process>> spawn(broker::broker_options options,
                                                       std::string* certificate_pem = nullptr);

  // Hands the process its listeners (one to three, bound and listening; the
  // one at options.transparent_listener is the transparent one) and the
  // DNS socket (-1: none), ownership passing also on error; waits until it
  // is confined and serving. `destinations`, when set, is switched to
  // forwarding its entries to the broker (destination_table.h). Errors:
  // usage_error (no or more than three listeners); launch_failed (handing
  // them over failed; the broker could not start or confine itself: the
  // message says which step, e.g. "seccomp: Invalid argument"; it did not
  // answer within 10 s).
  result<void> serve(std::vector<int> listener_fds, int dns_socket,
                     std::shared_ptr<broker::destination_table> destinations);

  // spawn() then serve() with options.dns_socket and options.destinations.
  static result<std::unique_ptr<broker_process>> start(broker::broker_options options, std::vector<int> listener_fds);

  // Did serve() succeed? Only then is there evidence.
  bool served() const;

  // Asks the broker to stop (drain its listen queues, end every connection,
  // record everything), waits for its evidence (at most 10 s, then the
  // process is killed and the evidence says so) and reaps it. Idempotent.
  void stop();

  // The evidence, as merged so far; complete after stop(). A broker that
  // died leaves every entry it had sent, each connection it had reported
  // open (its last reported action, a reason saying the broker died while
  // it was open) and one `error` entry saying how it ended.
  network_evidence evidence() const;

  // Test hook: how many connections the broker has reported open and not
  // yet ended, as merged so far (each is in evidence() if the broker dies).
  std::size_t open_connections() const;

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

// Where the sandbox's allowed DNS queries go: $CORDON_DNS_UPSTREAM
// ("address:port", for tests that run their own resolver on loopback), else
// this host's first nameserver (broker::system_dns_upstream; empty: none).
std::string dns_upstream();

// How many connections the broker's process can hold, at most `wanted`: a
// relayed connection holds six descriptors (two sockets, two pipes) and the
// broker keeps 64 for its own; its process sets its descriptor limit (soft
// and hard) to that (broker_confinement.h), which must fit under the hard
// limit it inherits. The caller's own limits are left as they are: the
// sandbox, cloned after this, inherits them. At least 1.
std::size_t broker_connection_budget(std::size_t wanted);

// The argument that makes cordon-supervisor the broker's process, and the
// descriptor its channel is on after execve.
inline constexpr const char* broker_argument = "--network-broker";
inline constexpr int broker_channel_fd = 3;

// The program spawn() executes, instead of the supervisor helper that
// posix::supervisor_path() finds. cordon-supervisor names itself
// ("/proc/self/exe"), so that a run API host's configured helper is also
// its runs' broker, of the same version. Call before any run.
void use_broker_program(std::string path);

// Is this process the broker's (argv is {"cordon-supervisor",
// "--network-broker"})? The helper's main() asks first thing.
bool is_broker_invocation(int argc, char** argv);

// The broker's process, after execve (broker_serve.cpp): reads its options
// from broker_channel_fd, makes what they ask for (the run's authority, the
// upstream context), answers, receives its listeners and the DNS socket,
// confines itself and serves until the supervisor stops it. Returns
// the process's exit status: 0 once the evidence is sent, 1 when it could
// not start or be confined (the reason went to the supervisor first).
int serve_as_broker();

}  // namespace cordon::linux_impl
