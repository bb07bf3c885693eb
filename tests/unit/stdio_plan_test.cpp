// plan_stdio (src/linux/stdio_plan.h): which route each kind of caller
// descriptor gets, and process.allow_pty in the policy model. Classification
// reads this process's descriptors 0-2, so each case runs in a child that
// first puts the descriptors under test there.
#include "linux/stdio_plan.h"

#include <fcntl.h>
#include <pty.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "child_process.h"
#include "cordon/policy_json.h"
#include "cordon/profiles.h"

namespace cordon::linux_impl {
namespace {

using test_support::child_report;
using test_support::run_in_child;

const char* route_name(stdio_route r) {
  switch (r) {
    case stdio_route::inherit: return "inherit";
    case stdio_route::relay: return "relay";
    case stdio_route::dev_null: return "dev_null";
    case stdio_route::terminal: return "terminal";
  }
  return "?";
}

// Puts `fds` on 0-2 (-1: closed), classifies, and checks the routes (and,
// for a refusal, that the message names `refused`).
void expect_routes(const int (&fds)[3], bool allow_pty, const char* const (&routes)[3], const char* refused = nullptr) {
  auto outcome = run_in_child([&](child_report& r) {
    int copies[3];
    for (int i = 0; i < 3; ++i) copies[i] = fds[i] < 0 ? -1 : ::fcntl(fds[i], F_DUPFD_CLOEXEC, 10);
    for (int i = 0; i < 3; ++i) {
      if (copies[i] < 0) {
        ::close(i);
      } else {
        ::dup2(copies[i], i);
      }
    }
    auto plan = plan_stdio(allow_pty);
    if (refused != nullptr) {
      if (plan) {
        r.fail("expected a refusal naming '%s'", refused);
      } else if (plan.error_value().code != error_code::usage_error ||
                 plan.error_value().message.find(refused) == std::string::npos) {
        r.fail("refusal: %s", plan.error_value().describe().c_str());
      }
      return;
    }
    if (!plan) {
      r.fail("refused: %s", plan.error_value().describe().c_str());
      return;
    }
    for (int i = 0; i < 3; ++i) {
      if (std::string(route_name(plan->route[i])) != routes[i]) {
        r.fail("slot %d: %s, expected %s", i, route_name(plan->route[i]), routes[i]);
      }
    }
  });
  EXPECT_EQ(outcome.status, 0) << outcome.output;
}

TEST(StdioPlan, PipesAndSocketsPassFilesAreRelayedDevNullIsReplaced) {
  int p[2], s[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s), 0);
  int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  int file = ::open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  int zero = ::open("/dev/zero", O_RDONLY | O_CLOEXEC);
  expect_routes({p[0], p[1], s[0]}, true, {"inherit", "inherit", "inherit"});
  expect_routes({null, file, zero}, true, {"dev_null", "relay", "relay"});
  expect_routes({-1, p[1], null}, true, {"inherit", "inherit", "dev_null"});
  for (int fd : {p[0], p[1], s[0], s[1], null, file, zero}) ::close(fd);
}

TEST(StdioPlan, NamedFifoIsRelayedNotPassed) {
  char dir[] = "/tmp/cordon-stdio-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  std::string fifo = std::string(dir) + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  int fd = ::open(fifo.c_str(), O_RDWR | O_CLOEXEC);  // O_RDWR: no wait for a peer
  ASSERT_GE(fd, 0);
  expect_routes({fd, fd, fd}, true, {"relay", "relay", "relay"});
  ::close(fd);
  ::unlink(fifo.c_str());
  ::rmdir(dir);
}

TEST(StdioPlan, DirectoryAndOPathAreRefused) {
  int dir = ::open("/etc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  int path = ::open("/etc/hostname", O_PATH | O_CLOEXEC);
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  expect_routes({dir, p[1], p[1]}, true, {"", "", ""}, "standard input (descriptor 0) is a directory");
  expect_routes({p[0], p[1], path}, true, {"", "", ""}, "standard error (descriptor 2) is an O_PATH descriptor");
  for (int fd : {dir, path, p[0], p[1]}) ::close(fd);
}

TEST(StdioPlan, TerminalOnStdinIsAPtyOnlyWhenAllowed) {
  int master = -1, slave = -1;
  if (::openpty(&master, &slave, nullptr, nullptr, nullptr) != 0) GTEST_SKIP() << "no pseudo-terminal available";
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  expect_routes({slave, slave, p[1]}, true, {"terminal", "terminal", "inherit"});
  expect_routes({slave, slave, slave}, false, {"relay", "relay", "relay"});
  // The pty is for an interactive run: stdin and stdout on the terminal.
  expect_routes({p[0], slave, slave}, true, {"inherit", "relay", "relay"});
  expect_routes({slave, p[1], slave}, true, {"relay", "inherit", "relay"});
  for (int fd : {master, slave, p[0], p[1]}) ::close(fd);
}

TEST(StdioPlan, AllowPtyIsAPolicyFieldTheProfilesDecide) {
  auto parsed = sandbox_policy_from_json(R"({"schema_version": 1, "process": {"allow_pty": true}})");
  ASSERT_TRUE(parsed) << parsed.error_value().describe();
  EXPECT_TRUE(parsed->process.allow_pty);
  auto wrong = sandbox_policy_from_json(R"({"schema_version": 1, "process": {"allow_pty": "yes"}})");
  ASSERT_FALSE(wrong);
  EXPECT_EQ(wrong.error_value().location, "/process/allow_pty");
  auto absent = sandbox_policy_from_json(R"({"schema_version": 1})");
  ASSERT_TRUE(absent);
  EXPECT_FALSE(absent->process.allow_pty) << "a pty is refused unless the policy allows it";
  auto round = sandbox_policy_from_json(sandbox_policy_to_json(*parsed));
  ASSERT_TRUE(round);
  EXPECT_EQ(*round, *parsed);
  for (const auto& [name, allowed] : {std::pair<const char*, bool>{"workspace-write", true}, {"offline", true},
                                      {"read-only", false}}) {
    auto profile = builtin_profile(name);
    ASSERT_TRUE(profile) << name;
    EXPECT_EQ(profile->process.allow_pty, allowed) << name;
  }
}

}  // namespace
}  // namespace cordon::linux_impl
