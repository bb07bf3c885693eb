// Policy compile time alone (no launch), with Google Benchmark.
//
//   BM_Compile/paths:N        a policy of N filesystem paths (1 writable workspace, and of the rest
//                             3/5 readable directories outside it, 1/5 protected and 1/5 denied
//                             files inside it), compiled by the Linux backend: validation, token
//                             resolution, host facts, the repository scan of the workspace, the
//                             mount table (every path resolved on the host), the seccomp program,
//                             the Landlock rules and the contract. The workspace holds only the
//                             protected and denied files.
//   BM_CompileProfile         the built-in default profile (workspace-write) on an empty workspace:
//                             what `cordon run` compiles before every launch.
//   BM_ParseProfile           the built-in profile's JSON into a sandbox_policy.
//   BM_Validate/paths:N       validation and normalization alone.
//   BM_SeccompBuild           the seccomp program alone (libseccomp rules, exported as BPF).
//   BM_RepositoryScan/files:N the scan of a writable root for repositories (compile runs it on
//                             every writable root, and the launch again after the run), on a git
//                             work tree of N files in directories of 20.
//
// The paths live in a temporary tree made once per process and removed at exit.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "cordon/cordon.h"
#include "cordon/linux_backend.h"
#include "cordon/validation.h"
#include "linux/paths.h"
#include "posix/vcs_scan.h"
#include "linux/seccomp_filter.h"

namespace fs = std::filesystem;

namespace {

constexpr int kLargest = 10000;  // issue 21: compile at 10, 1,000 and 10,000 paths

constexpr int kScanFiles = 2000;

struct bench_tree {
  fs::path base, home, empty_workspace, readable, repository;

  bench_tree() {
    std::string pattern = (fs::temp_directory_path() / "cordon-compile-bench.XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      std::perror("mkdtemp");
      std::exit(1);
    }
    base = pattern;
    home = base / "home";
    empty_workspace = base / "empty";
    readable = base / "readable";
    repository = base / "repository";
    fs::create_directories(home);
    fs::create_directories(empty_workspace);
    fs::create_directories(readable);
    for (int i = 0; i < kLargest; ++i) fs::create_directory(readable / name("r", i));
    for (int n : {10, 1000, kLargest}) {
      fs::path ws = workspace(n);
      fs::create_directories(ws);
      for (int i = 0; i < n / 5; ++i) {
        std::ofstream(ws / name("p", i)) << "protected\n";
        std::ofstream(ws / name("d", i)) << "denied\n";
      }
    }
    // A work tree with .git/hooks and .git/config, and kScanFiles files in directories of 20.
    fs::create_directories(repository / ".git" / "hooks");
    std::ofstream(repository / ".git" / "config") << "[core]\n";
    std::ofstream(repository / ".gitmodules") << "";
    for (int i = 0; i < kScanFiles; ++i) {
      fs::path dir = repository / "src" / name("d", i / 20);
      if (i % 20 == 0) fs::create_directories(dir);
      std::ofstream(dir / name("f", i)) << "x\n";
    }
  }
  ~bench_tree() {
    std::error_code ignored;
    fs::remove_all(base, ignored);
  }
  bench_tree(const bench_tree&) = delete;
  bench_tree& operator=(const bench_tree&) = delete;

  static std::string name(const char* prefix, int i) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%s%04d", prefix, i);
    return buffer;
  }

  fs::path workspace(int n) const { return base / ("workspace-" + std::to_string(n)); }

  cordon::compile_options options(const fs::path& ws) const {
    cordon::compile_options o;
    o.workspace = ws.string();
    o.home = home.string();
    return o;
  }

  // N paths in all: the workspace (writable), then N/5 protected and N/5 denied files inside
  // it, and readable directories outside it for the rest.
  cordon::sandbox_policy policy_with_paths(int n) const {
    cordon::sandbox_policy p;
    p.name = "bench-" + std::to_string(n);
    p.filesystem.read = cordon::read_mode::restricted;
    p.filesystem.include_platform_defaults = true;
    p.filesystem.protect_vcs_metadata = true;
    p.filesystem.writable = {std::string(cordon::token_workspace), std::string(cordon::token_run_tmp)};
    int protect = n / 5, deny = n / 5;
    int read = n - 1 - protect - deny;
    for (int i = 0; i < read; ++i) p.filesystem.readable.push_back((readable / name("r", i)).string());
    for (int i = 0; i < protect; ++i) {
      p.filesystem.protected_read_only.push_back(std::string(cordon::token_workspace) + "/" + name("p", i));
    }
    for (int i = 0; i < deny; ++i) {
      p.filesystem.denied.push_back(std::string(cordon::token_workspace) + "/" + name("d", i));
    }
    p.environment.set = {{"PATH", "/usr/bin:/bin"}, {"HOME", "/tmp"}};
    return p;
  }
};

const bench_tree& tree() {
  static const bench_tree instance;
  return instance;
}

void compile_loop(benchmark::State& state, const cordon::sandbox_policy& policy, const fs::path& ws) {
  auto backend = cordon::make_linux_backend();
  auto options = tree().options(ws);
  auto first = backend->compile(policy, options);
  if (!first) {
    std::string why = first.failure().message;
    for (const auto& b : first.failure().blockers) why += "; " + b.subject_name() + ": " + b.reason;
    for (const auto& e : first.failure().errors) why += "; " + e.location + ": " + e.reason;
    state.SkipWithError(why.c_str());
    return;
  }
  for (auto _ : state) {
    auto compiled = backend->compile(policy, options);
    benchmark::DoNotOptimize(compiled);
  }
}

void BM_Compile(benchmark::State& state) {
  int n = static_cast<int>(state.range(0));
  compile_loop(state, tree().policy_with_paths(n), tree().workspace(n));
}
BENCHMARK(BM_Compile)->ArgName("paths")->Arg(10)->Arg(1000)->Arg(kLargest)->Unit(benchmark::kMicrosecond);

void BM_CompileProfile(benchmark::State& state) {
  auto policy = cordon::builtin_profile(cordon::default_profile_name);
  if (!policy) {
    state.SkipWithError(policy.error_value().message.c_str());
    return;
  }
  compile_loop(state, *policy, tree().empty_workspace);
}
BENCHMARK(BM_CompileProfile)->Unit(benchmark::kMicrosecond);

void BM_ParseProfile(benchmark::State& state) {
  for (auto _ : state) {
    auto policy = cordon::builtin_profile(cordon::default_profile_name);
    benchmark::DoNotOptimize(policy);
  }
}
BENCHMARK(BM_ParseProfile)->Unit(benchmark::kMicrosecond);

void BM_Validate(benchmark::State& state) {
  auto policy = tree().policy_with_paths(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    auto validated = cordon::validate_sandbox_policy(policy);
    benchmark::DoNotOptimize(validated);
  }
}
BENCHMARK(BM_Validate)->ArgName("paths")->Arg(10)->Arg(1000)->Arg(kLargest)->Unit(benchmark::kMicrosecond);

void BM_SeccompBuild(benchmark::State& state) {
  cordon::linux_impl::seccomp_options options;
  options.deny_non_unix_sockets = true;
  options.deny_setuid_bits = ::getuid() == 0;
  for (auto _ : state) {
    auto program = cordon::linux_impl::build_seccomp_program(options);
    if (!program) {
      state.SkipWithError(program.error_value().message.c_str());
      return;
    }
    benchmark::DoNotOptimize(program);
  }
}
BENCHMARK(BM_SeccompBuild)->Unit(benchmark::kMicrosecond);

void BM_RepositoryScan(benchmark::State& state) {
  std::string root = tree().repository.string();
  for (auto _ : state) {
    auto scan = cordon::vcs::scan_vcs_metadata(root, "");
    benchmark::DoNotOptimize(scan);
  }
}
BENCHMARK(BM_RepositoryScan)->ArgName("files")->Arg(kScanFiles)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
