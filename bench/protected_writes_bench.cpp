// The cost of looking at opens for writing in the supervisor (docs/seccomp.md,
// "Writes to protected paths"), side by side in one run. Not a test: it
// prints numbers for docs/benchmarks.md.
//
// Write-heavy workloads run in a git workspace, interleaved by round:
//   untar     unpack a tarball of N small files (and remove them again)
//   checkout  git checkout between two branches that differ in N files
//   compile   make -j1 of a small C project of 40 files (cc -c each, then a link)
//   open-w    5000 opens for writing of one file from Python (the cost per open)
// each four ways:
//   bare      /bin/sh -c WORKLOAD, no cordon
//   plain     under the default profile in a copy of the workspace without
//             a repository (no protected path: nothing is notified)
//   renames   the repository under the default profile with the program the
//             plan would have had before this check (variant bit 7 cleared:
//             only renames and removals are notified)
//   writes    the repository under the default profile as compiled (opens
//             that may write, creat, truncate and openat2 notified too)
// The plan's payload is built once per case and run with
// run_in_this_process; "renames" swaps the seccomp program of the compiled
// plan for its variant without notify_protected_writes (a bench-only edit
// of a plan this process made, never done by the library).
//
// Usage: cordon_protected_writes_bench [FILES] [ROUNDS]   (default 2000 5)
// Prints the median wall time of each workload and case in milliseconds,
// and the notified calls per workload are in the difference.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cordon/cordon.h"
#include "linux/linux_plan.h"
#include "linux/seccomp_programs.h"

namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;

namespace {

int sh(const std::string& dir, const std::string& script) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::chdir(dir.c_str()) != 0) ::_exit(127);
    ::execl("/bin/sh", "sh", "-c", script.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void must(int rc, const std::string& what) {
  if (rc == 0) return;
  std::fprintf(stderr, "setup failed (%d): %s\n", rc, what.c_str());
  std::exit(1);
}

// A workspace: a git repository (or, without, a plain directory) holding
// the tarball, the two branches and the C project.
void make_workspace(const std::string& ws, int files, bool repository) {
  fs::create_directories(ws + "/src");
  const std::string git = "git -c user.name=b -c user.email=b@b -c init.defaultBranch=main ";
  if (repository) must(sh(ws, git + "init -q ."), "git init");
  // The tarball: N files of ~100 bytes in directories of 50.
  fs::create_directories(ws + "/../tarsrc");
  must(sh(ws + "/..", "cd tarsrc && i=0; while [ $i -lt " + std::to_string(files) +
                          " ]; do d=d$((i / 50)); mkdir -p $d; echo \"file $i of the bench tree\" > $d/f$i.txt; "
                          "i=$((i + 1)); done && tar cf ../files.tar ."),
       "tarball");
  fs::copy_file(ws + "/../files.tar", ws + "/files.tar", fs::copy_options::overwrite_existing);
  // The C project: 40 files and a Makefile.
  std::string objects;
  for (int i = 0; i < 40; ++i) {
    std::ofstream(ws + "/src/u" + std::to_string(i) + ".c")
        << "int f" << i << "(int x) { int s = 0; for (int i = 0; i < x; ++i) s += i * " << i << "; return s; }\n";
    objects += " u" + std::to_string(i) + ".o";
  }
  std::ofstream(ws + "/src/main.c") << "int main(void) { return 0; }\n";
  std::ofstream(ws + "/src/Makefile") << "prog: main.o" << objects << "\n\tcc -o $@ $^\n%.o: %.c\n\tcc -O0 -c $<\n";
  if (!repository) return;
  // Two branches that differ in every file of the tree.
  must(sh(ws, "mkdir tree && tar xf files.tar -C tree && " + git + "add -A && " + git + "commit -q -m a && " + git +
                  "checkout -q -b other && for f in tree/*/*.txt; do echo changed >> $f; done && " + git +
                  "commit -q -am b && " + git + "checkout -q main"),
       "branches");
}

const std::map<std::string, std::string> workloads = {
    {"untar", "rm -rf out && mkdir out && tar xf files.tar -C out"},
    // 5000 opens for writing of one existing file (O_WRONLY|O_CREAT|O_TRUNC), nothing else: the cost per open.
    {"open-w", "python3 -c \"for i in range(5000): open('f', 'w').close()\""},
    {"checkout", "git checkout -q other && git checkout -q main"},
    {"compile", "cd src && rm -f *.o prog && make -s -j1 >/dev/null"},
};

// The plan's seccomp program without the write check: the prebuilt variant
// whose program the plan has, with bit 7 cleared.
void drop_write_check(const cordon::sandbox_plan& plan) {
  using namespace cordon::linux_impl;
  auto* payload = const_cast<linux_plan_payload*>(dynamic_cast<const linux_plan_payload*>(plan.payload()));
  if (payload == nullptr) {
    std::fprintf(stderr, "not a linux-namespaces plan\n");
    std::exit(1);
  }
  for (unsigned index = 0; index < seccomp_variant_count; ++index) {
    auto candidate = build_seccomp_program(seccomp_options_for_variant(index));
    if (!candidate || candidate->bpf.size() != payload->seccomp.bpf.size() ||
        !std::equal(candidate->bpf.begin(), candidate->bpf.end(), payload->seccomp.bpf.begin(),
                    [](const sock_filter& a, const sock_filter& b) {
                      return a.code == b.code && a.jt == b.jt && a.jf == b.jf && a.k == b.k;
                    })) {
      continue;
    }
    if ((index & 128U) == 0) {
      std::fprintf(stderr, "the plan has no write check (variant %u)\n", index);
      std::exit(1);
    }
    auto without = build_seccomp_program(seccomp_options_for_variant(index & ~128U));
    payload->seccomp.bpf = without->bpf;
    payload->seccomp.blocked = without->blocked;
    payload->seccomp.protected_writes_checked = false;
    return;
  }
  std::fprintf(stderr, "the plan's program is no prebuilt variant\n");
  std::exit(1);
}

std::shared_ptr<const cordon::sandbox_plan> compile_for(const std::string& ws) {
  auto policy = cordon::builtin_profile(cordon::default_profile_name);
  // The plan refers to its backend, which must outlive it.
  static const auto backend = cordon::make_linux_backend();
  cordon::compile_options options;
  options.workspace = ws;
  auto compiled = backend->compile(*policy, options);
  if (!compiled) {
    std::fprintf(stderr, "compile: %s\n", compiled.failure().describe().c_str());
    std::exit(1);
  }
  return compiled.plan();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int files = argc > 1 ? std::atoi(argv[1]) : 2000;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 5;
  char tmpl[] = "/tmp/cordon-bench-writes.XXXXXX";
  const std::string root = ::mkdtemp(tmpl);
  const std::string repo = root + "/repo/ws", plain = root + "/plain/ws";
  make_workspace(repo, files, true);
  make_workspace(plain, files, false);
  auto with_writes = compile_for(repo);
  auto renames_only = compile_for(repo);
  drop_write_check(*renames_only);
  auto no_repo = compile_for(plain);
  const std::vector<std::string> cases = {"bare", "plain", "renames", "writes"};
  std::map<std::string, std::map<std::string, std::vector<double>>> ms;
  for (int round = 0; round < rounds; ++round) {
    for (const auto& [name, script] : workloads) {
      for (const auto& c : cases) {
        if (name == "checkout" && c == "plain") continue;  // no repository there
        const std::string& ws = c == "plain" ? plain : repo;
        const auto start = clock_type::now();
        int rc = 0;
        if (c == "bare") {
          rc = sh(ws, script);
        } else {
          const auto& plan = c == "plain" ? no_repo : c == "renames" ? renames_only : with_writes;
          auto report = cordon::run_in_this_process(*plan, {{"/bin/sh", "-c", script}, ws, {"PATH=/usr/bin:/bin"}},
                                                    false);
          rc = report.outcome ? report.outcome->exit_code : -1;
        }
        const double elapsed = std::chrono::duration<double, std::milli>(clock_type::now() - start).count();
        if (rc != 0) {
          std::fprintf(stderr, "%s under %s: exit %d\n", name.c_str(), c.c_str(), rc);
          return 1;
        }
        ms[name][c].push_back(elapsed);
      }
    }
  }
  double load = 0;
  if (std::ifstream in("/proc/loadavg"); in) in >> load;
  std::printf("files %d, rounds %d, load average %.1f; median ms\n", files, rounds, load);
  std::printf("%-9s %9s %9s %9s %9s\n", "workload", "bare", "plain", "renames", "writes");
  for (const auto& [name, by_case] : ms) {
    std::printf("%-9s", name.c_str());
    for (const auto& c : cases) {
      auto it = by_case.find(c);
      if (it == by_case.end()) {
        std::printf(" %9s", "-");
      } else {
        std::printf(" %9.1f", median(it->second));
      }
    }
    std::printf("\n");
  }
  fs::remove_all(root);
  return 0;
}
