// Resource escapes: a fork bomb, a memory bomb, a CPU spin, and daemons that
// try to outlive the run. Each limit is checked at the level the report gives.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <random>

#include "escape_support.h"

namespace cordon::test::escape {
namespace {
namespace fs = std::filesystem;

std::uintmax_t size_of(const std::string& path) {
  std::error_code ec;
  auto n = fs::file_size(path, ec);
  return ec ? 0 : n;
}

// The host can still start a process (the run left it usable).
void expect_host_can_fork() {
  EXPECT_EQ(host_command({"true"}), 0);
}

TEST(EscapeResources, ForkBombIsKilledWithItsTreeAtTheTimeout) {
  temp_dir ws;
  install_probe(ws);
  std::random_device rd;
  // A process count nobody else uses marks the bomb's command lines.
  std::string cap = std::to_string(200 + rd() % 99);
  auto r = run_probe(ws, {"fork-bomb", cap}, {"--timeout", "3"});
  EXPECT_EQ(r.exit_code, 124) << r.all();
  EXPECT_EQ(r.out, lines({"fork-bomb capped " + cap})) << r.all();
  EXPECT_EQ(r.report["outcome"], "timed_out");
  EXPECT_LT(r.wall_seconds, 6.0);
  EXPECT_FALSE(process_with_marker_alive("fork-bomb " + cap));
  expect_host_can_fork();
  // Ordinary forking under the same deadline works.
  auto ok = run_probe(ws, {"fork-many", "8"}, {"--timeout", "3"});
  EXPECT_EQ(ok.exit_code, 0) << ok.all();
  EXPECT_EQ(ok.out, lines({"fork-many OK spawned=8"})) << ok.all();
}

TEST(EscapeResources, ForkBombMeetsTheProcessCeiling) {
  temp_dir ws, policy_dir;
  install_probe(ws);
  std::string policy = write_policy(policy_dir, R"({"readable": ["{workspace}"], "writable": ["{workspace}"]})",
                                    R"({"mode": "denied"})", R"({"max_processes": 24})",
                                    R"({"process_count": "not_enforced"})");
  auto r = run_probe(ws, {"fork-many", "64", "+", "clone"}, {"--policy", policy, "--timeout", "30"});
  EXPECT_EQ(r.exit_code, 0) << r.all();
  std::string level = r.report["controls"]["process_count"]["level"];
  if (level == "enforced") {
    // The pids controller counts the whole tree: PID 1, the probe and 22 children.
    EXPECT_EQ(r.out, lines({"fork-many EAGAIN spawned=22", "clone OK"})) << r.all();
    EXPECT_EQ(r.report["limits_hit"]["processes"], true);
  } else if (level == "partial") {
    // RLIMIT_NPROC counts every process of this user on the host, so fewer fit.
    ASSERT_EQ(r.out.rfind("fork-many EAGAIN spawned=", 0), 0u) << r.all();
    EXPECT_LE(std::stoi(r.out.substr(std::string("fork-many EAGAIN spawned=").size())), 22) << r.all();
  } else {
    // Root without a cgroup: the kernel exempts root from RLIMIT_NPROC; the report says so.
    EXPECT_TRUE(running_as_root());
    EXPECT_EQ(level, "not_enforced");
    EXPECT_EQ(r.out, lines({"fork-many OK spawned=64", "clone OK"})) << r.all();
  }
  expect_host_can_fork();
}

TEST(EscapeResources, MemoryBombFailsAtTheCeiling) {
  temp_dir ws, policy_dir;
  install_probe(ws);
  std::string policy = write_policy(policy_dir, R"({"readable": ["{workspace}"], "writable": ["{workspace}"]})",
                                    R"({"mode": "denied"})", R"({"memory_bytes": 134217728})",
                                    R"({"memory": "partial"})");
  auto r = run_probe(ws, {"mem-bomb", "2048"}, {"--policy", policy, "--timeout", "60"});
  std::string level = r.report["controls"]["memory"]["level"];
  if (level == "enforced") {
    // A memory cgroup: the kernel kills the tree at 128 MiB.
    EXPECT_EQ(r.exit_code, 128 + SIGKILL) << r.all();
    EXPECT_EQ(r.out, "") << r.all();
    EXPECT_EQ(r.report["limits_hit"]["memory"], true);
    EXPECT_LE(r.report["resources"]["peak_memory_bytes"].get<std::uint64_t>(), 134217728u);
  } else {
    // RLIMIT_DATA: the allocation itself fails.
    EXPECT_EQ(level, "partial");
    EXPECT_EQ(r.exit_code, 0) << r.all();
    EXPECT_EQ(r.out, lines({"mem-bomb ENOMEM after 64+ MiB"})) << r.all();
  }
  EXPECT_EQ(r.report["timeout_fired"], false);
  // The ordinary allocation under the same policy works.
  auto small = run_probe(ws, {"mem-bomb", "16"}, {"--policy", policy, "--timeout", "60"});
  EXPECT_EQ(small.exit_code, 0) << small.all();
  EXPECT_EQ(small.out, lines({"mem-bomb OK 16 MiB"})) << small.all();
}

TEST(EscapeResources, CpuSpinIsKilledAtTheTimeout) {
  temp_dir ws;
  install_probe(ws);
  auto r = run_probe(ws, {"spin", "600"}, {"--timeout", "1"});
  EXPECT_EQ(r.exit_code, 124) << r.all();
  EXPECT_EQ(r.out, "") << r.all();
  EXPECT_EQ(r.report["outcome"], "timed_out");
  EXPECT_EQ(r.report["exit"]["signal_name"], "SIGKILL");
  EXPECT_GE(r.wall_seconds, 0.9);
  EXPECT_LT(r.wall_seconds, 3.0);
  // A short computation under the same deadline completes.
  auto ok = run_probe(ws, {"spin", "0"}, {"--timeout", "1"});
  EXPECT_EQ(ok.exit_code, 0) << ok.all();
  EXPECT_EQ(ok.out, lines({"spin OK"}));
}

TEST(EscapeResources, CpuSpinMeetsTheCpuCeiling) {
  temp_dir ws, policy_dir;
  install_probe(ws);
  std::string policy = write_policy(policy_dir, R"({"readable": ["{workspace}"], "writable": ["{workspace}"]})",
                                    R"({"mode": "denied"})", R"({"cpu_seconds": 1})", R"({"cpu": "partial"})");
  auto r = run_probe(ws, {"spin", "600"}, {"--policy", policy, "--timeout", "30"});
  // Both mechanisms end the spinner with SIGKILL after about one second of CPU:
  // the supervisor from cgroup accounting, or RLIMIT_CPU with soft == hard.
  EXPECT_EQ(r.exit_code, 128 + SIGKILL) << r.all();
  EXPECT_EQ(r.report["timeout_fired"], false);
  EXPECT_LT(r.wall_seconds, 10.0);
  std::string level = r.report["controls"]["cpu"]["level"];
  if (level == "enforced") {
    EXPECT_EQ(r.report["limits_hit"]["cpu"], true);
  } else {
    EXPECT_EQ(level, "partial");
  }
}

TEST(EscapeResources, DaemonsDoNotSurviveTheRun) {
  temp_dir ws;
  install_probe(ws);
  std::string ticks = ws.path() + "/ticks";
  // The daemon double-forks into its own session, ignores SIGTERM/SIGHUP and
  // writes to the workspace every 50 ms for up to 10 minutes.
  auto r = run_probe(ws, {"daemon", ticks, "600", "+", "sleep", "300", "+", "list-pids"});
  EXPECT_EQ(r.exit_code, 0) << r.all();
  // Inside, the daemon was running beside PID 1 (and had been reparented to it).
  ASSERT_EQ(r.out.substr(0, std::string("daemon OK\nsleep OK\nlist-pids OK 1,").size()),
            "daemon OK\nsleep OK\nlist-pids OK 1,")
      << r.all();
  EXPECT_GT(size_of(ticks), 0u);
  // The writer is the daemon, whose arguments name `ticks`: no process on
  // the host carries them once cordon has returned (the host's /proc, read
  // now; a fixed wait for the file to stop growing would prove less).
  EXPECT_FALSE(process_with_marker_alive(ticks)) << "the daemon outlived the run";
}

TEST(EscapeResources, DaemonsDoNotSurviveATimeout) {
  temp_dir ws;
  install_probe(ws);
  std::string ticks = ws.path() + "/ticks";
  auto r = run_probe(ws, {"daemon", ticks, "600", "+", "sleep", "600000"}, {"--timeout", "1"});
  EXPECT_EQ(r.exit_code, 124) << r.all();
  EXPECT_EQ(r.out, lines({"daemon OK"})) << r.all();
  EXPECT_GT(size_of(ticks), 0u) << "the daemon never wrote";
  EXPECT_FALSE(process_with_marker_alive(ticks)) << "the daemon outlived the timeout";
}

}  // namespace
}  // namespace cordon::test::escape
