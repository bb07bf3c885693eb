// The macOS launcher (src/macos/launcher_apple.cpp) run against a stand-in
// sandbox-exec (tests/macos/sandbox-exec-standin.sh). On Linux the launcher is
// compiled through the platform shim (src/macos/shim/apple_shim.h); these
// tests show what it does around sandbox-exec: the process group, the
// deadline and the group kill, descriptor closing, RLIMIT_CPU and the removal
// of the per-run directory. Seatbelt itself is proved only on a Mac
// (scripts/macos-runner.sh).
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cordon/profiles.h"
#include "macos/filtered_run.h"
#include "macos/launcher.h"
#include "macos_test_support.h"
#include "posix/unique_fd.h"

namespace cordon::macos_impl {
namespace {

namespace fs = std::filesystem;

// A temporary directory, removed with its contents at the end of the test.
struct scratch_dir {
  fs::path path;
  scratch_dir() {
    std::string name = (fs::temp_directory_path() / "cordon-launcher-XXXXXX").string();
    if (::mkdtemp(name.data()) == nullptr) throw std::runtime_error("mkdtemp");
    path = name;
  }
  ~scratch_dir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
};

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A launchable plan whose sandbox-exec is the stand-in and whose per-user
// temporary directory is `temp`; the environment is PATH and the rerooted
// TMPDIR only.
macos_plan standin_plan(const fs::path& temp) {
  macos_plan plan;
  plan.facts.native = true;
  plan.facts.sandbox_exec = CORDON_SOURCE_DIR "/tests/macos/sandbox-exec-standin.sh";
  plan.facts.sandbox_exec_present = true;
  plan.facts.user_temp_dir = temp.string();
  plan.facts.workspace = temp.string();
  plan.profile = "(version 1)(deny default)";
  plan.parameters = {sbpl_parameter{"RUN_TMP", "", true, "the per-run directory"}};
  plan.environment.inherit = environment_inherit::none;
  plan.environment.set = {{"PATH", "/usr/bin:/bin"}, {"TMPDIR", "/tmp"}};
  plan.environment.rerooted = {"TMPDIR"};
  return plan;
}

launch_request shell(const std::string& script, std::vector<std::string> args = {}) {
  launch_request request;
  request.argv = {"/bin/sh", "-c", script, "sh"};
  request.argv.insert(request.argv.end(), args.begin(), args.end());
  return request;
}

// Field `index` (1-based, after the command name) of /proc/PID/stat text.
long stat_field(const std::string& stat, int index) {
  std::istringstream rest(stat.substr(stat.rfind(')') + 2));
  std::string field;
  for (int i = 3; i <= index; ++i) rest >> field;
  return std::stol(field);
}

TEST(MacosLauncher, RefusesAPlanThatIsNotLaunchable) {
  scratch_dir temp;
  macos_plan plan = standin_plan(temp.path);
  plan.facts.native = false;
  const fs::path marker = temp.path / "ran";
  auto outcome = launch_macos_plan(plan, shell("touch \"$1\"", {marker.string()}));
  ASSERT_FALSE(outcome);
  EXPECT_EQ(outcome.error_value().code, error_code::launch_failed);
  EXPECT_FALSE(fs::exists(marker));
}

TEST(MacosLauncher, RunsTheCommandThroughSandboxExecAndReturnsItsExitStatus) {
  scratch_dir temp;
  auto outcome = launch_macos_plan(standin_plan(temp.path), shell("exit 7"));
  ASSERT_TRUE(outcome) << outcome.error_value().message;
  EXPECT_TRUE(outcome->exited);
  EXPECT_EQ(outcome->exit_code, 7);
  EXPECT_FALSE(outcome->timed_out);
}

TEST(MacosLauncher, TheCommandLeadsItsOwnSessionAndProcessGroup) {
  scratch_dir temp;
  const fs::path out = temp.path / "stat";
  // exec: cat is the launcher's child itself (sandbox-exec and sh exec in place).
  auto outcome = launch_macos_plan(standin_plan(temp.path), shell("exec cat /proc/self/stat > \"$1\"", {out.string()}));
  ASSERT_TRUE(outcome) << outcome.error_value().message;
  ASSERT_EQ(outcome->exit_code, 0);
  const std::string stat = read_file(out);
  const long pid = std::stol(stat);
  EXPECT_EQ(stat_field(stat, 5), pid);  // process group
  EXPECT_EQ(stat_field(stat, 6), pid);  // session
  EXPECT_NE(stat_field(stat, 5), static_cast<long>(::getpgrp()));
}

// This process adopts the command's orphans, so that a test can reap them and
// see the signal that ended them.
void become_subreaper() { ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0) << std::strerror(errno); }

int reap(pid_t pid) {
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return -1;
  return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

TEST(MacosLauncher, WhatTheCommandLeftInItsGroupIsKilledWhenItEnds) {
  become_subreaper();
  scratch_dir temp;
  const fs::path out = temp.path / "pid";
  auto outcome =
      launch_macos_plan(standin_plan(temp.path), shell("sleep 1000 & echo $! > \"$1\"", {out.string()}));
  ASSERT_TRUE(outcome) << outcome.error_value().message;
  EXPECT_EQ(outcome->exit_code, 0);
  EXPECT_FALSE(outcome->timed_out);
  const pid_t left = static_cast<pid_t>(std::stol(read_file(out)));
  EXPECT_EQ(reap(left), SIGKILL);
}

TEST(MacosLauncher, TheDeadlineKillsTheWholeGroup) {
  become_subreaper();
  scratch_dir temp;
  macos_plan plan = standin_plan(temp.path);
  plan.timeout_ms = 500;
  const fs::path out = temp.path / "pid";
  auto outcome = launch_macos_plan(plan, shell("sleep 1000 & echo $! > \"$1\"; wait", {out.string()}));
  ASSERT_TRUE(outcome) << outcome.error_value().message;
  EXPECT_TRUE(outcome->timed_out);
  EXPECT_FALSE(outcome->exited);
  EXPECT_EQ(outcome->signal, SIGKILL);
  const pid_t left = static_cast<pid_t>(std::stol(read_file(out)));
  EXPECT_EQ(reap(left), SIGKILL);
}

TEST(MacosLauncher, DescriptorsAboveStderrAreClosedAndStdioIsKept) {
  scratch_dir temp;
  const unique_fd inherited(::open("/dev/null", O_RDONLY));  // no O_CLOEXEC: it would be inherited
  ASSERT_TRUE(inherited);
  ASSERT_GT(inherited.get(), 2);
  const std::string fd = std::to_string(inherited.get());
  auto closed = launch_macos_plan(standin_plan(temp.path), shell("test ! -e /proc/$$/fd/" + fd));
  ASSERT_TRUE(closed) << closed.error_value().message;
  EXPECT_EQ(closed->exit_code, 0) << "descriptor " << fd << " reached the command";
  auto kept = launch_macos_plan(standin_plan(temp.path), shell("test -e /proc/$$/fd/2"));
  ASSERT_TRUE(kept) << kept.error_value().message;
  EXPECT_EQ(kept->exit_code, 0);
}

TEST(MacosLauncher, RlimitCpuIsSetWhenThePlanHasOne) {
  scratch_dir temp;
  macos_plan plan = standin_plan(temp.path);
  plan.rlimit_cpu_seconds = 7;
  const fs::path out = temp.path / "limit";
  auto outcome = launch_macos_plan(plan, shell("ulimit -t > \"$1\"; ulimit -H -t >> \"$1\"", {out.string()}));
  ASSERT_TRUE(outcome) << outcome.error_value().message;
  EXPECT_EQ(outcome->exit_code, 0);
  EXPECT_EQ(read_file(out), "7\n7\n");
}

TEST(MacosLauncher, ThePerRunDirectoryIsTheCommandsTmpdirAndIsRemovedAfterwards) {
  scratch_dir temp;
  const fs::path users = temp.path / "T";
  fs::create_directory(users);
  const fs::path out = temp.path / "tmpdir";
  auto outcome = launch_macos_plan(
      standin_plan(users),
      shell("mkdir \"$TMPDIR/sub\" && echo x > \"$TMPDIR/sub/file\" && echo \"$TMPDIR\" > \"$1\"", {out.string()}));
  ASSERT_TRUE(outcome) << outcome.error_value().message;
  ASSERT_EQ(outcome->exit_code, 0);
  std::string used = read_file(out);
  ASSERT_FALSE(used.empty());
  used.pop_back();
  EXPECT_EQ(fs::path(used).parent_path(), users);
  EXPECT_EQ(fs::path(used).filename().string().rfind("cordon-run-", 0), 0u);
  EXPECT_FALSE(fs::exists(used));
  EXPECT_TRUE(fs::is_empty(users));
}

TEST(MacosLauncher, AMissingCommandIs127) {
  scratch_dir temp;
  launch_request request;
  request.argv = {"/nonexistent/cordon-no-such-command"};
  auto outcome = launch_macos_plan(standin_plan(temp.path), request);
  ASSERT_TRUE(outcome) << outcome.error_value().message;
  EXPECT_TRUE(outcome->exited);
  EXPECT_EQ(outcome->exit_code, 127);
}

// A filtered policy: the broker listens before the plan is compiled, the
// command reaches it through the proxy variables the plan sets, and its
// decisions come back in the outcome.
TEST(MacosLauncher, AFilteredPolicyStartsTheBrokerTheCommandReachesThroughItsProxy) {
  scratch_dir temp;
  fs::create_directories(temp.path / "home" / "project");
  fs::create_directory(temp.path / "T");
  auto profile = builtin_profile("workspace-write");
  ASSERT_TRUE(profile) << profile.error_value().message;
  sandbox_policy policy = *profile;
  policy.network.mode = network_mode::filtered;
  policy.network.rules = {network_rule{.host = "allowed.test", .port = 80, .action = rule_action::allow}};
  policy.network.default_action = rule_action::deny;
  macos_host_facts facts;
  facts.native = true;
  facts.aliases = standard_macos_aliases();
  facts.home = (temp.path / "home").string();
  facts.workspace = (temp.path / "home" / "project").string();
  facts.user_temp_dir = (temp.path / "T").string();
  facts.sandbox_exec = CORDON_SOURCE_DIR "/tests/macos/sandbox-exec-standin.sh";
  facts.sandbox_exec_present = true;
  const fs::path out = temp.path / "answer";
  // CONNECT to a host no rule allows, through the proxy the plan names.
  const std::string script =
      "import os, socket, sys\n"
      "proxy = os.environ['http_proxy'].rsplit(':', 1)\n"
      "s = socket.create_connection(('127.0.0.1', int(proxy[1])))\n"
      "s.sendall(b'CONNECT denied.test:80 HTTP/1.1\\r\\nHost: denied.test:80\\r\\n\\r\\n')\n"
      "open(sys.argv[1], 'w').write(os.environ['http_proxy'] + ' ' + s.recv(64).decode().split('\\r\\n')[0])\n";
  launch_request request;
  request.argv = {"/usr/bin/python3", "-c", script, out.string()};
  auto outcome = run_macos_policy(macos_test::accept_unverified(policy), facts, request);
  ASSERT_TRUE(outcome) << outcome.error_value().describe()
                       << (outcome ? "" : outcome.error_value().errors.empty() ? "" : outcome.error_value().errors[0].location + ": " + outcome.error_value().errors[0].reason);
  EXPECT_EQ(outcome->exit_code, 0);
  const std::string answer = read_file(out);
  EXPECT_EQ(answer.rfind("http://127.0.0.1:", 0), 0u) << answer;
  EXPECT_NE(answer.find(" HTTP/1.1 403"), std::string::npos) << answer;
  ASSERT_TRUE(outcome->network);
  ASSERT_EQ(outcome->network->connections.size(), 1u);
  EXPECT_EQ(outcome->network->connections[0].host, "denied.test");
  EXPECT_EQ(outcome->network->connections[0].action, "deny");
}

TEST(MacosLauncher, APolicyThatIsNotFilteredStartsNoBroker) {
  scratch_dir temp;
  macos_host_facts facts;
  facts.native = true;
  facts.aliases = standard_macos_aliases();
  fs::create_directories(temp.path / "home" / "project");
  fs::create_directory(temp.path / "T");
  facts.home = (temp.path / "home").string();
  facts.workspace = (temp.path / "home" / "project").string();
  facts.user_temp_dir = (temp.path / "T").string();
  facts.sandbox_exec = CORDON_SOURCE_DIR "/tests/macos/sandbox-exec-standin.sh";
  facts.sandbox_exec_present = true;
  auto profile = builtin_profile("workspace-write");
  ASSERT_TRUE(profile);
  launch_request request;
  request.argv = {"/bin/sh", "-c", "test -z \"$http_proxy\""};
  auto outcome = run_macos_policy(macos_test::accept_unverified(*profile), facts, request);
  ASSERT_TRUE(outcome) << outcome.error_value().describe();
  EXPECT_EQ(outcome->exit_code, 0);
  EXPECT_FALSE(outcome->network);
}

}  // namespace
}  // namespace cordon::macos_impl
