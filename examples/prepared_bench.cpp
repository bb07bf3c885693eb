// prepared_bench: start-to-exit of /bin/true from a prepared sandbox
// (cordon/prepared.h) against bare fork+exec and a cold start_run(), in one
// interleaved run, medians and ratios first (docs/prepared.md).
//   cordon_prepared_bench [RUNS] [PROFILE]   (defaults: 30, workspace-write)
// Each round runs bare, prepared and cold once, in that order; the pool keeps
// two sandboxes ready and is waited for before each prepared start, so the
// figure is the start-to-exit a host sees when it keeps its pool warm.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "cordon/cordon.h"
#include "cordon/prepared.h"

extern char** environ;

namespace {

using clock_type = std::chrono::steady_clock;

double ms_since(clock_type::time_point start) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

double bare_true() {
  auto start = clock_type::now();
  pid_t pid = -1;
  char* argv[] = {const_cast<char*>("/bin/true"), nullptr};
  if (::posix_spawn(&pid, "/bin/true", nullptr, nullptr, argv, environ) != 0) return -1;
  int status = 0;
  ::waitpid(pid, &status, 0);
  return ms_since(start);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace cordon;
  const int runs = argc > 1 ? std::atoi(argv[1]) : 30;
  const char* profile = argc > 2 ? argv[2] : "workspace-write";
  auto backend = make_host_backend();
  auto policy = builtin_profile(profile);
  if (!policy) {
    std::fprintf(stderr, "no profile %s\n", profile);
    return 2;
  }
  compile_options options;
  options.workspace = std::filesystem::current_path().string();
  auto compiled = backend->compile(*policy, options);
  if (!compiled) {
    std::fprintf(stderr, "compile: %s\n", compiled.failure().describe().c_str());
    return 2;
  }
  auto plan = compiled.plan();
  pool_options pool_settings;
  pool_settings.size = 2;
  prepared_pool pool(plan, pool_settings);
  run_request request;
  request.launch.argv = {"/bin/true"};
  request.stdin_spec = stdio_spec::pipe();  // closed at once: EOF
  std::vector<double> bare, prepared, single, cold;
  int failures = 0;
  // Start-to-exit of one run started by `start` (-1, and a failure, when it
  // does not start or does not exit 0 as `check` wants).
  auto timed = [&](auto&& start, auto&& check) {
    auto begin = clock_type::now();
    auto handle = start();
    if (!handle) {
      ++failures;
      std::fprintf(stderr, "start: %s\n", handle.error_value().describe().c_str());
      return -1.0;
    }
    ::close(handle->take_stdin());
    run_report report = handle->wait();
    const double ms = ms_since(begin);
    if (exit_code_for(report) != 0 || !check(report)) ++failures;
    return ms;
  };
  auto pool_full = [&] {
    while (pool.ready_count() < pool_settings.size) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  };
  auto was_prepared = [](const run_report& r) { return r.outcome && r.outcome->prepared_at.has_value(); };
  for (int i = 0; i < runs + 3; ++i) {  // three warm-up rounds
    double b = bare_true();
    pool_full();
    double p = timed([&] { return pool.start(request); }, was_prepared);
    // One sandbox prepared alone, nothing refilling beside the command.
    double one = -1;
    auto sandbox = prepared_sandbox::prepare(*plan);
    auto became = sandbox ? sandbox->wait_ready(clock_type::now() + std::chrono::seconds(30)) : result<bool>(false);
    if (became && *became) {
      pool_full();
      one = timed([&] { return sandbox->start(*plan, request); }, was_prepared);
    } else {
      ++failures;
    }
    double c = timed([&] { return start_run(*plan, request); }, [](const run_report&) { return true; });
    if (i < 3) continue;
    bare.push_back(b);
    prepared.push_back(p);
    single.push_back(one);
    cold.push_back(c);
  }
  const double mb = median(bare), mp = median(prepared), ms = median(single), mc = median(cold);
  double load[3] = {0, 0, 0};
  if (FILE* f = std::fopen("/proc/loadavg", "r")) {
    if (std::fscanf(f, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3) load[0] = -1;
    std::fclose(f);
  }
  std::printf("prepared/bare %.2fx   prepared alone/bare %.2fx   cold start_run/bare %.2fx   prepared/cold %.2fx\n",
              mp / mb, ms / mb, mc / mb, mp / mc);
  std::printf("medians of %d interleaved rounds (profile %s): bare fork+exec %.3f ms, prepared (pool) %.3f ms, "
              "prepared alone %.3f ms, cold start_run %.3f ms\n",
              runs, profile, mb, mp, ms, mc);
  std::printf("load average %.2f %.2f %.2f on %u cores; %d failed runs\n", load[0], load[1], load[2],
              std::thread::hardware_concurrency(), failures);
  return failures == 0 ? 0 : 1;
}
