// cordon_spawn_many: start a command TOTAL times, at most JOBS at a time, wait for all,
// and count the runs that did not exit 0. Used for "50 concurrent launches" (-j 50 -n 50)
// and for the stress check (-j 50 -n 500).
//
//   cordon_spawn_many [-j JOBS] [-n TOTAL] [--summary] -- CMD [ARGS...]
//
// Each run's stdout goes to /dev/null; stderr is inherited. With --summary, one JSON line on
// stdout: {"total":N,"failed":F,"exit_codes":{"0":N,...},"latency_ms":{"median":..,"p95":..,"max":..}}.
// Exit status: 0 when every run exited 0, 1 otherwise, 2 on usage errors.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

extern char** environ;

namespace {

double now_ms() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

int usage() {
  std::fprintf(stderr, "usage: cordon_spawn_many [-j JOBS] [-n TOTAL] [--summary] -- CMD [ARGS...]\n");
  return 2;
}

bool parse_count(const char* text, long& out) {
  char* end = nullptr;
  errno = 0;
  out = std::strtol(text, &end, 10);
  return errno == 0 && end != text && *end == '\0' && out > 0 && out <= 1000000;
}

}  // namespace

int main(int argc, char** argv) {
  long jobs = 50, total = 50;
  bool summary = false;
  int i = 1;
  for (; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg == "--summary") {
      summary = true;
    } else if ((arg == "-j" || arg == "-n") && i + 1 < argc) {
      if (!parse_count(argv[++i], arg == "-j" ? jobs : total)) return usage();
    } else {
      return usage();
    }
  }
  if (i >= argc) return usage();
  char** command = argv + i;

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);

  std::map<pid_t, double> running;
  std::map<int, long> exit_codes;  // 128+N for signal N, -1 for a spawn failure
  std::vector<double> latency;
  long started = 0, failed = 0;
  while (started < total || !running.empty()) {
    while (started < total && static_cast<long>(running.size()) < jobs) {
      pid_t pid = 0;
      double t = now_ms();
      int err = ::posix_spawnp(&pid, command[0], &actions, nullptr, command, environ);
      ++started;
      if (err != 0) {
        std::fprintf(stderr, "cordon_spawn_many: %s: %s\n", command[0], std::strerror(err));
        ++failed;
        ++exit_codes[-1];
        continue;
      }
      running[pid] = t;
    }
    if (running.empty()) continue;
    int status = 0;
    pid_t pid = ::waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      std::perror("cordon_spawn_many: waitpid");
      return 1;
    }
    auto it = running.find(pid);
    if (it == running.end()) continue;
    latency.push_back(now_ms() - it->second);
    running.erase(it);
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    ++exit_codes[code];
    if (code != 0) ++failed;
  }
  posix_spawn_file_actions_destroy(&actions);

  if (summary) {
    std::sort(latency.begin(), latency.end());
    auto at = [&](double q) {
      if (latency.empty()) return 0.0;
      auto index = static_cast<std::size_t>(q * static_cast<double>(latency.size() - 1) + 0.5);
      return latency[std::min(index, latency.size() - 1)];
    };
    std::printf("{\"total\":%ld,\"failed\":%ld,\"exit_codes\":{", total, failed);
    bool first = true;
    for (const auto& [code, count] : exit_codes) {
      std::printf("%s\"%d\":%ld", first ? "" : ",", code, count);
      first = false;
    }
    std::printf("},\"latency_ms\":{\"median\":%.3f,\"p95\":%.3f,\"max\":%.3f}}\n", at(0.5), at(0.95), at(1.0));
  }
  return failed == 0 ? 0 : 1;
}
