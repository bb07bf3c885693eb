// The repository scan from a watch set's listings (linux/watched_scan.h):
// what a command does under the root is found exactly as the cold scan
// (every directory read) finds it, and a set in doubt gives the full walk,
// named, never a shorter scan.
#include "linux/watched_scan.h"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <tuple>

#include "posix/unique_fd.h"

namespace cordon::linux_impl {
namespace {

namespace fs = std::filesystem;

// A workspace with one repository (config, a hook directory) and a few directories.
struct workspace {
  std::string root;
  workspace() {
    char tmpl[] = "/tmp/cordon-watchedscan-XXXXXX";
    root = fs::canonical(::mkdtemp(tmpl)).string();
    fs::create_directories(ws() + "/a/.git/hooks");
    fs::create_directories(ws() + "/a/src/lib");
    fs::create_directories(ws() + "/d/e");
    std::ofstream(ws() + "/a/.git/config") << "[core]\n\tbare = false\n";
    std::ofstream(ws() + "/a/.git/HEAD") << "ref: refs/heads/main\n";
  }
  ~workspace() { fs::remove_all(root); }
  std::string ws() const { return root + "/ws"; }
};

using finding_key = std::tuple<std::string, std::string, std::string>;

std::set<finding_key> keys_of(const deferred_execution_evidence& e) {
  std::set<finding_key> out;
  for (const auto& f : e.findings) out.insert({f.kind, f.path, f.key});
  return out;
}

// The same scan two ways: the launch scan taken from the set and cold, the
// change made, then the post-run check from the set and cold. Both must
// name the same findings, and the set must have vouched (`how` "watch").
struct both_ways {
  workspace w;
  std::optional<watched_root> set;
  vcs::vcs_scan from_set, cold;
  listings_taken how;

  both_ways() {
    auto opened = directory_watch::open(w.ws(), vcs::max_directories);
    if (opened) set.emplace(watched_root{std::move(*opened), {}, false, {}});
    if (set) from_set = watched_scan(*set, "", "", how);
    cold = vcs::scan_vcs_metadata(w.ws(), "");
  }

  std::set<finding_key> check(const std::string& expect_how = "watch") {
    deferred_execution_evidence watched, walked;
    watched_changes_since(*set, from_set, "", watched, "", how);
    EXPECT_EQ(how.substr(0, expect_how.size()), expect_how) << how;
    vcs::changes_since(w.ws(), cold, "", walked);
    EXPECT_EQ(keys_of(watched), keys_of(walked));
    EXPECT_EQ(watched.complete, walked.complete);
    return keys_of(watched);
  }
};

bool has(const std::set<finding_key>& found, const std::string& kind, const std::string& path) {
  return found.count({kind, path, ""}) != 0;
}

TEST(WatchedScan, TheLaunchScanFromTheSetIsTheColdOne) {
  both_ways b;
  ASSERT_TRUE(b.set);
  EXPECT_EQ(b.how, "watch");
  EXPECT_EQ(b.from_set.protect, b.cold.protect);
  EXPECT_EQ(b.from_set.repositories, b.cold.repositories);
  EXPECT_EQ(b.from_set.missing, b.cold.missing);
  EXPECT_EQ(b.from_set.absent_redirects, b.cold.absent_redirects);
  EXPECT_EQ(b.from_set.places, b.cold.places);
  EXPECT_EQ(b.from_set.entries_seen, b.cold.entries_seen);
  EXPECT_TRUE(b.set->known);
  // Nothing changed: the repositories found again where they were (no walk), no finding either way.
  EXPECT_TRUE(b.check().empty());
  EXPECT_TRUE(b.set->known);
}

// The walk takes a vouched listing as it is, without reading the directory
// (which is why only a watch set kept current may vouch): a listing of the
// root that leaves out `a` hides a/.git; a directory not vouched for is read.
TEST(WatchedScan, AVouchedListingIsTakenWithoutReadingTheDirectory) {
  workspace w;
  const watched_entries root_without_a{{"d", DT_DIR}};
  const vcs::trusted_listings only_root = [&](const std::string& path) {
    return path == w.ws() ? &root_without_a : nullptr;
  };
  const vcs::vcs_scan hidden = vcs::scan_vcs_metadata(w.ws(), "", vcs::max_directories, nullptr,
                                                      vcs::listing_settle_ns, vcs::scan_memory_bound_bytes, "",
                                                      &only_root);
  EXPECT_TRUE(hidden.repositories.empty());
  EXPECT_EQ(hidden.entries_seen, 2u);  // d and d/e, read because not vouched for
  const vcs::trusted_listings none = [](const std::string&) { return nullptr; };
  const vcs::vcs_scan read = vcs::scan_vcs_metadata(w.ws(), "", vcs::max_directories, nullptr,
                                                    vcs::listing_settle_ns, vcs::scan_memory_bound_bytes, "", &none);
  EXPECT_EQ(read.repositories, std::vector<std::string>{w.ws() + "/a/.git"});
}

TEST(WatchedScan, ANestedRepositoryWithAHookIsFound) {
  both_ways b;
  ASSERT_TRUE(b.set);
  const std::string nested = b.w.ws() + "/d/e/n/.git";
  fs::create_directories(nested + "/hooks");
  std::ofstream(nested + "/config") << "[core]\n\tfsmonitor = /bin/evil\n";
  std::ofstream(nested + "/hooks/post-checkout") << "#!/bin/sh\n";
  const auto found = b.check();
  EXPECT_TRUE(has(found, "repository_created", nested));
  EXPECT_TRUE(has(found, "hook", nested + "/hooks/post-checkout"));
}

// A write through a shared mapping raises no inotify event while the
// mapping lives: the set lists nothing again (the repositories are found
// again where the last scan found them, no walk), and the stamp of the
// config (read every time) still differs.
TEST(WatchedScan, AConfigWrittenThroughMmapIsFound) {
  both_ways b;
  ASSERT_TRUE(b.set);
  const std::string config = b.w.ws() + "/a/.git/config";
  unique_fd fd(::open(config.c_str(), O_RDWR | O_CLOEXEC));
  ASSERT_TRUE(fd);
  void* map = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
  ASSERT_NE(map, MAP_FAILED);
  fd.reset();
  std::memcpy(map, "[core]\n\thooksPath=/x", 20);
  ASSERT_EQ(::msync(map, 4096, MS_SYNC), 0);
  EXPECT_TRUE(b.set->set.refresh().empty());  // no event: nothing listed again
  const auto found = b.check();  // the mapping still lives
  ::munmap(map, 4096);
  EXPECT_TRUE(has(found, "repository_changed", config));
}

TEST(WatchedScan, ADirectoryHoldingGitRenamedIntoPlaceIsFound) {
  both_ways b;
  ASSERT_TRUE(b.set);
  const std::string outside = b.w.root + "/outside/x";
  fs::create_directories(outside + "/deeper/.git/hooks");
  std::ofstream(outside + "/deeper/.git/config") << "[alias]\n\tst = !/bin/evil\n";
  fs::rename(outside, b.w.ws() + "/d/x");
  const auto found = b.check();
  EXPECT_TRUE(has(found, "repository_created", b.w.ws() + "/d/x/deeper/.git"));
}

TEST(WatchedScan, ADeepNewSubtreeIsFound) {
  both_ways b;
  ASSERT_TRUE(b.set);
  std::string deep = b.w.ws() + "/d";
  for (int i = 0; i < 40; ++i) deep += "/l" + std::to_string(i);
  fs::create_directories(deep + "/.git/hooks");
  std::ofstream(deep + "/.git/config") << "";
  const auto found = b.check();
  EXPECT_TRUE(has(found, "repository_created", deep + "/.git"));
}

// More events than the kernel queues: the set is in doubt, the check is the
// full walk (named in `how`), and the repository made among the events is found.
TEST(WatchedScan, AnOverflowedQueueIsTheFullWalk) {
  both_ways b;
  ASSERT_TRUE(b.set);
  std::size_t queued = 16384;
  std::ifstream("/proc/sys/fs/inotify/max_queued_events") >> queued;
  for (std::size_t i = 0; i <= queued; ++i) std::ofstream(b.w.ws() + "/d/f" + std::to_string(i));
  fs::create_directories(b.w.ws() + "/d/late/.git");
  const auto found = b.check("walk: the kernel dropped events (IN_Q_OVERFLOW)");
  EXPECT_TRUE(has(found, "repository_created", b.w.ws() + "/d/late/.git"));
}

// `git init` on the host between two runs: the next launch scan from the
// set protects the new repository, as a cold one does.
TEST(WatchedScan, ARepositoryMadeBetweenRunsIsProtectedInTheNextScan) {
  both_ways b;
  ASSERT_TRUE(b.set);
  const std::string made = b.w.ws() + "/d/e/new/.git";
  fs::create_directories(made + "/hooks");
  std::ofstream(made + "/config") << "";
  listings_taken how;
  const vcs::vcs_scan next = watched_scan(*b.set, "", "", how);
  EXPECT_EQ(how, "watch");
  const vcs::vcs_scan cold = vcs::scan_vcs_metadata(b.w.ws(), "");
  EXPECT_EQ(next.protect, cold.protect);
  EXPECT_NE(std::find(next.protect.begin(), next.protect.end(), made + "/config"), next.protect.end());
  EXPECT_NE(std::find(next.protect.begin(), next.protect.end(), made + "/hooks"), next.protect.end());
}

}  // namespace
}  // namespace cordon::linux_impl
