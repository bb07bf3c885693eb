// launcher_apple.cpp — the macOS launcher (launcher.h). Written for Apple
// platforms; on any other host src/macos/CMakeLists.txt builds it through the
// platform shim (shim/apple_shim.h, force-included), so that Linux CI compiles
// it with warnings as errors and tests it against a stand-in sandbox-exec
// (tests/macos/launcher_test.cpp). The guard below stops a build that picks it
// up without either.
#if !defined(__APPLE__) && !defined(CORDON_APPLE_SHIM)
#error "launcher_apple.cpp needs Apple's headers or the platform shim (see src/macos/CMakeLists.txt)"
#endif

#include "macos/launcher.h"

#include <fcntl.h>
#include <ftw.h>
#include <libproc.h>
#include <signal.h>
#include <sys/event.h>
#include <sys/resource.h>
#include <sys/sysctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "macos/environment.h"

namespace cordon::macos_impl {
namespace {

result<std::string> real_path(const std::string& path) {
  char buffer[PATH_MAX];
  if (::realpath(path.c_str(), buffer) == nullptr) {
    return make_error(error_code::io_error, "cannot resolve " + path, {}, errno);
  }
  return std::string(buffer);
}

error step_failed(const std::string& step) { return make_error(error_code::launch_failed, step, {}, errno); }

// NUL-terminated pointer arrays into strings that outlive the exec.
std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

int remove_entry(const char* path, const struct stat*, int, struct FTW*) { return ::remove(path); }

// The terminal the command inherits: the device of stdout, stderr or stdin,
// the first that is a terminal under /dev; "/dev/null" when none is (the
// profile's TERMINAL then grants the null device, which it reads anyway).
std::string inherited_terminal() {
  for (const int fd : {STDOUT_FILENO, STDERR_FILENO, STDIN_FILENO}) {
    if (::isatty(fd) == 0) continue;
    const char* name = ::ttyname(fd);
    if (name != nullptr && std::strncmp(name, "/dev/", 5) == 0) return name;
  }
  return "/dev/null";
}

// The child between fork and exec: only system calls, no allocation.
[[noreturn]] void child(const macos_plan& plan, const char* cwd, char* const* argv, char* const* envp,
                        proc_fdinfo* fds, int fd_capacity) {
  if (::setsid() < 0) ::_exit(125);
  if (plan.rlimit_cpu_seconds) {
    const rlimit limit{static_cast<rlim_t>(*plan.rlimit_cpu_seconds), static_cast<rlim_t>(*plan.rlimit_cpu_seconds)};
    if (::setrlimit(RLIMIT_CPU, &limit) != 0) ::_exit(125);
  }
  if (::chdir(cwd) != 0) ::_exit(125);
  const int bytes = ::proc_pidinfo(::getpid(), PROC_PIDLISTFDS, 0, fds, fd_capacity * static_cast<int>(sizeof(proc_fdinfo)));
  if (bytes <= 0 || bytes >= fd_capacity * static_cast<int>(sizeof(proc_fdinfo))) ::_exit(125);  // fail closed
  for (int i = 0; i < bytes / static_cast<int>(sizeof(proc_fdinfo)); ++i) {
    if (fds[i].proc_fd > 2) ::close(fds[i].proc_fd);
  }
  ::execve(argv[0], argv, envp);
  ::_exit(errno == ENOENT ? 127 : 126);
}

}  // namespace

result<macos_host_facts> read_macos_host_facts(const std::string& home, const std::string& workspace,
                                               std::uint16_t broker_port) {
  macos_host_facts facts;
  facts.native = true;
  facts.aliases = standard_macos_aliases();
  char version[64] = {};
  std::size_t size = sizeof(version);
  if (::sysctlbyname("kern.osproductversion", version, &size, nullptr, 0) == 0) facts.os_version = version;
  char temp[PATH_MAX] = {};
  if (::confstr(_CS_DARWIN_USER_TEMP_DIR, temp, sizeof(temp)) == 0) return step_failed("confstr(_CS_DARWIN_USER_TEMP_DIR)");
  auto t = real_path(temp);
  if (!t) return std::move(t).error_value();
  facts.user_temp_dir = *t;
  auto h = real_path(home);
  if (!h) return std::move(h).error_value();
  facts.home = *h;
  if (!workspace.empty()) {
    auto w = real_path(workspace);
    if (!w) return std::move(w).error_value();
    facts.workspace = *w;
  }
  facts.sandbox_exec_present = ::access(facts.sandbox_exec.c_str(), X_OK) == 0;
  for (const char* dir : {"/opt/homebrew/bin", "/opt/homebrew/sbin"}) {
    if (::access(dir, X_OK) == 0) facts.homebrew_bin.emplace_back(dir);
  }
  facts.broker_port = broker_port;
  return facts;
}

result<run_outcome> launch_macos_plan(const macos_plan& plan, const launch_request& request) {
  if (!plan.launchable()) {
    return make_error(error_code::launch_failed, "the plan is not launchable here (not compiled on this Mac, or blocked)");
  }
  if (request.argv.empty()) return make_error(error_code::usage_error, "no command");
  std::string run_tmp = plan.facts.user_temp_dir + "/cordon-run-XXXXXX";
  if (::mkdtemp(run_tmp.data()) == nullptr) return step_failed("mkdtemp " + run_tmp);
  auto resolved_tmp = real_path(run_tmp);
  if (!resolved_tmp) return std::move(resolved_tmp).error_value();

  std::vector<std::string> argv = sandbox_exec_argv(plan, *resolved_tmp, request.argv, inherited_terminal());
  std::vector<std::string> env = build_environment(plan.environment, request.host_environment, *resolved_tmp);
  std::vector<char*> argv_p = pointers(argv), env_p = pointers(env);
  const std::string cwd = !request.working_directory.empty() ? request.working_directory
                          : !plan.facts.workspace.empty()    ? plan.facts.workspace
                                                             : std::string("/");
  constexpr int fd_capacity = 4096;
  std::vector<proc_fdinfo> fds(fd_capacity);

  const int queue = ::kqueue();
  if (queue < 0) {
    const error failure = step_failed("kqueue");
    ::rmdir(resolved_tmp->c_str());
    return failure;
  }
  const auto started = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const error failure = step_failed("fork");
    ::close(queue);
    ::rmdir(resolved_tmp->c_str());
    return failure;
  }
  if (pid == 0) child(plan, cwd.c_str(), argv_p.data(), env_p.data(), fds.data(), fd_capacity);

  run_outcome outcome;
  struct kevent changes[2];
  int nchanges = 0;
  EV_SET(&changes[nchanges++], static_cast<uintptr_t>(pid), EVFILT_PROC, EV_ADD | EV_ONESHOT, NOTE_EXIT, 0, nullptr);
  if (plan.timeout_ms) {
    EV_SET(&changes[nchanges++], 1, EVFILT_TIMER, EV_ADD | EV_ONESHOT, 0, static_cast<intptr_t>(*plan.timeout_ms), nullptr);
  }
  // A child that already exited makes the EVFILT_PROC registration fail
  // (ESRCH): then there is nothing to wait for but the reaping below.
  const bool watching = ::kevent(queue, changes, nchanges, nullptr, 0, nullptr) == 0;
  while (watching) {
    struct kevent event {};
    if (::kevent(queue, nullptr, 0, &event, 1, nullptr) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (event.filter == EVFILT_PROC) break;
    if (event.filter == EVFILT_TIMER) {
      outcome.timed_out = true;
      ::killpg(pid, SIGKILL);
    }
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::killpg(pid, SIGKILL);  // whatever is left of the process group
  ::close(queue);
  outcome.wall_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count();
  outcome.exited = WIFEXITED(status);
  outcome.exit_code = outcome.exited ? WEXITSTATUS(status) : 0;
  outcome.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  ::nftw(resolved_tmp->c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS);
  return outcome;
}

}  // namespace cordon::macos_impl
