// A pooled run checked by the pool's process from its inotify watch sets
// (cordon/prepared.h, start(request, compiled_now); docs/deferred-execution.md,
// "The pool's watch sets"): what a command does in the workspace is found
// as the cold scan finds it, the report says how the listings were taken,
// and a queue the kernel overflowed is the full walk, named.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "cordon/cordon.h"
#include "cordon/prepared.h"
#include "fixture.h"

namespace cordon {
namespace {

namespace fs = std::filesystem;

class PoolScan : public prepared_fixture {
 protected:
  void SetUp() override {
#if !defined(__linux__)
    GTEST_SKIP() << "a pool's watch sets are Linux's (inotify); elsewhere the helper checks every run";
#endif
    prepared_fixture::SetUp();
    if (IsSkipped()) return;
    fs::create_directories(workspace_ / "a/.git/hooks");
    fs::create_directories(workspace_ / "a/src");
    fs::create_directories(workspace_ / "d");
    std::ofstream(workspace_ / "a/.git/config") << "[core]\n\tbare = false\n";
    std::ofstream(workspace_ / "a/.git/HEAD") << "ref: refs/heads/main\n";
    plan_ = compile_profile("workspace-write");
    ASSERT_TRUE(plan_);
    pool_options options;
    options.size = 1;
    options.refill_after = std::chrono::milliseconds(0);
    pool_ = std::make_unique<prepared_pool>(plan_, options);
  }
  void TearDown() override {
    pool_.reset();
    prepared_fixture::TearDown();
  }

  // `script` run in the workspace from the pool, with a plan compiled for it
  // now (as the governance runtime does): the report, parsed.
  nlohmann::json pooled(const std::string& script) {
    auto now = compile_profile("workspace-write");
    EXPECT_TRUE(now && plan_fingerprint(*now) == plan_fingerprint(*plan_));
    run_request request;
    request.launch.argv = {"/bin/sh", "-c", script};
    request.launch.working_directory = workspace_.string();
    auto started = pool_->start(request, now);
    EXPECT_TRUE(started) << started.error_value().describe();
    if (!started) return {};
    run_report report = started->wait();
    EXPECT_TRUE(report.outcome.has_value());
    return nlohmann::json::parse(report.json);
  }

  static bool found(const nlohmann::json& report, const std::string& kind, const std::string& path,
                    const std::string& key = "") {
    for (const auto& f : report["deferred_execution"]["findings"]) {
      if (f["kind"] == kind && f["path"] == path && f.value("key", std::string()) == key) return true;
    }
    return false;
  }

  std::string in_workspace(const std::string& relative) const { return (workspace_ / relative).string(); }

  std::shared_ptr<const sandbox_plan> plan_;
  std::unique_ptr<prepared_pool> pool_;
};

TEST_F(PoolScan, NothingChangedIsCheckedFromTheWatchSets) {
  const auto report = pooled("true");
  EXPECT_EQ(report["deferred_execution"]["scan"]["listings"], "watch") << report.dump();
  EXPECT_EQ(report["deferred_execution"]["findings"].size(), 0u) << report.dump();
  EXPECT_EQ(report["deferred_execution"]["scan"]["complete"], true);
  // A second call: the repositories found again where the last scan found them.
  const auto again = pooled("true");
  EXPECT_EQ(again["deferred_execution"]["scan"]["listings"], "watch");
  EXPECT_EQ(again["deferred_execution"]["findings"].size(), 0u) << again.dump();
}

TEST_F(PoolScan, ANestedRepositoryWithAHookIsFound) {
  const auto report = pooled(
      "mkdir -p d/n/.git/hooks && printf '[core]\\n' > d/n/.git/config && "
      "printf '#!/bin/sh\\n' > d/n/.git/hooks/post-checkout");
  EXPECT_EQ(report["deferred_execution"]["scan"]["listings"], "watch");
  EXPECT_TRUE(found(report, "repository_created", in_workspace("d/n/.git"))) << report.dump();
  EXPECT_TRUE(found(report, "hook", in_workspace("d/n/.git/hooks/post-checkout"))) << report.dump();
  // Checked once (by the pool's process; the helper left it): one violation per finding.
  for (const auto& v : report["violations"]) {
    if (v["kind"] == "repository_created") {
      EXPECT_EQ(v["count"], 1) << report["violations"].dump();
    }
  }
  EXPECT_EQ(report["warnings"].dump().find("deferred-execution finding(s)"),
            report["warnings"].dump().rfind("deferred-execution finding(s)"));
}

// The config of a repository the command made, written through a shared
// mapping (no inotify event while it lives): its key is read and found.
TEST_F(PoolScan, AConfigWrittenThroughMmapIsFound) {
  const auto report = pooled(
      "mkdir -p d/m/.git && printf '%64s\\n' '' > d/m/.git/config && python3 -c \""
      "import mmap, os\n"
      "fd = os.open('d/m/.git/config', os.O_RDWR)\n"
      "m = mmap.mmap(fd, 64)\n"
      "m[:30] = b'[core]\\n\\tfsmonitor = /bin/evil\\n'.ljust(30)\n"
      "m.flush()\n\"");
  EXPECT_EQ(report["deferred_execution"]["scan"]["listings"], "watch");
  EXPECT_TRUE(found(report, "repository_created", in_workspace("d/m/.git"))) << report.dump();
  EXPECT_TRUE(found(report, "executable_config", in_workspace("d/m/.git/config"), "core.fsmonitor"))
      << report.dump();
}

TEST_F(PoolScan, ADirectoryHoldingGitRenamedIntoPlaceIsFound) {
  const auto report = pooled("mkdir -p stage/y/deeper/.git/hooks && : > stage/y/deeper/.git/config && mv stage/y d/y");
  EXPECT_EQ(report["deferred_execution"]["scan"]["listings"], "watch");
  EXPECT_TRUE(found(report, "repository_created", in_workspace("d/y/deeper/.git"))) << report.dump();
}

TEST_F(PoolScan, ADeepNewSubtreeIsFound) {
  std::string deep = "d";
  for (int i = 0; i < 40; ++i) deep += "/l" + std::to_string(i);
  const auto report = pooled("mkdir -p " + deep + "/.git/hooks && : > " + deep + "/.git/config");
  EXPECT_EQ(report["deferred_execution"]["scan"]["listings"], "watch");
  EXPECT_TRUE(found(report, "repository_created", in_workspace(deep + "/.git"))) << report.dump();
}

// More events than the kernel queues: the check is the full walk, the
// report says why, and the repository made among the events is found; the
// refill then opens the set again.
TEST_F(PoolScan, AnOverflowedQueueIsTheFullWalkAndSaysSo) {
  std::size_t queued = 16384;
  std::ifstream("/proc/sys/fs/inotify/max_queued_events") >> queued;
  const auto report = pooled("cd d && seq -f f%g 1 " + std::to_string(queued + 100) +
                             " | xargs touch && mkdir -p late/.git/hooks && : > late/.git/config");
  // The walk, named; or, when the refill's repair read the overflow first
  // and opened a new set, that set's listings: found either way.
  const std::string how = report["deferred_execution"]["scan"]["listings"];
  EXPECT_TRUE(how == "walk: the kernel dropped events (IN_Q_OVERFLOW)" || how == "watch") << how;
  EXPECT_TRUE(found(report, "repository_created", in_workspace("d/late/.git"))) << report.dump();
  // The refill after the next call opens the set again before it prepares
  // (the doubt was read by then): the call after it is checked from a set.
  // (The repository goes first: with it, the plan is no longer the pool's.)
  fs::remove_all(workspace_ / "d/late");
  pooled("true");
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (pool_->ready_count() < 1 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const auto next = pooled("mkdir -p d/after/.git && : > d/after/.git/config");
  EXPECT_EQ(next["deferred_execution"]["scan"]["listings"], "watch") << next["deferred_execution"]["scan"].dump();
  EXPECT_TRUE(found(next, "repository_created", in_workspace("d/after/.git"))) << next.dump();
}

// `git init` on the host between two pooled runs: the plan compiled for the
// next request protects the new repository (its fingerprint is no longer
// the pool's, so it runs cold), and a write to its config there is EROFS.
TEST_F(PoolScan, ARepositoryMadeOnTheHostBetweenRunsIsProtectedInTheNextPlan) {
  EXPECT_EQ(pooled("true")["deferred_execution"]["scan"]["listings"], "watch");
  fs::create_directories(workspace_ / "d/h/.git/hooks");
  std::ofstream(workspace_ / "d/h/.git/config") << "[core]\n";
  auto next = compile_profile("workspace-write");
  ASSERT_TRUE(next);
  EXPECT_NE(plan_fingerprint(*next), plan_fingerprint(*plan_));
  run_request request;
  request.launch.argv = {"/bin/sh", "-c", "{ printf x >> d/h/.git/config; } 2>&1; printf y > a/src/ok && echo wrote"};
  request.launch.working_directory = workspace_.string();
  request.stdout_spec = stdio_spec::pipe();
  auto started = start_run(*next, request);
  ASSERT_TRUE(started) << started.error_value().describe();
  std::string out;
  char buffer[4096];
  for (ssize_t n; (n = ::read(started->stdout_fd(), buffer, sizeof buffer)) > 0;) out.append(buffer, n);
  started->wait();
  EXPECT_NE(out.find("Read-only file system"), std::string::npos) << out;
  EXPECT_NE(out.find("wrote"), std::string::npos) << out;  // the allowed write works
}

}  // namespace
}  // namespace cordon
