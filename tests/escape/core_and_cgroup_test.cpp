// Core dumps and the cgroup namespace (docs/linux-backend.md, "Core dumps"
// and "The cgroup namespace"). A core file is a copy of the process's memory
// written where the command chose; the sandbox's cgroup namespace must be
// rooted at the run's own cgroup, not the caller's.
#include <sys/resource.h>

#include <filesystem>
#include <sstream>

#include "escape_support.h"

namespace cordon::test::escape {
namespace {
namespace fs = std::filesystem;

bool has_core_file(const std::string& dir) {
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().filename().string().rfind("core", 0) == 0) return true;
  }
  return false;
}

const char* kCrash = "ulimit -c; ulimit -Hc; (ulimit -c unlimited) 2>/dev/null && echo raised || echo refused; "
                     "sh -c 'ulimit -c unlimited 2>/dev/null; kill -SEGV $$'; echo crashed=$?";

// Default: RLIMIT_CORE is 0/0, the command cannot raise it, and a crash
// leaves no core file in the writable workspace. With process.core_dumps the
// host's limits are left as they are: raising the soft limit works.
TEST(EscapeCoreDumps, OffByDefaultOnWhenThePolicySaysSo) {
  temp_dir ws, policy_dir;
  auto r = run_sh(ws.path(), kCrash);
  EXPECT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(r.out, "0\n0\nrefused\ncrashed=139\n") << r.all();
  EXPECT_FALSE(has_core_file(ws.path()));

  std::string policy = write_policy(policy_dir, R"({"readable": ["{workspace}"], "writable": ["{workspace}"]})",
                                    R"({"mode": "denied"})", R"({"core_dumps": true})");
  r = run_cordon({"--policy", policy}, {"sh", "-c", "ulimit -Hc; (ulimit -c unlimited) && echo raised"}, ws.path());
  EXPECT_EQ(r.exit_code, 0) << r.all();
  struct rlimit host {};
  ASSERT_EQ(::getrlimit(RLIMIT_CORE, &host), 0);
  std::string hard = host.rlim_max == RLIM_INFINITY ? "unlimited" : std::to_string(host.rlim_max / 1024);
  if (host.rlim_max == 0) GTEST_SKIP() << "this host's hard RLIMIT_CORE is 0: nothing to allow";
  EXPECT_EQ(r.out, hard + "\nraised\n") << r.all();
}

// With a tree-wide limit the run has a cgroup of its own; inside, the cgroup
// namespace is rooted there: every hierarchy shows "/", not the path from the
// caller's cgroup (which would show the host's tree above and beside it).
TEST(EscapeCgroupNamespace, RootedAtTheRunsOwnCgroup) {
  temp_dir ws;
  auto r = run_sh(ws.path(), "cat /proc/self/cgroup", {"--memory", "512M", "--accept", "memory=partial"});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  ASSERT_FALSE(r.out.empty());
  std::istringstream lines_in(r.out);
  std::string line;
  while (std::getline(lines_in, line)) {
    EXPECT_EQ(line.substr(line.rfind(':')), ":/") << "cgroup path seen inside: " << line << "\n" << r.out;
  }
  // The limit itself still holds at the level the report gives.
  std::string level = r.report["controls"]["memory"]["level"];
  if (running_as_root()) {
    EXPECT_EQ(level, "enforced") << r.report.dump();
  }
}

}  // namespace
}  // namespace cordon::test::escape
