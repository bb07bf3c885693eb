// cordon-supervisor: the run API's helper process (cordon/run.h,
// docs/architecture.md "The run API"). Started by start_run() with its
// control socket on the descriptor named by --control-fd and the command's
// stdio on 0-2. It compiles the policy it is given again on this host's own
// facts, refuses unless that plan has the caller's fingerprint, supervises
// the run in this (single-threaded) process, and answers with one JSON line:
// {"report": text, "outcome": {...}} or {"report": text, "failure": {...}}.
// A byte on the socket, or its end (the host went away), cancels the run.
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>

#include "cordon/backend.h"
#include "cordon/policy_json.h"
#include "cordon/report.h"
#include "cordon/run.h"
#include "core/outcome_json.h"
#include "posix/socket_io.h"

namespace {

using json = nlohmann::json;

int answer(int fd, const json& j) {
  return cordon::send_all(fd, j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n") ? 0 : cordon::exit_cordon_failed;
}

int refuse(int fd, const cordon::error& err, const std::string& backend, const cordon::launch_request& request) {
  return answer(fd, {{"report", cordon::refused_report_json(backend, "", request, err)},
                     {"failure", cordon::core::error_to_json(err)}});
}

}  // namespace

int main(int argc, char** argv) {
  using namespace cordon;
  if (argc != 3 || std::strcmp(argv[1], "--control-fd") != 0) {
    ::write(2, "cordon-supervisor: started by the run API only (cordon/run.h)\n", 62);
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
  auto backend = make_host_backend();
  launch_request launch;
  if (request.is_discarded()) {
    return refuse(control, make_error(error_code::launch_failed, "malformed request from the run API"),
                  std::string(backend->name()), launch);
  }
  launch.argv = request.at("argv").get<std::vector<std::string>>();
  launch.working_directory = request.at("working_directory").get<std::string>();
  launch.host_environment = request.at("environment").get<std::vector<std::string>>();
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
                  make_error(error_code::launch_failed,
                             "the plan re-derived in the supervisor differs from the caller's (the host changed "
                             "between compile and run); compile again"),
                  std::string(backend->name()), launch);
  }
  if (cancelled_early) {
    error err = make_error(error_code::launch_failed, "cancelled before the command started");
    return answer(control, {{"report", launch_failed_report_json(plan, launch, err)},
                            {"failure", core::error_to_json(err)}});
  }
  run_report report = run_in_this_process(plan, launch);
  json out = {{"report", report.json}};
  if (report.outcome) out["outcome"] = core::outcome_to_json(*report.outcome);
  if (report.failure) out["failure"] = core::error_to_json(*report.failure);
  return answer(control, out);
}
