// The host-execution backend (cordon/selection.h, forbid): no confinement,
// stated as such. build() says not_enforced for every control that has
// something to act on, so only a policy that accepts exactly that compiles.
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>

#include "cordon/run.h"
#include "cordon/selection.h"
#include "core/environment.h"

namespace cordon {
namespace {

enforcement_level level_for(const sandbox_policy& p, control c) {
  const bool nothing_to_act_on =
      (c == control::filesystem_read && p.filesystem.read == read_mode::full) ||
      ((c == control::network_deny || c == control::network_filter) && p.network.mode == network_mode::unrestricted) ||
      (c == control::network_filter && p.network.mode != network_mode::filtered) ||
      (c == control::memory && !p.process.memory_bytes) || (c == control::cpu && !p.process.cpu_seconds) ||
      (c == control::process_count && !p.process.max_processes) || (c == control::timeout && !p.process.timeout_ms);
  return nothing_to_act_on ? enforcement_level::not_applicable : enforcement_level::not_enforced;
}

// Waits for `pid` into `status`. With a cancel descriptor (the run API's
// helper, launch_request::cancel_fd), its becoming readable or hung up kills
// the command's process group (the command leads one then, see launch(); a
// descendant that left the group is not tracked: nothing is, here) and
// returns true. Checks every 20 ms: no pidfd on every POSIX host.
bool wait_or_cancel(pid_t pid, int cancel_fd, int& status) {
  bool cancelled = false;
  while (true) {
    const pid_t done = ::waitpid(pid, &status, cancel_fd >= 0 && !cancelled ? WNOHANG : 0);
    if (done == pid) return cancelled;
    if (done < 0 && errno != EINTR) return cancelled;
    if (done != 0 || cancelled) continue;
    pollfd watch{cancel_fd, POLLIN, 0};
    if (::poll(&watch, 1, 20) > 0) {
      ::kill(-pid, SIGKILL);
      cancelled = true;
    }
  }
}

class host_execution_backend final : public sandbox_backend {
 public:
  std::string_view name() const noexcept override { return host_execution_backend_name; }
  std::uint32_t plan_format_version() const noexcept override { return 1; }
  std::string_view platform() const noexcept override { return host_platform(); }
  isolation_level isolation() const noexcept override { return isolation_level::none; }
  host_facts read_host_facts(const compile_options&, bool) const override {
    host_facts facts;
    facts.platform = std::string(host_platform());
    facts.uid = ::getuid();
    facts.gid = ::getgid();
    if (const char* home = std::getenv("HOME")) facts.home = home;
    facts.backend_available = true;
    facts.lines.push_back("host execution: no sandbox");
    return facts;
  }
  result<backend_build> build(const sandbox_policy& policy, const host_facts&) const override {
    backend_build built;
    for (control c : all_controls) {
      const enforcement_level level = level_for(policy, c);
      built.contract[c] = {level, "", level == enforcement_level::not_applicable ? "nothing to act on"
                                                                               : "host execution: no sandbox"};
    }
    built.warnings.push_back("host execution (sandbox forbidden): nothing is confined");
    return built;
  }
  // Runs the command as a plain child with the policy's environment. Blocks;
  // single-threaded callers, like every launch (cordon/run.h).
  result<run_outcome> launch(const sandbox_plan* plan, const launch_request& request) const override {
    if (auto checked = check_plan(plan, platform()); !checked) return std::move(checked).error_value();
    if (request.argv.empty()) return make_error(error_code::usage_error, "no command to run");
    std::vector<std::string> env = core::build_environment(plan->policy(), request.host_environment);
    std::vector<char*> argv, envp;
    std::vector<std::string> args = request.argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    const std::string cwd = request.working_directory.empty() ? plan->workspace() : request.working_directory;
    auto started = std::chrono::steady_clock::now();
    // A cancellable run (the run API's helper: never a terminal's foreground
    // job) gets a process group of its own, so a cancel reaches what the
    // command started. Both sides set it: whichever runs first wins the race
    // with the kill. `cordon run` keeps the caller's group for job control.
    const bool own_group = request.cancel_fd >= 0;
    pid_t pid = ::fork();
    if (pid < 0) return make_error(error_code::launch_failed, "fork", {}, errno);
    if (pid > 0 && own_group) ::setpgid(pid, pid);
    if (pid == 0) {
      if (own_group) ::setpgid(0, 0);
      if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) ::_exit(exit_cordon_failed);
      ::execvpe(argv[0], argv.data(), envp.data());
      ::_exit(errno == ENOENT ? exit_not_found : exit_not_executable);
    }
    int status = 0;
    const bool cancelled = wait_or_cancel(pid, request.cancel_fd, status);
    run_outcome o;
    o.cancelled = cancelled;
    o.exited = WIFEXITED(status);
    o.exit_code = o.exited ? WEXITSTATUS(status) : 0;
    o.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    o.wall_ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count();
    o.working_directory = cwd;
    for (const auto& e : env) o.environment_names.push_back(e.substr(0, e.find('=')));
    return o;
  }

 private:
  static std::string_view host_platform() noexcept { return "linux"; }
};

}  // namespace

std::unique_ptr<sandbox_backend> make_host_execution_backend() { return std::make_unique<host_execution_backend>(); }

}  // namespace cordon
