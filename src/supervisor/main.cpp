// cordon-supervisor: the run API's helper process (cordon/run.h,
// docs/architecture.md "The run API"). Started by start_run() with its
// control socket on the descriptor named by --control-fd and the command's
// stdio on 0-2. It compiles the policy it is given again on this host's own
// facts, refuses unless that plan has the caller's fingerprint, supervises
// the run in this (single-threaded) process, and answers with one JSON line,
// {"report_bytes": N, "outcome": {...}} or {"report_bytes": N, "failure":
// {...}}, followed by the report's N bytes unescaped (src/posix/run_helper.cpp).
// A byte on the socket, or its end (the host went away), cancels the run.
// Started as `cordon-supervisor --network-broker` by a supervisor, it is
// that run's network broker instead (src/linux/broker_process.h).
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>

#include "cordon/backend.h"
#include "cordon/policy_json.h"
#include "cordon/report.h"
#include "cordon/run.h"
#include "cordon/selection.h"
#include "core/outcome_json.h"
#if defined(__linux__)
#include "linux/broker_process.h"
#include "linux/post_run_watch.h"
#endif
#include "posix/byte_strings.h"
#include "posix/socket_io.h"

namespace {

using json = nlohmann::json;

int answer(int fd, const json& j) {
  return cordon::send_all(fd, j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n") ? 0 : cordon::exit_cordon_failed;
}

// Drops this helper's copies of the command's stdin, stdout and stderr (its
// descriptors 0-2, cordon/run.h) once the run is over: a host that reads the
// output to its end before it reads the report would otherwise wait for us
// while we wait for it to take a report larger than the socket's buffer.
void release_stdio() {
  const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  for (int fd = 0; fd <= 2; ++fd) {
    if (null >= 0) ::dup2(null, fd);
    else ::close(fd);
  }
  if (null > 2) ::close(null);
}

// The last answer: `head` with the report's size, then the report itself.
// The command's stdio is released first.
int answer_with_report(int fd, json head, const std::string& report) {
  release_stdio();
  head["report_bytes"] = report.size();
  return cordon::send_all(fd, head.dump(-1, ' ', false, json::error_handler_t::replace) + "\n" + report)
             ? 0
             : cordon::exit_cordon_failed;
}

int refuse(int fd, const cordon::error& err, const std::string& backend, const cordon::launch_request& request) {
  return answer_with_report(fd, {{"failure", cordon::core::error_to_json(err)}},
                            cordon::refused_report_json(backend, "", request, err));
}

// A prepared sandbox's command (cordon/prepared.h): one JSON line from the
// host with the command's three descriptors attached to its first bytes.
// Bytes after the line are a cancel. nullopt: the host gave the sandbox up.
std::optional<cordon::prepared_command> read_command(int fd, cordon::launch_request& seen) {
  cordon::prepared_command command;
  std::size_t taken = 0;
  const std::optional<std::string> received =
      cordon::receive_line_with_descriptors(fd, command.stdio, 3, taken, std::string().max_size());
  const auto newline = received ? received->find('\n') : std::string::npos;
  json j = newline == std::string::npos ? json() : json::parse(received->substr(0, newline), nullptr, false);
  if (newline == std::string::npos || j.is_discarded() || newline + 1 != received->size()) {
    for (int descriptor : command.stdio) {
      if (descriptor >= 0) ::close(descriptor);
    }
    return std::nullopt;
  }
  command.argv = cordon::posix::byte_strings_from_json(j.at("argv"));
  command.working_directory = j.at("working_directory").get<std::string>();
  command.host_environment = cordon::posix::byte_strings_from_json(j.at("environment"));
#if defined(__linux__)
  // A pool's process that holds watch sets of the roots checks after the run itself (linux/pool_watch.h).
  if (j.value("host_checks", false)) cordon::linux_impl::leave_repository_check_to_host();
#endif
  seen.argv = command.argv;
  seen.working_directory = command.working_directory;
  seen.host_environment = command.host_environment;
  return command;
}


}  // namespace

int main(int argc, char** argv) {
  using namespace cordon;
  // Started with every signal blocked (posix/helper_spawn.cpp: its parent
  // shared the host's memory up to the execve); none is blocked here.
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
#if defined(__linux__)
  // The network broker's own process (src/linux/broker_process.h).
  // _exit: no static destructors or leak check run in the confined process.
  if (linux_impl::is_broker_invocation(argc, argv)) ::_exit(linux_impl::serve_as_broker());
  linux_impl::use_broker_program("/proc/self/exe");  // this run's broker is this program
#endif
  if (argc != 3 || std::strcmp(argv[1], "--control-fd") != 0) {
    [[maybe_unused]] const ssize_t said = ::write(2, "cordon-supervisor: started by the run API only (cordon/run.h)\n", 62);
    return exit_cordon_failed;
  }
  const int control = std::atoi(argv[2]);
  ::fcntl(control, F_SETFD, FD_CLOEXEC);
  // The host's dispositions are not ours: children must be waitable and a
  // closed socket must not kill us.
  std::signal(SIGCHLD, SIG_DFL);
  std::signal(SIGPIPE, SIG_DFL);

  std::string received;
  char buffer[65536];
  while (received.find('\n') == std::string::npos) {
    ssize_t n = ::recv(control, buffer, sizeof buffer, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return exit_cordon_failed;  // the host went away before the run
    received.append(buffer, static_cast<std::size_t>(n));
  }
  const bool cancelled_early = received.size() > received.find('\n') + 1;
  json request = json::parse(received.substr(0, received.find('\n')), nullptr, false);
  // A host-execution plan (sandbox forbidden) is compiled again with that
  // backend: re-deriving it with the platform sandbox's would never match
  // its fingerprint.
  const bool host_execution = request.is_object() && request.value("backend", "") == host_execution_backend_name;
  auto backend = host_execution ? make_host_execution_backend() : make_host_backend();
  launch_request launch;
  if (request.is_discarded()) {
    return refuse(control, make_error(error_code::launch_failed, "malformed request from the run API"),
                  std::string(backend->name()), launch);
  }
  // A prepared sandbox (cordon/prepared.h) gets its command after it is ready.
  const bool prepare = request.contains("prepare");
  launch_request seen;  // the command as the report names it
  if (!prepare) {
    launch.argv = cordon::posix::byte_strings_from_json(request.at("argv"));
    launch.working_directory = request.at("working_directory").get<std::string>();
    launch.host_environment = cordon::posix::byte_strings_from_json(request.at("environment"));
    seen = launch;
  }
  launch.cancel_fd = control;

  auto policy = sandbox_policy_from_json(request.at("policy").get<std::string>());
  if (!policy) return refuse(control, policy.error_value(), std::string(backend->name()), launch);
  compile_options options;
  options.workspace = request.at("workspace").get<std::string>();
  options.cgroup_parent = request.at("cgroup_parent").get<std::string>();
  auto compiled = backend->compile(*policy, options);
  if (!compiled) return refuse(control, compiled.failure(), std::string(backend->name()), launch);
  const sandbox_plan& plan = *compiled.plan();
  if (plan_fingerprint(plan) != request.at("fingerprint").get<std::string>()) {
    return refuse(control,
                  make_error(prepare ? error_code::plan_stale : error_code::launch_failed,
                             "the plan re-derived in the supervisor differs from the caller's (the host changed "
                             "between compile and run); compile again"),
                  std::string(backend->name()), launch);
  }
  if (cancelled_early) {
    error err = make_error(error_code::launch_failed, "cancelled before the command started");
    return answer_with_report(control, {{"failure", core::error_to_json(err)}},
                              launch_failed_report_json(plan, launch, err));
  }
  // The report's plan half is rendered while the sandbox waits: after the
  // command only its outcome is (cordon/report.h).
  std::optional<report_plan_half> ahead;
  if (prepare) {
    launch.ready = [&](const std::string& at) {
      answer(control, {{"ready", at}});
      ahead.emplace(plan);
    };
    launch.next_command = [&] { return read_command(control, seen); };
  }
  run_report report = run_in_this_process(plan, launch, !prepare);
  if (prepare) {  // the report names the command that ran, not the empty request
    report.json = !report.outcome ? launch_failed_report_json(plan, seen, *report.failure)
                  : ahead         ? run_report_json(plan, seen, *report.outcome, *ahead)
                                  : run_report_json(plan, seen, *report.outcome);
  }
  json out = json::object();
  if (report.outcome) out["outcome"] = core::outcome_to_json(*report.outcome);
  if (report.failure) out["failure"] = core::error_to_json(*report.failure);
  const int sent = answer_with_report(control, std::move(out), report.json);
  await_exiting_sandboxes();  // after the answer: the host does not wait for PID 1's teardown (cordon/run.h)
  return sent;
}
