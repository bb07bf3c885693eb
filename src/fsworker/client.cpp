// client.cpp — starting the filesystem worker under a plan and talking to it
// (cordon/fs_worker.h).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "cordon/fs_worker.h"
#include "fsworker/resolver.h"
#include "posix/beside_install.h"
#include "fsworker/worker_config.h"

namespace cordon {

struct fs_worker::state {
  run_handle run;
  fs_worker_options options;
  std::string buffer;  // stdout bytes after the last full line
  bool dead = false;
  explicit state(run_handle h) : run(std::move(h)) {}
};

namespace {

bool exists(const std::string& p) { return !p.empty() && ::access(p.c_str(), X_OK) == 0; }

std::vector<fsworker::plan_mount> mounts_of(const sandbox_plan& plan) {
  if (plan.payload() == nullptr) return {};
  return fsworker::parse_plan_mounts(plan.payload()->describe());
}

// Writes all of `data` without letting a closed pipe raise SIGPIPE in the
// host: the signal is blocked for this thread and a pending one consumed.
bool write_no_sigpipe(int fd, const std::string& data) {
  sigset_t pipe_set, old;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
  std::size_t done = 0;
  bool ok = true;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ok = false;
      break;
    }
    done += static_cast<std::size_t>(n);
  }
  if (!ok && errno == EPIPE && !sigismember(&old, SIGPIPE)) {
    const timespec zero{0, 0};
    sigtimedwait(&pipe_set, nullptr, &zero);
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return ok;
}

// Reads one line from `fd` into `line`, keeping the rest in `buffer`.
// False at the deadline or end of input.
bool read_line(int fd, std::string& buffer, std::string& line, std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    if (auto nl = buffer.find('\n'); nl != std::string::npos) {
      line = buffer.substr(0, nl);
      buffer.erase(0, nl + 1);
      return true;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 60000)));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    char chunk[65536];
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    buffer.append(chunk, static_cast<std::size_t>(n));
  }
}

}  // namespace

std::string find_fs_worker(const std::string& explicit_path) {
  if (!explicit_path.empty()) return exists(explicit_path) ? explicit_path : "";
  if (const char* env = std::getenv("CORDON_FS_WORKER"); env != nullptr && *env != '\0') {
    return exists(env) ? env : "";
  }
  if (exists(CORDON_FS_WORKER_INSTALL_PATH)) return CORDON_FS_WORKER_INSTALL_PATH;
  if (std::string beside = posix::beside_install("cordon-fs-worker"); !beside.empty()) return beside;
  if (exists(CORDON_FS_WORKER_BUILD_PATH)) return CORDON_FS_WORKER_BUILD_PATH;
  return "";
}

bool fs_worker_visible(const sandbox_plan& plan, const std::string& worker_path) {
  // The innermost mount over the path decides, as inside the sandbox.
  const fsworker::plan_mount* inner = nullptr;
  const auto mounts = mounts_of(plan);  // held: `inner` points into it after the loop
  for (const auto& m : mounts) {
    if (m.kind == "proc" || m.kind == "symlink") continue;
    if (fsworker::path_within(worker_path, m.path) && (inner == nullptr || m.path.size() >= inner->path.size())) {
      inner = &m;
    }
  }
  return inner != nullptr && (inner->kind == "ro-rbind" || inner->kind == "ro-bind" || inner->kind == "rw-bind");
}

sandbox_policy with_fs_worker_readable(sandbox_policy policy, const std::string& worker_path) {
  policy.filesystem.readable.push_back(worker_path);
  return policy;
}

fs_worker::fs_worker(std::unique_ptr<state> s) : state_(std::move(s)) {}
fs_worker::fs_worker(fs_worker&&) noexcept = default;
fs_worker& fs_worker::operator=(fs_worker&&) noexcept = default;
fs_worker::~fs_worker() {
  if (state_ && !state_->dead) {
    state_->run.cancel();
    state_->run.wait();
  }
}

pid_t fs_worker::pid() const noexcept { return state_ ? state_->run.pid() : -1; }

result<fs_worker> fs_worker::start(const sandbox_plan& plan, const fs_worker_options& options) {
  const std::string worker = find_fs_worker(options.worker_path);
  if (worker.empty()) {
    return make_error(error_code::usage_error,
                      "no cordon-fs-worker executable (set fs_worker_options::worker_path or $CORDON_FS_WORKER)");
  }
  fsworker::worker_config config;
  config.workspace = plan.workspace();
  config.mounts = mounts_of(plan);
  if (config.mounts.empty()) {
    return make_error(error_code::enforcement_unavailable,
                      "the filesystem worker needs a plan with a mount table to resolve paths against (backend " +
                          plan.backend_name() + " has none)");
  }
  if (!fs_worker_visible(plan, worker)) {
    return make_error(error_code::usage_error, "the plan does not make the worker " + worker +
                                                   " readable inside the sandbox (compile the policy from "
                                                   "with_fs_worker_readable())");
  }
  config.limits.max_request_bytes = options.max_request_bytes;
  config.limits.max_read_bytes = options.max_read_bytes;
  config.limits.max_file_bytes = options.max_file_bytes;
  config.limits.max_results = options.max_results;
  config.limits.deadline = options.request_deadline;
  run_request request;
  request.launch.argv = {worker, "--config", fsworker::worker_config_to_json(config)};
  request.launch.working_directory = plan.workspace().empty() ? "/" : plan.workspace();
  // No host environment: the worker needs none, and a secret it never has
  // cannot leak through a file it writes.
  request.launch.host_environment = {};
  request.stdin_spec = stdio_spec::pipe();
  request.stdout_spec = stdio_spec::pipe();
  request.supervisor_path = options.supervisor_path;
  auto started = start_run(plan, request);
  if (!started) return std::move(started).error_value();
  auto s = std::make_unique<state>(std::move(*started));
  s->options = options;
  return fs_worker(std::move(s));
}

result<std::string> fs_worker::call(std::string_view request) {
  if (!state_ || state_->dead) return make_error(error_code::io_error, "the filesystem worker is gone");
  if (request.size() > state_->options.max_request_bytes) {
    return make_error(error_code::usage_error, "request_too_large: the request is longer than max_request_bytes");
  }
  if (request.find('\n') != std::string_view::npos) {
    return make_error(error_code::usage_error, "a request is one line: it must not contain a newline");
  }
  if (!write_no_sigpipe(state_->run.stdin_fd(), std::string(request) + "\n")) {
    state_->dead = true;
    return make_error(error_code::io_error, "the filesystem worker is gone (its input is closed)", {}, errno);
  }
  std::string line;
  const auto deadline = std::chrono::steady_clock::now() + state_->options.request_deadline + std::chrono::seconds(2);
  if (!read_line(state_->run.stdout_fd(), state_->buffer, line, deadline)) {
    state_->run.cancel();
    state_->run.wait();
    state_->dead = true;
    return make_error(error_code::io_error,
                      "deadline_exceeded: the filesystem worker did not answer in time (or ended); it was stopped");
  }
  return line;
}

fs_worker_report fs_worker::finish() {
  fs_worker_report out;
  if (!state_) return out;
  ::close(state_->run.take_stdin());
  if (!state_->dead) {
    std::string line;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (read_line(state_->run.stdout_fd(), state_->buffer, line, deadline)) {
      if (line.rfind("{\"report\"", 0) == 0) out.report_json = line;
    }
  }
  auto report = state_->run.wait_for(std::chrono::seconds(5));
  if (!report) {
    state_->run.cancel();
    report = state_->run.wait();
  }
  out.run = std::move(*report);
  state_->dead = true;
  return out;
}

}  // namespace cordon
