// The run API from a multi-threaded host (cordon/run.h): eight confined
// commands started from eight threads of this process, two cancelled, eight
// correct reports, and the host's own SIGCHLD handler and signal mask exactly
// as they were (the helper's clone3 uses exit_signal 0).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "../host_execution_plan.h"
#include "../host_expect.h"
#include "../thread_state.h"
#include "cordon/cordon.h"
#include "cordon/prepared.h"

namespace cordon {
namespace {

std::atomic<int> host_sigchld{0};
void count_sigchld(int) { host_sigchld.fetch_add(1); }

// Reads from `fd` until `wanted` is seen, EOF, or 10 s pass.
std::string read_until(int fd, const std::string& wanted) {
  std::string text;
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (text.find(wanted) == std::string::npos && std::chrono::steady_clock::now() < end) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    char buffer[256];
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n <= 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  return text;
}

// The pids of this process's children, as the kernel lists them.
std::string children_of_this_process() {
  std::string all;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream in(task.path() / "children");
    all += std::string(std::istreambuf_iterator<char>(in), {});
  }
  return all;
}

class RunApi : public ::testing::Test {
 protected:
  void SetUp() override {
    workspace_ = std::filesystem::temp_directory_path() / ("cordon-run-api-" + std::to_string(::getpid()));
    std::filesystem::create_directories(workspace_);
  }
  void TearDown() override { std::filesystem::remove_all(workspace_); }

  std::shared_ptr<const sandbox_plan> compile_profile(const sandbox_backend& backend, const char* name) {
    auto policy = builtin_profile(name);
    EXPECT_TRUE(policy);
    compile_options options;
    options.workspace = workspace_.string();
    auto compiled = backend.compile(*policy, options);
    EXPECT_TRUE(compiled) << compiled.failure().describe();
    return compiled ? compiled.plan() : nullptr;
  }

  std::filesystem::path workspace_;
};

TEST_F(RunApi, EightThreadsTwoCancelledHostSignalsUntouched) {
  auto backend = make_host_backend();
  if (!backend->probe().available) CORDON_SKIP_UNLESS_DECLARED("userns", 1, "the host backend is not available here");
  auto plan = compile_profile(*backend, "workspace-write");
  ASSERT_TRUE(plan);

  struct sigaction handler {}, previous {};
  handler.sa_handler = count_sigchld;
  ::sigemptyset(&handler.sa_mask);
  ASSERT_EQ(::sigaction(SIGCHLD, &handler, &previous), 0);
  sigset_t blocked, mask_before, mask_after;
  ::sigemptyset(&blocked);
  ::sigaddset(&blocked, SIGUSR2);
  ASSERT_EQ(::pthread_sigmask(SIG_BLOCK, &blocked, &mask_before), 0);
  ::pthread_sigmask(SIG_BLOCK, nullptr, &mask_before);

  constexpr int kRuns = 8;
  std::vector<run_report> reports(kRuns);
  std::vector<std::string> outputs(kRuns);
  std::vector<std::string> start_errors(kRuns);
  std::vector<std::thread> threads;
  for (int i = 0; i < kRuns; ++i) {
    threads.emplace_back([&, i] {
      const bool cancel = i < 2;
      run_request request;
      const std::string marker = "run-" + std::to_string(i);
      request.launch.argv = {"/bin/sh", "-c",
                             cancel ? "echo " + marker + "; exec sleep 60" : "echo " + marker + "; exit " + std::to_string(10 + i)};
      request.stdout_spec = stdio_spec::pipe();
      auto started = start_run(*plan, request);
      if (!started) {
        start_errors[i] = started.error_value().describe();
        return;
      }
      run_handle handle = std::move(*started);
      outputs[i] = read_until(handle.stdout_fd(), marker + "\n");
      if (cancel) {
        EXPECT_FALSE(handle.wait_for(std::chrono::milliseconds(50))) << "the sleeping run ended on its own";
        handle.cancel();
      }
      reports[i] = handle.wait();
    });
  }
  for (auto& t : threads) t.join();

  for (int i = 0; i < kRuns; ++i) {
    SCOPED_TRACE("run " + std::to_string(i));
    ASSERT_TRUE(start_errors[i].empty()) << start_errors[i];
    EXPECT_EQ(outputs[i], "run-" + std::to_string(i) + "\n");
    const run_report& r = reports[i];
    ASSERT_FALSE(r.failure) << r.failure->describe();
    ASSERT_TRUE(r.outcome);
    auto json = nlohmann::json::parse(r.json);
    if (i < 2) {
      EXPECT_TRUE(r.cancelled);
      EXPECT_FALSE(r.outcome->exited);
      EXPECT_EQ(r.outcome->signal, SIGKILL);
      EXPECT_EQ(json["outcome"], "cancelled");
      EXPECT_EQ(exit_code_for(r), 128 + SIGKILL);
    } else {
      EXPECT_FALSE(r.cancelled);
      EXPECT_TRUE(r.outcome->exited);
      EXPECT_EQ(r.outcome->exit_code, 10 + i);
      EXPECT_EQ(json["outcome"], "completed");
      EXPECT_EQ(exit_code_for(r), 10 + i);
    }
  }

  // The host's signal handling is exactly as it was.
  EXPECT_EQ(host_sigchld.load(), 0) << "a helper's exit raised SIGCHLD in the host";
  struct sigaction now {};
  ASSERT_EQ(::sigaction(SIGCHLD, nullptr, &now), 0);
  EXPECT_EQ(now.sa_handler, &count_sigchld);
  ::pthread_sigmask(SIG_BLOCK, nullptr, &mask_after);
  for (int sig = 1; sig < NSIG; ++sig) EXPECT_EQ(::sigismember(&mask_before, sig), ::sigismember(&mask_after, sig)) << sig;
  ::pthread_sigmask(SIG_UNBLOCK, &blocked, nullptr);
  ::sigaction(SIGCHLD, &previous, nullptr);
}

TEST_F(RunApi, CommandNotFoundAndGivenDescriptors) {
  auto backend = make_host_backend();
  if (!backend->probe().available) CORDON_SKIP_UNLESS_DECLARED("userns", 1, "the host backend is not available here");
  auto plan = compile_profile(*backend, "read-only");
  ASSERT_TRUE(plan);
  run_request missing;
  missing.launch.argv = {"/no/such/command"};
  auto started = start_run(*plan, missing);
  ASSERT_TRUE(started) << started.error_value().describe();
  run_report r = started->wait();
  ASSERT_TRUE(r.failure);
  EXPECT_EQ(r.failure->code, error_code::command_not_found);
  EXPECT_EQ(exit_code_for(r), exit_not_found);
  EXPECT_EQ(nlohmann::json::parse(r.json)["outcome"], "launch_failed");

  // A descriptor given for stdout: the caller keeps it, the command writes to it.
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  run_request echo;
  echo.launch.argv = {"/bin/echo", "given"};
  echo.stdout_spec = stdio_spec::from(fds[1]);
  auto second = start_run(*plan, echo);
  ASSERT_TRUE(second);
  run_report done = second->wait();
  ::close(fds[1]);
  EXPECT_EQ(read_until(fds[0], "given\n"), "given\n");
  ::close(fds[0]);
  ASSERT_TRUE(done.outcome);
  EXPECT_EQ(done.outcome->exit_code, 0);
}

// True when `fd` reaches end-of-file within 10 s; what came is discarded.
bool reaches_eof(int fd) {
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < end) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    char buffer[4096];
    if (::read(fd, buffer, sizeof buffer) <= 0) return true;
  }
  return false;
}

// A host that reads the command's output to its end before it waits: the
// output ends when the command does, whatever the report's size. Before, the
// helper held its copies of the pipes while it sent the report, so a report
// larger than the socket's buffer (here, 512 KiB of argv the report names)
// left both sides waiting for each other.
TEST_F(RunApi, OutputEndsBeforeALargeReportIsRead) {
  auto backend = make_host_backend();
  if (!backend->probe().available) CORDON_SKIP_UNLESS_DECLARED("userns", 1, "the host backend is not available here");
  for (const bool host_execution : {false, true}) {
    SCOPED_TRACE(host_execution ? "host execution" : "sandbox");
    auto plan = host_execution ? host_execution_plan(workspace_.string()) : compile_profile(*backend, "read-only");
    ASSERT_TRUE(plan);
    run_request request;
    request.launch.argv = {"/bin/echo"};
    for (int i = 0; i < 4; ++i) request.launch.argv.push_back(std::string(128 * 1024 - 1, static_cast<char>('a' + i)));
    request.stdout_spec = stdio_spec::pipe();
    request.stderr_spec = stdio_spec::pipe();
    auto started = start_run(*plan, request);
    ASSERT_TRUE(started) << started.error_value().describe();
    EXPECT_TRUE(reaches_eof(started->stdout_fd())) << "stdout never ended";
    EXPECT_TRUE(reaches_eof(started->stderr_fd())) << "stderr never ended";
    run_report report = started->wait();
    ASSERT_TRUE(report.outcome) << (report.failure ? report.failure->describe() : "");
    EXPECT_EQ(report.outcome->exit_code, 0);
    EXPECT_GT(report.json.size(), 512u * 1024);
  }
}

// cancel() from another thread while one waits without a deadline, and the
// completion descriptor: not readable while the command runs, readable once
// the report comes (what an event loop waits on instead of a thread).
TEST_F(RunApi, CancelWhileAnotherThreadWaitsAndCompletionFd) {
  auto backend = make_host_backend();
  if (!backend->probe().available) CORDON_SKIP_UNLESS_DECLARED("userns", 1, "the host backend is not available here");
  auto plan = compile_profile(*backend, "read-only");
  ASSERT_TRUE(plan);
  run_request sleeper;
  sleeper.launch.argv = {"/bin/sleep", "60"};
  auto started = start_run(*plan, sleeper);
  ASSERT_TRUE(started) << started.error_value().describe();
  pollfd done{started->completion_fd(), POLLIN, 0};
  ASSERT_GE(done.fd, 0);
  EXPECT_FALSE(started->wait_for(std::chrono::milliseconds(100)));
  EXPECT_EQ(::poll(&done, 1, 0), 0) << "the completion descriptor is readable while the command runs";
  run_report report;
  std::atomic<pid_t> waiter_tid{0};
  std::thread waiter([&] {
    waiter_tid = ::gettid();
    report = started->wait();
  });
  // Cancel once the waiter is blocked in wait() (it sleeps: state S), not
  // after a fixed pause.
  EXPECT_TRUE(test::thread_blocks(waiter_tid)) << "the waiting thread never blocked in wait()";
  const auto cancelled_at = std::chrono::steady_clock::now();
  started->cancel();
  waiter.join();
  EXPECT_LT(std::chrono::steady_clock::now() - cancelled_at, std::chrono::seconds(10));
  EXPECT_TRUE(report.cancelled);
  ASSERT_TRUE(report.outcome);
  EXPECT_EQ(report.outcome->signal, SIGKILL);
  // The report is taken as soon as its line is whole; the descriptor turns
  // readable for good when the helper then ends (include/cordon/run.h).
  EXPECT_EQ(::poll(&done, 1, 10000), 1) << "the completion descriptor is not readable after the end";
  started->cancel();  // after the end: nothing happens
  EXPECT_TRUE(started->wait_for(std::chrono::milliseconds(0)));
}

// The calling thread as supervisor (run_in_this_process): the run ends on
// PID 1's `exited` message, before PID 1's own exit has finished
// (src/linux/supervisor.cpp). Whatever the command left behind is gone by
// then; its CPU time is in the outcome; PID 1 itself is reaped soon after by
// a thread, or by the time await_exiting_sandboxes() returns.
TEST_F(RunApi, InThisProcessNothingOutlivesTheRun) {
  auto backend = make_host_backend();
  if (!backend->probe().available) CORDON_SKIP_UNLESS_DECLARED("userns", 1, "the host backend is not available here");
  auto plan = compile_profile(*backend, "read-only");
  ASSERT_TRUE(plan);
  // A fixed amount of work (about half a second of CPU here), not a time: on a
  // busy machine a loop bounded by the clock gets less CPU than it lasts.
  launch_request request{{"/bin/sh", "-c",
                          "sleep 30 & i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; exit 3"},
                         "/",
                         {}};
  run_report r = run_in_this_process(*plan, request);
  ASSERT_TRUE(r.outcome) << (r.failure ? r.failure->describe() : "");
  EXPECT_TRUE(r.outcome->exited);
  EXPECT_EQ(r.outcome->exit_code, 3);
  // The loop's CPU time (hundreds of milliseconds) is in the run's.
  EXPECT_GE(r.outcome->user_cpu_ms + r.outcome->system_cpu_ms, 50);
  EXPECT_LT(r.outcome->wall_ms, 10000) << "the left-behind sleep was waited for";
  auto children = children_of_this_process;
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!children().empty() && std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(children(), "") << "PID 1 was not reaped within 10 s of the run's end";

  // await_exiting_sandboxes(): once it returns, PID 1 is reaped.
  run_report again = run_in_this_process(*plan, {{"/bin/true"}, "/", {}});
  ASSERT_TRUE(again.outcome);
  await_exiting_sandboxes();
  EXPECT_EQ(children(), "");
  await_exiting_sandboxes();  // nothing pending: returns at once
}

// A container's main program is often the init of its PID namespace, where
// orphans come back: the helpers (orphaned grandchildren) must not pile up
// there as zombies, one per run. A child subreaper is the same case without
// a new namespace.
TEST_F(RunApi, AHostWhereOrphansComeBackIsLeftNoZombieHelper) {
  auto backend = make_host_backend();
  if (!backend->probe().available) CORDON_SKIP_UNLESS_DECLARED("userns", 1, "the host backend is not available here");
  auto plan = compile_profile(*backend, "read-only");
  ASSERT_TRUE(plan);
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0) << std::strerror(errno);
  struct undo_subreaper {
    ~undo_subreaper() { ::prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0); }
  } undo;
  for (int i = 0; i < 3; ++i) {
    run_request request;
    request.launch = {{"/bin/true"}, "/", {}};
    auto handle = start_run(*plan, request);
    ASSERT_TRUE(handle) << handle.error_value().describe();
    run_report r = handle->wait();
    ASSERT_TRUE(r.outcome) << (r.failure ? r.failure->describe() : "");
    EXPECT_EQ(r.outcome->exit_code, 0);
  }
  // linux-os-sandbox (user namespaces closed) has no prepared sandboxes.
  if (backend->name() != "linux-os-sandbox") {
    auto unused = prepared_sandbox::prepare(*plan);  // given up unused: its helper leaves too
    ASSERT_TRUE(unused) << unused.error_value().describe();
    auto ready = unused->wait_ready(std::chrono::steady_clock::now() + std::chrono::seconds(30));
    ASSERT_TRUE(ready && *ready);
  }
  await_exiting_sandboxes();  // the helpers' reaps too
  siginfo_t info{};
  const int rc = ::waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT | __WALL);
  EXPECT_TRUE(rc == 0 ? info.si_pid == 0 : errno == ECHILD) << "a helper was left a zombie: pid " << info.si_pid;
  EXPECT_EQ(children_of_this_process(), "");
}

// One TCP server on 127.0.0.1 that answers each connection with "hi" (the
// host side of a filtered run's allowed destination).
struct hello_server {
  int fd = -1;
  int port = 0;
  std::thread thread;
  hello_server() {
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || ::listen(fd, 8) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      return;
    }
    port = ntohs(address.sin_port);
    thread = std::thread([this] {
      for (;;) {
        const int client = ::accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
        if (client < 0) return;
        (void)!::write(client, "hi", 2);
        ::close(client);
      }
    });
  }
  ~hello_server() {
    ::shutdown(fd, SHUT_RDWR);
    if (thread.joinable()) thread.join();
    ::close(fd);
  }
};

// Is a process of `program` running as a network broker? Looks for 3 s.
bool broker_runs(const std::filesystem::path& program) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (std::chrono::steady_clock::now() < end) {
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
      std::error_code ec;
      const auto exe = std::filesystem::read_symlink(entry.path() / "exe", ec);
      if (ec || exe != program) continue;
      std::string cmdline;
      try {  // a process that exits while it is read makes libstdc++ throw (ESRCH)
        std::ifstream in(entry.path() / "cmdline", std::ios::binary);
        cmdline.assign(std::istreambuf_iterator<char>(in), {});
      } catch (const std::exception&) {
        continue;
      }
      if (cmdline.find(std::string("--network-broker") + '\0') != std::string::npos) return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// A filtered run through the run API: the helper executes itself as the
// run's network broker (src/linux/broker_process.h), so a helper at a path
// the host configured is also its broker. The allowed loopback port is
// reached by a plain connect (transparent routing: the broker's entry), the
// other is refused (a violation).
TEST_F(RunApi, AFilteredRunsBrokerIsTheHostsHelper) {
  auto backend = make_host_backend();
  const host_capabilities caps = backend->probe();
  if (!caps.available) CORDON_SKIP_UNLESS_DECLARED("userns", 1, "the host backend is not available here");
  // linux-os-sandbox (user namespaces closed) has no transparent routing: the
  // plain connect below is refused there (its filtered runs:
  // tests/escape/os_sandbox_escape_test.cpp, OsSandbox.Filtered*).
  if (caps.best.at(control::network_filter).level != enforcement_level::enforced ||
      backend->name() == "linux-os-sandbox") {
    CORDON_SKIP_UNLESS_DECLARED("userns", 1, std::string(backend->name()) + " does not filter the network");
  }
  const char* built = std::getenv("CORDON_SUPERVISOR");
  const std::string helper = built != nullptr && *built != '\0' ? built : CORDON_SUPERVISOR_PATH;
  const std::filesystem::path copy = workspace_ / "my-helper";
  std::filesystem::copy_file(helper, copy);
  hello_server allowed;
  hello_server other;
  ASSERT_GT(allowed.port, 0);
  ASSERT_GT(other.port, 0);
  auto policy = builtin_profile("workspace-write");
  ASSERT_TRUE(policy);
  policy->network.mode = network_mode::filtered;
  policy->network.rules = {{"127.0.0.1", allowed.port, rule_action::allow}};
  compile_options options;
  options.workspace = workspace_.string();
  auto compiled = backend->compile(*policy, options);
  ASSERT_TRUE(compiled) << compiled.failure().describe();
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  run_request request;
  request.supervisor_path = copy.string();
  const std::string script = "exec 3<>/dev/tcp/127.0.0.1/" + std::to_string(allowed.port) +
                             " && head -c 2 <&3 && echo; exec 4<>/dev/tcp/127.0.0.1/" + std::to_string(other.port) +
                             " || echo refused";
  request.launch.argv = {"/bin/bash", "-c", script};
  request.stdout_spec = stdio_spec::from(fds[1]);
  ::setenv("CORDON_SUPERVISOR", "/nonexistent/cordon-supervisor", 1);  // not what the broker is
  auto started = start_run(*compiled.plan(), request);
  if (built != nullptr) {
    ::setenv("CORDON_SUPERVISOR", built, 1);
  } else {
    ::unsetenv("CORDON_SUPERVISOR");
  }
  ASSERT_TRUE(started) << started.error_value().describe();
  // While the command waits on its connection (the server speaks first:
  // the broker decides after 1 s), the broker's process is the copy.
  EXPECT_TRUE(broker_runs(copy)) << "no process of " << copy << " with --network-broker";
  run_report r = started->wait();
  ::close(fds[1]);
  EXPECT_EQ(read_until(fds[0], "refused\n"), "hi\nrefused\n");
  ::close(fds[0]);
  ASSERT_TRUE(r.outcome) << r.json;
  const auto report = nlohmann::json::parse(r.json);
  const auto& connections = report["network"]["connections"];
  ASSERT_EQ(connections.size(), 1U) << report["network"].dump();
  EXPECT_EQ(connections[0]["action"], "allow");
  EXPECT_EQ(connections[0]["port"], allowed.port);
  EXPECT_EQ(connections[0]["bytes_received"], 2);
  // A port no rule allows is refused at connect(2) (EACCES), before the broker.
  const nlohmann::json refused = {{"kind", "network_connect"},
                                  {"target", "127.0.0.1:" + std::to_string(other.port)}, {"count", 1}};
  EXPECT_EQ(report["violations"], nlohmann::json::array({refused})) << report["violations"].dump();
}

TEST_F(RunApi, MissingHelperIsALaunchFailureNamingThePath) {
  // cordon/run.h: start_run's errors include launch_failed with errno when no helper is found.
  auto backend = make_host_backend();
  if (!backend->probe().available) CORDON_SKIP_UNLESS_DECLARED("userns", 1, "the host backend is not available here");
  auto plan = compile_profile(*backend, "read-only");
  ASSERT_TRUE(plan);
  run_request request;
  request.launch.argv = {"/bin/true"};
  request.supervisor_path = "/nonexistent/cordon-supervisor";
  auto started = start_run(*plan, request);
  ASSERT_FALSE(started);
  EXPECT_EQ(started.error_value().code, error_code::launch_failed);
  EXPECT_EQ(started.error_value().sys_errno, ENOENT);
  EXPECT_NE(started.error_value().message.find("/nonexistent/cordon-supervisor"), std::string::npos)
      << started.error_value().message;
}

TEST_F(RunApi, AMalformedHelperAnswerIsALaunchFailureNotACrash) {
  // A helper of another version (or a wrong CORDON_SUPERVISOR) whose answer
  // line has the report's framing but not its shape: wait() returns a
  // launch_failed report; before, outcome_from_json threw out of it.
  auto backend = make_host_backend();
  if (!backend->probe().available) CORDON_SKIP_UNLESS_DECLARED("userns", 1, "the host backend is not available here");
  auto plan = compile_profile(*backend, "read-only");
  ASSERT_TRUE(plan);
  const std::pair<const char*, const char*> answers[] = {
      {"outcome-of-another-shape", R"({"report_bytes":2,"outcome":{"exit_code":"x"}})"},
      {"failure-without-fields", R"({"report_bytes":2,"failure":{"code":7}})"},
  };
  for (const auto& [name, answer] : answers) {
    SCOPED_TRACE(name);
    const auto helper = workspace_ / name;
    std::ofstream(helper) << "#!/bin/sh\nprintf '%s\\n{}' '" << answer << "' >&3\n";
    std::filesystem::permissions(helper, std::filesystem::perms::owner_all);
    run_request request;
    request.launch.argv = {"/bin/true"};
    request.supervisor_path = helper.string();
    auto started = start_run(*plan, request);
    ASSERT_TRUE(started) << started.error_value().describe();
    run_report report = started->wait();
    EXPECT_FALSE(report.outcome);
    ASSERT_TRUE(report.failure);
    EXPECT_EQ(report.failure->code, error_code::launch_failed);
    EXPECT_NE(report.failure->message.find("malformed"), std::string::npos) << report.failure->message;
    EXPECT_EQ(report.json, "{}");
  }
}

// A plan compiled with sandbox_preference::forbid (host execution) runs
// through the run API like any other: the helper compiles it again with the
// same backend (before, it used the platform sandbox's, so the fingerprints
// never matched and every such run failed), and cancel() kills it.
TEST_F(RunApi, AHostExecutionPlanRunsAndIsCancelled) {
  auto plan = host_execution_plan(workspace_.string());
  ASSERT_TRUE(plan);

  run_request request;
  request.launch.argv = {"/bin/sh", "-c", "echo on-the-host; exit 3"};
  request.stdout_spec = stdio_spec::pipe();
  auto started = start_run(*plan, request);
  ASSERT_TRUE(started) << started.error_value().describe();
  EXPECT_EQ(read_until(started->stdout_fd(), "\n"), "on-the-host\n");
  run_report report = started->wait();
  ASSERT_TRUE(report.outcome) << (report.failure ? report.failure->describe() : "");
  EXPECT_EQ(report.outcome->exit_code, 3);
  EXPECT_EQ(nlohmann::json::parse(report.json)["backend"]["name"], "host-execution") << report.json;

  request.launch.argv = {"/bin/sh", "-c", "echo up; exec sleep 60"};
  auto sleeping = start_run(*plan, request);
  ASSERT_TRUE(sleeping) << sleeping.error_value().describe();
  EXPECT_EQ(read_until(sleeping->stdout_fd(), "\n"), "up\n");
  const auto before = std::chrono::steady_clock::now();
  sleeping->cancel();
  run_report cancelled = sleeping->wait();
  EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(10));
  ASSERT_TRUE(cancelled.outcome) << (cancelled.failure ? cancelled.failure->describe() : "");
  EXPECT_TRUE(cancelled.cancelled);
  EXPECT_EQ(cancelled.outcome->signal, SIGKILL);
}

// True once `pid` is gone or a zombie (its parent may not have reaped it yet),
// within 5 s.
bool process_ends(pid_t pid) {
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < end) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string stat((std::istreambuf_iterator<char>(in)), {});
    const auto close = stat.rfind(')');
    if (stat.empty() || (close != std::string::npos && stat.substr(close + 2, 1) == "Z")) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// Cancelling a host-execution run kills what the command started too: the
// command leads its own process group and the cancel signals the group (before,
// a background child outlived the cancel, holding the run's output open).
TEST_F(RunApi, CancellingAHostExecutionRunKillsItsChildren) {
  auto plan = host_execution_plan(workspace_.string());
  ASSERT_TRUE(plan);
  run_request request;
  request.launch.argv = {"/bin/sh", "-c", "sleep 60 & echo $!; wait"};
  request.stdout_spec = stdio_spec::pipe();
  auto started = start_run(*plan, request);
  ASSERT_TRUE(started) << started.error_value().describe();
  const std::string line = read_until(started->stdout_fd(), "\n");
  ASSERT_FALSE(line.empty());
  const pid_t child = static_cast<pid_t>(std::stol(line));
  ASSERT_EQ(::kill(child, 0), 0) << "the background sleep runs before the cancel";
  started->cancel();
  run_report cancelled = started->wait();
  EXPECT_TRUE(cancelled.cancelled);
  if (!process_ends(child)) {
    ::kill(child, SIGKILL);  // leaves nothing behind
    ADD_FAILURE() << "pid " << child << " outlived the cancel";
  }
}

}  // namespace
}  // namespace cordon
