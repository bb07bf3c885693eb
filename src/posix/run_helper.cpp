// The run API's helper-process half (cordon/run.h): start_run spawns the
// supervisor helper (posix/helper_spawn.h: clone3 with exit_signal 0, no
// SIGCHLD for the host, not reapable by the host's waitpid(-1)), hands it
// the run over a socket, and reads the report back.
#include <fcntl.h>
#include <linux/sched.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "cordon/policy_json.h"
#include "cordon/run.h"
#include "core/outcome_json.h"
#include "posix/byte_strings.h"
#include "posix/helper_spawn.h"
#include "posix/poll_timeout.h"
#include "posix/socket_io.h"
#include "posix/unique_fd.h"

namespace cordon {

result<run_handle> start_run(const sandbox_plan& plan, const run_request& request) {
  if (plan.backend() == nullptr) return make_error(error_code::plan_null, "the plan has no backend");
  if (request.launch.argv.empty() || request.launch.argv[0].empty()) {
    return make_error(error_code::usage_error, "no command to run");
  }
  auto s = std::make_unique<run_handle::state>();
  auto in = posix::stdio_source(request.stdin_spec, 0, true, s->stdin_pipe);
  if (!in) return std::move(in).error_value();
  auto out = posix::stdio_source(request.stdout_spec, 1, false, s->stdout_pipe);
  if (!out) return std::move(out).error_value();
  auto err = posix::stdio_source(request.stderr_spec, 2, false, s->stderr_pipe);
  if (!err) return std::move(err).error_value();
  auto helper_control = posix::control_pair(s->control);
  if (!helper_control) return std::move(helper_control).error_value();
  const int sources[4] = {in->get(), out->get(), err->get(), helper_control->get()};
  auto helper = posix::spawn_helper(posix::supervisor_path(request.supervisor_path), sources);
  if (!helper) return std::move(helper).error_value();
  s->helper = std::move(*helper);
  nlohmann::json line = posix::plan_request(plan);
  line["argv"] = posix::byte_strings_json(request.launch.argv);
  line["working_directory"] = request.launch.working_directory;
  line["environment"] = posix::byte_strings_json(request.launch.host_environment);
  if (!send_all(s->control.get(), posix::json_line(line))) {
    // The helper is already gone (for example, it could not be executed): its report says why.
  }
  return run_handle(std::move(s));
}

run_handle::run_handle(std::unique_ptr<state> s) : state_(std::move(s)) {}
run_handle::run_handle(run_handle&&) noexcept = default;
run_handle& run_handle::operator=(run_handle&&) noexcept = default;

run_handle::~run_handle() {
  if (state_ && !state_->report) {
    cancel();
    wait();
  }
}

pid_t run_handle::pid() const noexcept { return state_->helper.pid; }
int run_handle::stdin_fd() const noexcept { return state_->stdin_pipe.get(); }
int run_handle::stdout_fd() const noexcept { return state_->stdout_pipe.get(); }
int run_handle::stderr_fd() const noexcept { return state_->stderr_pipe.get(); }
int run_handle::take_stdin() noexcept { return state_->stdin_pipe.release(); }
int run_handle::take_stdout() noexcept { return state_->stdout_pipe.release(); }
int run_handle::take_stderr() noexcept { return state_->stderr_pipe.release(); }
int run_handle::completion_fd() const noexcept { return state_->control.get(); }

void run_handle::cancel() noexcept {
  if (!state_ || state_->finished.load() || state_->cancelled.exchange(true)) return;
  // The helper kills the tree when its control socket is readable or closed.
  ssize_t ignored = ::send(state_->control.get(), "c", 1, MSG_NOSIGNAL);
  (void)ignored;
}

namespace {

// The helper's answer: one JSON line {"report_bytes": N, "outcome"|"failure":
// {...}}, then the report's N bytes as they are (src/supervisor/main.cpp):
// the report is not escaped into a JSON string and parsed back out.
// Whether `received` holds all of it.
bool answer_complete(const std::string& received) {
  const auto newline = received.find('\n');
  if (newline == std::string::npos) return false;
  const auto key = received.find("\"report_bytes\":");
  if (key == std::string::npos || key > newline) return true;  // no report follows: parse_report says what is wrong
  const unsigned long long size = std::strtoull(received.c_str() + key + 15, nullptr, 10);
  return received.size() - newline - 1 >= size;
}

run_report parse_report(const std::string& received) {
  run_report report;
  const auto newline = received.find('\n');
  nlohmann::json j = nlohmann::json::parse(received.substr(0, newline), nullptr, false);
  if (j.is_discarded() || !j.contains("report_bytes") || !j.at("report_bytes").is_number_unsigned() ||
      received.size() - newline - 1 < j.at("report_bytes").get<std::size_t>()) {
    report.failure = make_error(error_code::launch_failed,
                                "the supervisor helper ended without a report; is it installed? (CORDON_SUPERVISOR)");
    return report;
  }
  report.json = received.substr(newline + 1, j.at("report_bytes").get<std::size_t>());
  try {  // a helper of another version must not make the host std::terminate
    if (j.contains("outcome")) report.outcome = core::outcome_from_json(j.at("outcome"));
    if (j.contains("failure")) report.failure = core::error_from_json(j.at("failure"));
  } catch (const nlohmann::json::exception& e) {
    report.outcome.reset();
    report.failure = make_error(error_code::launch_failed,
                                std::string("the supervisor helper's answer is malformed (") + e.what() + ")");
  }
  report.cancelled = report.outcome && report.outcome->cancelled;
  return report;
}

// The report read: its after_report (once), then the run is finished.
void take_report(run_handle::state& s) {
  if (s.after_report) {
    auto after = std::move(s.after_report);
    s.after_report = nullptr;
    after(*s.report);
  }
  s.finished.store(true);
}

}  // namespace

std::optional<run_report> run_handle::wait_until(std::chrono::steady_clock::time_point deadline) {
  state& s = *state_;
  while (!s.report) {
    // The report is the helper's last message: read it as soon as it is
    // whole (the helper's own exit, which follows, is not the run's).
    if (answer_complete(s.received)) {
      s.report = parse_report(s.received);
      take_report(s);
      break;
    }
    pollfd fd{s.control.get(), POLLIN, 0};
    const bool forever = deadline == std::chrono::steady_clock::time_point::max();
    int ready = ::poll(&fd, 1, forever ? -1 : poll_timeout_until(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) return std::nullopt;
    char buffer[65536];
    ssize_t n = ::recv(s.control.get(), buffer, sizeof buffer, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n > 0) {
      s.received.append(buffer, static_cast<std::size_t>(n));
      continue;
    }
    // EOF: the helper is done.
    s.report = parse_report(s.received);
    take_report(s);
    posix::release_helper(s.helper);
  }
  return s.report;
}

std::optional<run_report> run_handle::wait_for(std::chrono::milliseconds timeout) {
  return wait_until(std::chrono::steady_clock::now() + timeout);
}

run_report run_handle::wait() { return *wait_until(std::chrono::steady_clock::time_point::max()); }

}  // namespace cordon
