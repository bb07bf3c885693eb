// Prepared sandboxes (cordon/prepared.h, docs/prepared.md): a command run in
// a sandbox set up ahead of time is confined and reported as an ordinary
// run, says it was prepared, and a sandbox serves one command only.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <string>
#include <thread>
#include <vector>

#include "cordon/cordon.h"
#include "cordon/prepared.h"
#include "../host_execution_plan.h"
#include "fixture.h"

namespace cordon {
namespace {

// Everything `fd` gives until EOF or 10 s.
std::string read_all(int fd) {
  std::string text;
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < end) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    char buffer[512];
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n <= 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  return text;
}

class Prepared : public prepared_fixture {
 protected:
  static run_request shell(const std::string& script) {
    run_request request;
    request.launch.argv = {"/bin/sh", "-c", script};
    request.stdout_spec = stdio_spec::pipe();
    request.stderr_spec = stdio_spec::pipe();
    return request;
  }

  // Runs `script` in a ready sandbox: its stdout, and the report.
  static std::pair<std::string, run_report> run_in(prepared_sandbox& sandbox, const sandbox_plan& plan,
                                                   const std::string& script) {
    auto started = sandbox.start(plan, shell(script));
    EXPECT_TRUE(started) << started.error_value().describe();
    if (!started) return {};
    std::string out = read_all(started->stdout_fd());
    return {out, started->wait()};
  }

  // `script` started from a pool of one ready sandbox of the workspace-write
  // plan whose refill waits up to `refill_after`; a null pool or no run (a
  // failed expectation) when the pool never fills or the start fails.
  std::pair<std::unique_ptr<prepared_pool>, std::optional<run_handle>> start_in_pool_of_one(
      std::chrono::milliseconds refill_after, const std::string& script);
};

TEST_F(Prepared, ConfinedRunReportsPreparedAndIsUsedOnce) {
  auto plan = compile_profile("workspace-write");
  ASSERT_TRUE(plan);
  auto sandbox = prepared_sandbox::prepare(*plan);
  ASSERT_TRUE(sandbox) << sandbox.error_value().describe();
  auto ready = sandbox->wait_ready(std::chrono::steady_clock::now() + std::chrono::seconds(30));
  ASSERT_TRUE(ready) << ready.error_value().describe();
  ASSERT_TRUE(*ready);
  EXPECT_TRUE(sandbox->ready());
  const std::string prepared_at = sandbox->prepared_at();
  EXPECT_EQ(prepared_at.size(), 24u) << prepared_at;  // YYYY-MM-DDTHH:MM:SS.mmmZ

  // Allowed: writing in the workspace. Forbidden: writing outside it (/usr
  // is read-only: EROFS, or EACCES from Landlock), and the host's /etc/shadow.
  const std::string file = (workspace_ / "from-prepared").string();
  auto [out, report] = run_in(*sandbox, *plan,
                              "echo written > " + file + " && echo ok; "
                              "touch /usr/cordon-prepared-probe 2>/dev/null && echo usr-writable; "
                              "echo $$; exit 7");
  ASSERT_FALSE(report.failure) << report.failure->describe();
  ASSERT_TRUE(report.outcome);
  EXPECT_TRUE(report.outcome->exited);
  EXPECT_EQ(report.outcome->exit_code, 7);
  EXPECT_EQ(exit_code_for(report), 7);
  EXPECT_EQ(out.substr(0, 3), "ok\n") << out;
  EXPECT_EQ(out.find("usr-writable"), std::string::npos) << out;
  EXPECT_EQ(out.substr(3), "2\n") << "the command is PID 2 of its own namespace: " << out;
  std::ifstream written(file);
  std::string line;
  std::getline(written, line);
  EXPECT_EQ(line, "written");
  EXPECT_FALSE(std::filesystem::exists("/usr/cordon-prepared-probe"));

  auto json = nlohmann::json::parse(report.json);
  EXPECT_EQ(json["outcome"], "completed");
  EXPECT_EQ(json["prepared"], true);
  EXPECT_EQ(json["prepared_at"], prepared_at);
  EXPECT_EQ(json["command"]["argv"][0], "/bin/sh");
  EXPECT_EQ(report.outcome->prepared_at, prepared_at);

  // Used once: the handle is spent.
  auto again = sandbox->start(*plan, shell("true"));
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error_value().code, error_code::usage_error);
}

TEST_F(Prepared, OrdinaryRunSaysNotPrepared) {
  auto plan = compile_profile("read-only");
  ASSERT_TRUE(plan);
  auto started = start_run(*plan, shell("true"));
  ASSERT_TRUE(started);
  run_report report = started->wait();
  ASSERT_TRUE(report.outcome);
  EXPECT_EQ(nlohmann::json::parse(report.json)["prepared"], false);
  EXPECT_FALSE(report.outcome->prepared_at);
}

TEST_F(Prepared, NothingPassesFromOneCommandToTheNext) {
  auto plan = compile_profile("workspace-write");
  ASSERT_TRUE(plan);
  pool_options options;
  options.size = 1;
  prepared_pool pool(plan, options);
  // /tmp is private to each sandbox: what one command leaves there is gone for the next.
  auto first = pool.start(shell("echo secret > /tmp/left-behind; cat /tmp/left-behind"));
  ASSERT_TRUE(first) << first.error_value().describe();
  EXPECT_EQ(read_all(first->stdout_fd()), "secret\n");
  run_report one = first->wait();
  ASSERT_TRUE(one.outcome);
  auto second = pool.start(shell("cat /tmp/left-behind; echo status=$?"));
  ASSERT_TRUE(second) << second.error_value().describe();
  std::string out = read_all(second->stdout_fd());
  EXPECT_EQ(out, "status=1\n") << out;
  run_report two = second->wait();
  ASSERT_TRUE(two.outcome);
  EXPECT_TRUE(two.outcome->prepared_at);
  EXPECT_NE(first->pid(), second->pid()) << "two commands shared one helper";
}

// Waits up to `limit` for the pool to hold `count` ready sandboxes.
bool pool_reaches(const prepared_pool& pool, std::size_t count, std::chrono::milliseconds limit) {
  auto end = std::chrono::steady_clock::now() + limit;
  while (pool.ready_count() < count) {
    if (std::chrono::steady_clock::now() >= end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

std::pair<std::unique_ptr<prepared_pool>, std::optional<run_handle>> Prepared::start_in_pool_of_one(
    std::chrono::milliseconds refill_after, const std::string& script) {
  auto plan = compile_profile("workspace-write");
  if (!plan) return {};
  pool_options options;
  options.size = 1;
  options.refill_after = refill_after;
  auto pool = std::make_unique<prepared_pool>(plan, options);
  if (!pool_reaches(*pool, 1, std::chrono::seconds(20))) {
    ADD_FAILURE() << "the pool never filled";
    return {};
  }
  auto started = pool->start(shell(script));
  if (!started) {
    ADD_FAILURE() << started.error_value().describe();
    return {std::move(pool), std::nullopt};
  }
  return {std::move(pool), std::move(*started)};
}

// The replacement of a sandbox taken by start() is prepared once its run is
// over (pool_options::refill_after): not while the command runs, and at
// once after it. The command waits on a FIFO, so it runs exactly as long as
// the test says; the pool's own counters show its refill thread looking,
// waiting for the run instead of preparing, and preparing once it is over.
TEST_F(Prepared, RefillWaitsForTheRunItReplaces) {
  const std::string fifo = (workspace_ / "go").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  auto [pool_of_one, run] = start_in_pool_of_one(std::chrono::seconds(20), "cat '" + fifo + "' >/dev/null; echo done");
  ASSERT_TRUE(pool_of_one && run);
  prepared_pool& pool = *pool_of_one;
  // The first preparation filled the pool; start() took its sandbox. The
  // refill thread then looks and, the run going on, waits: once it has
  // (a positive event), nothing may have been prepared meanwhile.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (pool.refills_deferred() == 0 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_GE(pool.refills_deferred(), 1u) << "the refill thread never looked for work";
  EXPECT_EQ(pool.preparations_started(), 1u) << "a replacement was prepared while the command ran";
  EXPECT_EQ(pool.ready_count(), 0u) << "the replacement was prepared while the command ran";
  // The command is still blocked on the FIFO: its run cannot be over.
  EXPECT_FALSE(run->wait_for(std::chrono::milliseconds(0)));
  {
    std::ofstream release(fifo);  // opens the FIFO for writing; closing it ends the command's cat
  }
  EXPECT_EQ(read_all(run->stdout_fd()), "done\n");
  run_report report = run->wait();
  ASSERT_TRUE(report.outcome);
  EXPECT_EQ(exit_code_for(report), 0);
  // The helper exits after its report: the refill starts then, not 20 s later.
  EXPECT_TRUE(pool_reaches(pool, 1, std::chrono::seconds(10))) << "no refill after the run ended";
  EXPECT_EQ(pool.preparations_started(), 2u);
}

// A long command does not hold the refill back longer than refill_after.
TEST_F(Prepared, RefillWaitsNoLongerThanRefillAfter) {
  auto [pool_of_one, run] = start_in_pool_of_one(std::chrono::milliseconds(50), "sleep 30");
  ASSERT_TRUE(pool_of_one && run);
  EXPECT_TRUE(pool_reaches(*pool_of_one, 1, std::chrono::seconds(10))) << "the refill waited for the whole command";
  EXPECT_FALSE(run->wait_for(std::chrono::milliseconds(0))) << "the command ended early";
  run->cancel();
  run_report report = run->wait();
  EXPECT_TRUE(report.cancelled);
}

// A signal the host ignores (here SIGHUP and SIGUSR1, as under nohup)
// reaches neither kind of command ignored: every disposition is the default
// at exec (PID 1 resets them before it installs its handlers).
TEST_F(Prepared, CommandStartsWithDefaultDispositions) {
  auto plan = compile_profile("workspace-write");
  ASSERT_TRUE(plan);
  struct sigaction ignore {}, old_hup {}, old_usr1 {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGHUP, &ignore, &old_hup);
  ::sigaction(SIGUSR1, &ignore, &old_usr1);
  auto sandbox = prepared_sandbox::prepare(*plan);  // its helper and PID 1 inherit them
  auto ordinary = start_run(*plan, shell("grep SigIgn /proc/self/status"));
  auto ready = sandbox ? sandbox->wait_ready(std::chrono::steady_clock::now() + std::chrono::seconds(30))
                       : result<bool>(false);
  ::sigaction(SIGHUP, &old_hup, nullptr);
  ::sigaction(SIGUSR1, &old_usr1, nullptr);
  ASSERT_TRUE(sandbox) << sandbox.error_value().describe();
  ASSERT_TRUE(ordinary) << ordinary.error_value().describe();
  ASSERT_TRUE(ready && *ready);
  const std::string expected = "SigIgn:\t0000000000000000\n";
  EXPECT_EQ(read_all(ordinary->stdout_fd()), expected);
  EXPECT_EQ(exit_code_for(ordinary->wait()), 0);
  auto [out, report] = run_in(*sandbox, *plan, "grep SigIgn /proc/self/status");
  EXPECT_EQ(out, expected);
  EXPECT_EQ(exit_code_for(report), 0);
}

TEST_F(Prepared, PlanChangeInvalidates) {
  auto plan = compile_profile("workspace-write");
  auto other = compile_profile("read-only");
  ASSERT_TRUE(plan && other);
  auto sandbox = prepared_sandbox::prepare(*plan);
  ASSERT_TRUE(sandbox);
  auto started = sandbox->start(*other, shell("echo ran"));
  ASSERT_FALSE(started);
  EXPECT_EQ(started.error_value().code, error_code::plan_stale);

  // A pool updated to another plan gives up what it prepared.
  pool_options options;
  options.size = 1;
  prepared_pool pool(plan, options);
  auto first = pool.start(shell("touch " + (workspace_ / "w").string() + "; echo $?"));
  ASSERT_TRUE(first);
  EXPECT_EQ(read_all(first->stdout_fd()), "0\n");
  first->wait();
  pool.update(other);
  auto second = pool.start(shell("touch " + (workspace_ / "r").string() + " 2>/dev/null; echo $?"));
  ASSERT_TRUE(second) << second.error_value().describe();
  EXPECT_EQ(read_all(second->stdout_fd()), "1\n") << "the read-only plan's sandbox let the workspace be written";
  second->wait();
  EXPECT_FALSE(std::filesystem::exists(workspace_ / "r"));
}

TEST_F(Prepared, HostFactChangeInvalidates) {
  auto plan = compile_profile("workspace-write");
  ASSERT_TRUE(plan);
  pool_options options;
  options.size = 1;
  prepared_pool pool(plan, options);
  auto unchanged = pool.refresh();
  ASSERT_TRUE(unchanged) << unchanged.error_value().describe();
  EXPECT_FALSE(*unchanged);
  // A repository appears under the writable workspace: the plan protects
  // its hooks and config now, so what was prepared is given up.
  std::filesystem::create_directories(workspace_ / ".git" / "hooks");
  std::ofstream(workspace_ / ".git" / "config") << "[core]\n";
  std::ofstream(workspace_ / ".git" / "HEAD") << "ref: refs/heads/main\n";
  auto changed = pool.refresh();
  ASSERT_TRUE(changed) << changed.error_value().describe();
  EXPECT_TRUE(*changed);
  EXPECT_NE(plan_fingerprint(*pool.plan()), plan_fingerprint(*plan));

  // A sandbox prepared for the old plan refuses to run under the new one.
  auto old_sandbox = prepared_sandbox::prepare(*plan);
  ASSERT_TRUE(old_sandbox);
  auto refused = old_sandbox->wait_ready(std::chrono::steady_clock::now() + std::chrono::seconds(30));
  ASSERT_FALSE(refused) << "the helper prepared a plan the host no longer gives";
  EXPECT_EQ(refused.error_value().code, error_code::plan_stale);

  auto started = pool.start(shell("touch " + (workspace_ / ".git" / "hooks" / "pre-commit").string() +
                                  " 2>/dev/null; echo $?"));
  ASSERT_TRUE(started) << started.error_value().describe();
  EXPECT_EQ(read_all(started->stdout_fd()), "1\n");
  started->wait();
}

TEST_F(Prepared, PoolOfFourServesFourThreadsAtOnce) {
  auto plan = compile_profile("workspace-write");
  ASSERT_TRUE(plan);
  pool_options options;
  options.size = 4;
  prepared_pool pool(plan, options);
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (pool.ready_count() < 4 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(pool.ready_count(), 4u);
  constexpr int kThreads = 4;
  std::vector<std::string> outputs(kThreads), errors(kThreads);
  std::vector<run_report> reports(kThreads);
  std::vector<pid_t> helpers(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      auto started = pool.start(shell("echo run-" + std::to_string(i) + "; exit " + std::to_string(20 + i)));
      if (!started) {
        errors[i] = started.error_value().describe();
        return;
      }
      helpers[i] = started->pid();
      outputs[i] = read_all(started->stdout_fd());
      reports[i] = started->wait();
    });
  }
  for (auto& t : threads) t.join();
  std::set<pid_t> distinct;
  for (int i = 0; i < kThreads; ++i) {
    SCOPED_TRACE("thread " + std::to_string(i));
    ASSERT_TRUE(errors[i].empty()) << errors[i];
    EXPECT_EQ(outputs[i], "run-" + std::to_string(i) + "\n");
    ASSERT_TRUE(reports[i].outcome);
    EXPECT_EQ(reports[i].outcome->exit_code, 20 + i);
    EXPECT_TRUE(reports[i].outcome->prepared_at);
    distinct.insert(helpers[i]);
  }
  EXPECT_EQ(distinct.size(), 4u) << "a prepared sandbox served two commands";
}

TEST_F(Prepared, CancelAndCommandNotFound) {
  auto plan = compile_profile("read-only");
  ASSERT_TRUE(plan);
  auto sandbox = prepared_sandbox::prepare(*plan);
  ASSERT_TRUE(sandbox);
  run_request missing;
  missing.launch.argv = {"/no/such/command"};
  auto started = sandbox->start(*plan, missing);
  ASSERT_TRUE(started) << started.error_value().describe();
  run_report r = started->wait();
  ASSERT_TRUE(r.failure);
  EXPECT_EQ(r.failure->code, error_code::command_not_found);
  EXPECT_EQ(exit_code_for(r), exit_not_found);

  auto second = prepared_sandbox::prepare(*plan);
  ASSERT_TRUE(second);
  auto sleeping = second->start(*plan, shell("echo up; exec sleep 60"));
  ASSERT_TRUE(sleeping);
  std::string up;
  char c;
  while (up.find('\n') == std::string::npos && ::read(sleeping->stdout_fd(), &c, 1) == 1) up += c;
  EXPECT_EQ(up, "up\n");
  sleeping->cancel();
  run_report cancelled = sleeping->wait();
  ASSERT_TRUE(cancelled.outcome);
  EXPECT_TRUE(cancelled.cancelled);
  EXPECT_EQ(nlohmann::json::parse(cancelled.json)["outcome"], "cancelled");
}

// A helper whose answer is not a prepared sandbox's (a wrong
// CORDON_SUPERVISOR, another version) is a launch_failed value, never an
// exception out of wait_ready() (that would std::terminate a host's pool
// thread).
TEST_F(Prepared, AMalformedHelperAnswerIsALaunchFailureNotACrash) {
  auto plan = compile_profile("read-only");
  ASSERT_TRUE(plan);
  const std::pair<const char*, const char*> answers[] = {
      {"ready-not-a-string", R"({"ready":5})"},
      {"failure-without-fields", R"({"failure":{"code":7}})"},
      {"an-array", R"([1,2])"},
  };
  for (const auto& [name, answer] : answers) {
    SCOPED_TRACE(name);
    const auto helper = workspace_ / name;
    std::ofstream(helper) << "#!/bin/sh\nprintf '%s\\n' '" << answer << "' >&3\n";
    std::filesystem::permissions(helper, std::filesystem::perms::owner_all);
    prepare_options options;
    options.supervisor_path = helper.string();
    auto sandbox = prepared_sandbox::prepare(*plan, options);
    ASSERT_TRUE(sandbox) << sandbox.error_value().describe();
    auto ready = sandbox->wait_ready(std::chrono::steady_clock::now() + std::chrono::seconds(10));
    ASSERT_FALSE(ready);
    EXPECT_EQ(ready.error_value().code, error_code::launch_failed);
    EXPECT_NE(ready.error_value().message.find("not a prepared sandbox"), std::string::npos)
        << ready.error_value().message;
    EXPECT_FALSE(sandbox->ready());
  }
}

TEST_F(Prepared, AHostExecutionPlanIsNotPrepared) {
  // Nothing to set up ahead: refused at once, and named, rather than a
  // helper that fails later with a misleading plan_stale.
  auto plan = host_execution_plan(workspace_.string());
  ASSERT_TRUE(plan);
  auto sandbox = prepared_sandbox::prepare(*plan);
  ASSERT_FALSE(sandbox);
  EXPECT_EQ(sandbox.error_value().code, error_code::usage_error);
  EXPECT_NE(sandbox.error_value().message.find("host-execution"), std::string::npos) << sandbox.error_value().message;
  prepared_pool pool(plan, {});
  run_request request;
  request.launch.argv = {"/bin/true"};
  auto started = pool.start(request);
  ASSERT_FALSE(started);
  EXPECT_NE(started.error_value().describe().find("host-execution"), std::string::npos)
      << started.error_value().describe();
}

TEST_F(Prepared, APoolWhoseHelperNeverAnswersIsDestroyedPromptly) {
  // The refill thread waits for a preparation in slices: destroying the
  // pool does not wait the 30 s a helper is given (before: it did).
  auto plan = compile_profile("read-only");
  ASSERT_TRUE(plan);
  const auto helper = workspace_ / "silent-helper";
  std::ofstream(helper) << "#!/bin/sh\nexec cat <&3 >/dev/null\n";  // reads until the pool gives it up
  std::filesystem::permissions(helper, std::filesystem::perms::owner_all);
  pool_options options;
  options.size = 1;
  options.supervisor_path = helper.string();
  options.wait = std::chrono::milliseconds(300);
  auto pool = std::make_unique<prepared_pool>(plan, options);
  run_request request;
  request.launch.argv = {"/bin/true"};
  auto started = pool->start(request);  // 300 ms: the refill thread is in its wait by then
  ASSERT_FALSE(started);
  EXPECT_EQ(started.error_value().code, error_code::launch_failed);
  const auto before = std::chrono::steady_clock::now();
  pool.reset();
  EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(2));
}

}  // namespace
}  // namespace cordon
