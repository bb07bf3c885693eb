// Resource limits at their true level: tree-wide cgroups where this user may
// create them (root here), per-process rlimits (partial) otherwise.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "harness.h"

namespace cordon::test {
namespace {

// Whether this user can create cgroups for runs, as cordon probe says.
bool cgroups_usable() {
  temp_dir dir;
  std::string out = dir.path() + "/probe.json";
  host_command({"sh", "-c", "'" + cordon_cli() + "' probe > " + out});
  std::ifstream in(out);
  auto probe = nlohmann::json::parse(in, nullptr, false);
  return probe.is_object() && probe["best"]["memory"]["level"] == "enforced";
}

std::string limits_policy(const temp_dir& dir, const std::string& process, bool accept_partial) {
  return dir.write("limits.json", std::string(R"({"schema_version": 1, "name": "limits",
    "filesystem": {"readable": ["{workspace}"], "writable": ["{workspace}"]},
    "environment": {"set": {"PATH": "/usr/bin:/bin"}},
    "process": )") + process + (accept_partial ? R"(,
    "enforcement": {"memory": "partial", "process_count": "not_enforced", "cpu": "partial"}})" : "}"));
}

TEST(Limits, MemoryCeilingHoldsAtItsReportedLevel) {
  temp_dir ws, dir;
  auto r = run_cordon({"--policy", limits_policy(dir, R"({"memory_bytes": 67108864})", true)},
                      {"python3", "-c",
                       "import sys\nsmall = bytearray(8 << 20)\nprint('small ok', flush=True)\n"
                       "try:\n  big = bytearray(256 << 20)\n  big[::4096] = b'x' * len(big[::4096])\n  print('big ok')\n"
                       "except MemoryError:\n  print('MemoryError')\n"},
                      ws.path());
  EXPECT_NE(r.out.find("small ok"), std::string::npos) << r.all();
  EXPECT_EQ(r.out.find("big ok"), std::string::npos) << r.all();
  if (cgroups_usable()) {
    EXPECT_EQ(r.report["controls"]["memory"]["level"], "enforced");
    EXPECT_EQ(r.exit_code, 137) << r.all();  // the memory controller kills the process
    EXPECT_EQ(r.report["limits_hit"]["memory"], true);
    EXPECT_GE(r.report["resources"]["peak_memory_bytes"].get<std::uint64_t>(), 8u << 20);
    EXPECT_LE(r.report["resources"]["peak_memory_bytes"].get<std::uint64_t>(), 64u << 20);
  } else {
    EXPECT_EQ(r.report["controls"]["memory"]["level"], "partial");
    EXPECT_EQ(r.report["controls"]["memory"]["mechanism"], "rlimit (RLIMIT_DATA)");
    EXPECT_NE(r.out.find("MemoryError"), std::string::npos) << r.all();
  }
}

// A partial memory limit (an rlimit per process) counts no file: the
// sandbox's own tmpfs mounts are sized to the limit instead, so a command
// cannot hold the host's memory in /tmp or /dev/shm (docs/doors.md).
TEST(Limits, APartialMemoryLimitBoundsTheSandboxTmpfs) {
  temp_dir ws;
  // A cgroup parent that is no cgroup: the rlimit path, for root and a normal user alike.
  auto r = run_cordon({"--memory", "64M", "--accept", "memory=partial", "--cgroup-parent", ws.path()},
                      {"python3", "-c",
                       "import errno\n"
                       "for d in ('/tmp', '/dev/shm'):\n"
                       "  with open(d + '/small', 'wb') as f: f.write(b'x' * (8 << 20))\n"
                       "  try:\n"
                       "    with open(d + '/big', 'wb') as f:\n"
                       "      for i in range(100): f.write(b'x' * (1 << 20))\n"
                       "    print(d, 'big ok')\n"
                       "  except OSError as e:\n"
                       "    print(d, errno.errorcode[e.errno])\n"},
                      ws.path());
  EXPECT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(r.report["controls"]["memory"]["level"], "partial") << r.report["controls"].dump();
  // 8 MiB fit; 100 MiB more do not, in either mount.
  EXPECT_EQ(r.out, "/tmp ENOSPC\n/dev/shm ENOSPC\n") << r.all();
  EXPECT_NE(r.report["controls"]["memory"]["detail"].get<std::string>().find("tmpfs"), std::string::npos)
      << r.report["controls"]["memory"].dump();
}

TEST(Limits, ProcessCeilingRefusesForks) {
  temp_dir ws, dir;
  auto r = run_cordon({"--policy", limits_policy(dir, R"({"max_processes": 16})", true)},
                      {"python3", "-c",
                       // Each child blocks reading a pipe nobody writes until it is killed:
                       // all of them live while the forks go on, however slow the host.
                       "import os\nkids, refused = [], 0\nr, w = os.pipe()\n"
                       "for _ in range(40):\n"
                       "  try:\n    pid = os.fork()\n  except BlockingIOError:\n    refused += 1\n    continue\n"
                       "  if pid == 0:\n    os.read(r, 1)\n    os._exit(0)\n  kids.append(pid)\n"
                       "print('spawned', len(kids), 'refused', refused)\n"
                       "for k in kids: os.kill(k, 9)\n"},
                      ws.path());
  EXPECT_EQ(r.exit_code, 0) << r.all();
  EXPECT_NE(r.out.find("spawned"), std::string::npos) << r.all();
  if (cgroups_usable()) {
    EXPECT_EQ(r.report["controls"]["process_count"]["level"], "enforced");
    EXPECT_EQ(r.report["limits_hit"]["processes"], true);
    // PID 1, python and at most 14 children fit under 16.
    EXPECT_NE(r.out.find("spawned 14 refused 26"), std::string::npos) << r.out;
  } else if (running_as_root()) {
    EXPECT_EQ(r.report["controls"]["process_count"]["level"], "not_enforced");
  } else {
    EXPECT_EQ(r.report["controls"]["process_count"]["level"], "partial");
    EXPECT_NE(r.out.find("refused"), std::string::npos) << r.out;
  }
}

TEST(Limits, CpuTimeOfTheTreeIsCapped) {
  temp_dir ws, dir;
  // Two spinning processes: a tree limit sees their sum, a per-process one each alone.
  auto r = run_cordon({"--policy", limits_policy(dir, R"({"cpu_seconds": 1})", true), "--timeout", "20"},
                      {"sh", "-c", "(while :; do :; done) & while :; do :; done"}, ws.path());
  EXPECT_EQ(r.report["timeout_fired"], false);
  EXPECT_LT(r.wall_seconds, 10.0);
  if (cgroups_usable()) {
    EXPECT_EQ(r.report["controls"]["cpu"]["level"], "enforced");
    EXPECT_EQ(r.exit_code, 137) << r.all();
    EXPECT_EQ(r.report["limits_hit"]["cpu"], true);
    // The kill acts within 0.5 s of CPU past the limit. CPU, not wall time:
    // on a loaded machine two spinners get less than two cores.
    EXPECT_LT(r.report["resources"]["tree_cpu_ms"].get<int>(), 1500) << r.all();
    EXPECT_NE(r.err.find("cordon: cpu_limit:"), std::string::npos) << r.err;
  } else {
    EXPECT_EQ(r.report["controls"]["cpu"]["level"], "partial");
    EXPECT_EQ(r.exit_code, 128 + SIGKILL) << r.all();  // RLIMIT_CPU with soft == hard: SIGKILL at the limit
  }
}

TEST(Limits, RequiringEnforcedWithoutACgroupIsRefusedNamingTheMechanism) {
  temp_dir ws, dir;
  auto r = run_cordon({"--policy", limits_policy(dir, R"({"memory_bytes": 67108864, "max_processes": 64,
      "cpu_seconds": 30})", false)}, {"sh", "-c", "echo ran"}, ws.path());
  if (cgroups_usable()) {
    EXPECT_EQ(r.exit_code, 0) << r.all();
    EXPECT_EQ(r.out, "ran\n");
    for (const char* c : {"memory", "process_count", "cpu"}) EXPECT_EQ(r.report["controls"][c]["level"], "enforced") << c;
  } else {
    EXPECT_EQ(r.exit_code, 125) << r.all();
    EXPECT_EQ(r.out, "");
    EXPECT_NE(r.err.find("cordon: blocker: memory: required enforced, available partial"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("no writable cgroup for uid"), std::string::npos) << r.err;
  }
}

// The cgroup directories left by the given supervisors ("cordon-<pid>-<n>");
// other tests running at the same time have their own pids.
int cordon_cgroups(const std::vector<pid_t>& supervisors) {
  int count = 0;
  std::error_code ec;
  for (const char* root : {"/sys/fs/cgroup/memory", "/sys/fs/cgroup/pids", "/sys/fs/cgroup/cpuacct"}) {
    for (auto it = std::filesystem::recursive_directory_iterator(root, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      std::string name = it->path().filename().string();
      for (pid_t pid : supervisors) {
        if (name.rfind("cordon-" + std::to_string(pid) + "-", 0) == 0) ++count;
      }
    }
  }
  return count;
}

int mount_count() {
  std::ifstream in("/proc/self/mountinfo");
  int n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

TEST(Limits, NothingIsLeftBehindAfter200RunsEndingEveryWay) {
  temp_dir ws, dir;
  std::string policy = limits_policy(dir, R"({"memory_bytes": 268435456, "max_processes": 64, "cpu_seconds": 60})",
                                     true);
  std::vector<pid_t> supervisors;
  const int mounts_before = mount_count();
  const std::string marker = "3" + std::to_string(::getpid()) + ".25";  // a sleep length nobody else uses
  int failures = 0;
  for (int i = 0; i < 200; ++i) {
    std::vector<std::string> args = {cordon_cli(), "run", "--policy", policy};
    switch (i % 4) {
      case 0: args.insert(args.end(), {"--", "sh", "-c", "sleep " + marker + " & exit 0"}); break;        // exit
      case 1: args.insert(args.end(), {"--", "sh", "-c", "sleep " + marker + " & kill -SEGV $$"}); break;  // crash
      case 2: args.insert(args.end(), {"--timeout", "0.05", "--", "sleep", marker}); break;               // timeout
      case 3:  // cordon itself SIGKILLed below, once the command runs
        args.insert(args.end(), {"--", "sh", "-c", "touch started-" + std::to_string(i) + "; exec sleep " + marker});
        break;
    }
    pid_t pid = ::fork();
    if (pid > 0) supervisors.push_back(pid);
    if (pid == 0) {
      if (::chdir(ws.path().c_str()) != 0) ::_exit(250);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      int null = ::open("/dev/null", O_RDWR);
      ::dup2(null, 1);
      ::dup2(null, 2);
      ::execv(argv[0], argv.data());
      ::_exit(251);
    }
    if (i % 4 == 3) {
      std::string started = ws.path() + "/started-" + std::to_string(i);
      auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (!std::filesystem::exists(started) && std::chrono::steady_clock::now() < give_up) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      ::kill(pid, SIGKILL);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    int expected[] = {0, 139, 124, 137};
    if (code != expected[i % 4]) {
      ++failures;
      ADD_FAILURE() << "run " << i << " ended with " << code << ", expected " << expected[i % 4];
    }
  }
  EXPECT_EQ(failures, 0);
  // Janitors of SIGKILLed supervisors finish on their own, shortly.
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < until &&
         (cordon_cgroups(supervisors) > 0 || process_with_marker_alive("sleep " + marker))) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(cordon_cgroups(supervisors), 0);
  EXPECT_FALSE(process_with_marker_alive("sleep " + marker));
  EXPECT_EQ(mount_count(), mounts_before);
}

}  // namespace
}  // namespace cordon::test
