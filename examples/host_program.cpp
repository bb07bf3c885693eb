// A host that embeds cordon (copy this): load a policy, compile it, run two
// commands with the run API from two threads, stream one's output, cancel
// the other, print each report. Build: examples/CMakeLists.txt; run:
// cordon_example_host [WORKSPACE] (the suite runs it: ctest -L example).
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <cordon/cordon.h>
#include <iostream>
#include <string>
#include <thread>

int main(int argc, char** argv) {
  const std::string workspace = argc > 1 ? argv[1] : "/tmp";

  // 1. A policy: a built-in profile (or cordon::load_sandbox_policy(path)).
  auto policy = cordon::builtin_profile("workspace-write");
  if (!policy) {
    std::cerr << policy.error_value().describe() << "\n";
    return 1;
  }
  // 2. Compile it for this host. A refusal is an error with typed blockers.
  auto backend = cordon::make_host_backend();
  cordon::compile_options options;
  options.workspace = workspace;
  auto compiled = backend->compile(*policy, options);
  if (!compiled) {
    std::cerr << compiled.failure().describe() << "\n";
    for (const auto& b : compiled.failure().blockers) {
      std::cerr << "  blocker " << b.subject_name() << ": " << b.reason << "\n";
    }
    return 1;
  }
  const cordon::sandbox_plan& plan = *compiled.plan();

  // 3. Run a command with its output on a pipe this program reads.
  cordon::run_request talk;
  talk.launch.argv = {"/bin/sh", "-c", "for i in 1 2 3; do echo line $i; done"};
  talk.stdout_spec = cordon::stdio_spec::pipe();
  auto streaming = cordon::start_run(plan, talk);
  if (!streaming) {
    std::cerr << streaming.error_value().describe() << "\n";
    return 1;
  }
  // 4. Meanwhile, on another thread, a run that is cancelled.
  cordon::run_report cancelled_report;
  std::thread other([&] {
    cordon::run_request sleeper;
    sleeper.launch.argv = {"/bin/sleep", "60"};
    auto started = cordon::start_run(plan, sleeper);
    if (!started) return;
    if (!started->wait_for(std::chrono::milliseconds(200))) started->cancel();
    cancelled_report = started->wait();
  });

  char buffer[4096];
  ssize_t n;
  while ((n = ::read(streaming->stdout_fd(), buffer, sizeof buffer)) > 0) {
    std::cout << "[sandbox] " << std::string(buffer, static_cast<std::size_t>(n));
  }
  cordon::run_report report = streaming->wait();
  other.join();

  // 5. The reports: the run report JSON, and the exit code a CLI would give.
  std::cout << "streamed run: exit " << cordon::exit_code_for(report) << "\n" << report.json;
  std::cout << "cancelled run: cancelled=" << (cancelled_report.cancelled ? "yes" : "no") << ", exit "
            << cordon::exit_code_for(cancelled_report) << "\n";
  return report.outcome && report.outcome->exited && report.outcome->exit_code == 0 && cancelled_report.cancelled ? 0
                                                                                                                : 1;
}
