// A launch begun before its plan (sandbox_backend::prestart_launch): it runs
// the plan it is given, with the plan's shape even when the policy it was
// begun from differs, and ends cleanly when it is not used.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "cordon/cordon.h"

namespace cordon {
namespace {

struct temp_workspace {
  std::string path;
  temp_workspace() {
    char pattern[] = "/tmp/cordon-prestart-XXXXXX";
    const char* made = ::mkdtemp(pattern);
    path = made != nullptr ? made : "";
  }
  ~temp_workspace() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  std::string read(const std::string& name) const {
    std::ifstream in(path + "/" + name);
    std::string text;
    std::getline(in, text);
    return text;
  }
};

sandbox_policy policy_for(const std::string& workspace, network_mode mode) {
  sandbox_policy p;
  p.name = "prestart-test";
  p.filesystem.writable = {workspace};
  p.network.mode = mode;
  return p;
}

launch_request shell(const std::string& workspace, const std::string& script) {
  launch_request r;
  r.argv = {"/bin/sh", "-c", script};
  r.working_directory = workspace;
  r.host_environment = {"PATH=/usr/bin:/bin"};
  return r;
}

std::string host_net_namespace() {
  char buffer[64] = {};
  ssize_t n = ::readlink("/proc/self/ns/net", buffer, sizeof buffer - 1);
  return n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : "";
}

bool no_child_left() {
  return ::waitpid(-1, nullptr, WNOHANG) < 0 && errno == ECHILD;
}

TEST(Prestart, RunsThePlanItIsGiven) {
  temp_workspace ws;
  auto backend = make_linux_backend();
  sandbox_policy policy = policy_for(ws.path, network_mode::denied);
  auto prestarted = backend->prestart_launch(policy);
  ASSERT_NE(prestarted, nullptr);
  auto compiled = backend->compile(policy, {});
  ASSERT_TRUE(compiled) << compiled.failure().message;
  auto outcome = backend->launch_prestarted(compiled.plan().get(),
                                            shell(ws.path, "readlink /proc/self/ns/net > ns; exit 3"),
                                            std::move(prestarted));
  ASSERT_TRUE(outcome) << outcome.error_value().describe();
  EXPECT_TRUE(outcome->exited);
  EXPECT_EQ(outcome->exit_code, 3);
  EXPECT_NE(ws.read("ns"), "");
  EXPECT_NE(ws.read("ns"), host_net_namespace());
  EXPECT_TRUE(no_child_left());
}

// Begun for a policy with the host's network, given a plan that denies it:
// the launch has its own network namespace all the same.
TEST(Prestart, OfAnotherShapeIsReplaced) {
  temp_workspace ws;
  auto backend = make_linux_backend();
  auto prestarted = backend->prestart_launch(policy_for(ws.path, network_mode::unrestricted));
  ASSERT_NE(prestarted, nullptr);
  auto compiled = backend->compile(policy_for(ws.path, network_mode::denied), {});
  ASSERT_TRUE(compiled) << compiled.failure().message;
  auto outcome = backend->launch_prestarted(compiled.plan().get(), shell(ws.path, "readlink /proc/self/ns/net > ns"),
                                            std::move(prestarted));
  ASSERT_TRUE(outcome) << outcome.error_value().describe();
  EXPECT_EQ(outcome->exit_code, 0);
  EXPECT_NE(ws.read("ns"), "");
  EXPECT_NE(ws.read("ns"), host_net_namespace());
  // The control: begun and compiled with the host's network, it is the host's.
  auto same = backend->prestart_launch(policy_for(ws.path, network_mode::unrestricted));
  auto unrestricted = backend->compile(policy_for(ws.path, network_mode::unrestricted), {});
  ASSERT_TRUE(unrestricted) << unrestricted.failure().message;
  auto control = backend->launch_prestarted(unrestricted.plan().get(),
                                            shell(ws.path, "readlink /proc/self/ns/net > ns"), std::move(same));
  ASSERT_TRUE(control) << control.error_value().describe();
  EXPECT_EQ(ws.read("ns"), host_net_namespace());
  EXPECT_TRUE(no_child_left());
}

TEST(Prestart, UnusedEndsItsProcessAndRestoresTheSignalMask) {
  temp_workspace ws;
  sigset_t before, after;
  ASSERT_EQ(::sigprocmask(SIG_SETMASK, nullptr, &before), 0);
  {
    auto backend = make_linux_backend();
    auto prestarted = backend->prestart_launch(policy_for(ws.path, network_mode::denied));
    ASSERT_NE(prestarted, nullptr);
    sigset_t during;
    ASSERT_EQ(::sigprocmask(SIG_SETMASK, nullptr, &during), 0);
    EXPECT_EQ(::sigismember(&during, SIGINT), 1);  // forwarded from now on, not acted on
  }
  ASSERT_EQ(::sigprocmask(SIG_SETMASK, nullptr, &after), 0);
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig == 32 || sig == 33) continue;  // glibc's own
    EXPECT_EQ(::sigismember(&before, sig), ::sigismember(&after, sig)) << "signal " << sig;
  }
  EXPECT_TRUE(no_child_left());
}

TEST(Prestart, PlainLaunchNeedsNone) {
  temp_workspace ws;
  auto backend = make_linux_backend();
  auto compiled = backend->compile(policy_for(ws.path, network_mode::denied), {});
  ASSERT_TRUE(compiled) << compiled.failure().message;
  auto outcome = backend->launch_prestarted(compiled.plan().get(), shell(ws.path, "exit 4"), nullptr);
  ASSERT_TRUE(outcome) << outcome.error_value().describe();
  EXPECT_EQ(outcome->exit_code, 4);
  EXPECT_TRUE(no_child_left());
}

}  // namespace
}  // namespace cordon
