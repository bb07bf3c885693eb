// The repository scanner (src/posix/vcs_scan.cpp) on real directories: what
// it protects at launch, and what the post-run comparison finds when the
// change hides behind restored mtimes.
#include "posix/vcs_scan.h"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace cordon::vcs {
namespace {

namespace fs = std::filesystem;

struct scratch {
  std::string dir;
  scratch() {
    char tmpl[] = "/tmp/cordon-vcsscan-XXXXXX";
    dir = ::mkdtemp(tmpl);
  }
  ~scratch() { fs::remove_all(dir); }
  std::string write(const std::string& rel, const std::string& text) const {
    fs::create_directories(fs::path(dir + "/" + rel).parent_path());
    std::ofstream(dir + "/" + rel) << text;
    return dir + "/" + rel;
  }
};

bool has(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

std::string kinds(const deferred_execution_evidence& e) {
  std::string out;
  for (const auto& f : e.findings) out += f.kind + " " + f.path + (f.key.empty() ? "" : " " + f.key) + "\n";
  return out;
}

bool found(const deferred_execution_evidence& e, const std::string& kind, const std::string& path,
           const std::string& key = "") {
  return std::any_of(e.findings.begin(), e.findings.end(), [&](const deferred_execution_finding& f) {
    return f.kind == kind && f.path == path && (key.empty() || f.key == key);
  });
}

// A bare repository's shape, as git init --bare makes it.
void make_bare(const scratch& s, const std::string& rel, const std::string& config) {
  s.write(rel + "/HEAD", "ref: refs/heads/main\n");
  s.write(rel + "/config", config);
  fs::create_directories(s.dir + "/" + rel + "/objects");
  fs::create_directories(s.dir + "/" + rel + "/refs/heads");
  fs::create_directories(s.dir + "/" + rel + "/hooks");
}

TEST(VcsScan, BareRepositoriesAndGitFilesTargetsAreProtected) {
  scratch s;
  make_bare(s, "deep/er/bare", "[core]\nbare = true\n");
  s.write("w/.git", "gitdir: ../sep\n");
  make_bare(s, "sep", "[core]\nbare = false\n");
  vcs_scan scan = scan_vcs_metadata(s.dir, "");
  EXPECT_TRUE(has(scan.protect, s.dir + "/deep/er/bare/config"));
  EXPECT_TRUE(has(scan.protect, s.dir + "/deep/er/bare/hooks"));
  EXPECT_TRUE(has(scan.protect, s.dir + "/w/.git"));
  EXPECT_TRUE(has(scan.protect, s.dir + "/sep/config"));  // the directory the .git file names
  EXPECT_TRUE(has(scan.protect, s.dir + "/sep/hooks"));
  EXPECT_TRUE(has(scan.absent_redirects, s.dir + "/sep/commondir"));
  EXPECT_FALSE(scan.truncated);
}

// A chain deeper than the bound, sorting before a repository beside it,
// hides nothing but itself: the repository is protected, the chain is one
// named gap, and the scan is not cut short (an attack pass found the whole
// walk stopping at the first subtree past the depth bound).
TEST(VcsScan, AChainPastTheDepthBoundHidesOnlyItself) {
  scratch s;
  std::string chain = "a";
  for (std::size_t i = 0; i < max_depth + 5; ++i) chain += "/d";
  fs::create_directories(s.dir + "/" + chain);
  make_bare(s, "z/.git", "[core]\nbare = false\n");
  vcs_scan scan = scan_vcs_metadata(s.dir, "");
  EXPECT_FALSE(scan.truncated);
  EXPECT_TRUE(has(scan.protect, s.dir + "/z/.git/hooks"));
  EXPECT_TRUE(has(scan.protect, s.dir + "/z/.git/config"));
  ASSERT_EQ(scan.incomplete.size(), 1u);
  EXPECT_NE(scan.incomplete[0].reason.find("deeper than"), std::string::npos) << scan.incomplete[0].reason;
  EXPECT_FALSE(scan.incomplete[0].refuses_launch);
}

TEST(VcsScan, IncludesAndHooksPathAreProtectedOrWatched) {
  scratch s;
  make_bare(s, "r/.git", "[include]\npath = ../../inc\n[include]\npath = ../absent\n[core]\nhooksPath = hooks2\n");
  s.write("inc", "[core]\npager = less\n");
  fs::create_directories(s.dir + "/r/hooks2");
  vcs_scan scan = scan_vcs_metadata(s.dir, "");
  EXPECT_TRUE(has(scan.protect, s.dir + "/inc"));
  EXPECT_TRUE(has(scan.absent_redirects, s.dir + "/r/absent"));
  EXPECT_TRUE(has(scan.protect, s.dir + "/r/hooks2"));
  EXPECT_TRUE(scan.missing.empty());
}

TEST(VcsScan, ANestedRepositoryBehindRestoredMtimesIsFound) {
  scratch s;
  make_bare(s, ".git", "[core]\nbare = false\n");
  fs::create_directories(s.dir + "/sub");
  struct stat before_st {};
  ASSERT_EQ(::stat((s.dir + "/sub").c_str(), &before_st), 0);
  vcs_scan before = scan_vcs_metadata(s.dir, "");
  make_bare(s, "sub/.git", "[core]\n\tfsmonitor = touch /tmp/x\n");
  make_bare(s, "sub/implicit", "[filter \"f\"]\nclean = run\n");
  s.write("sub/.git/hooks/pre-commit", "#!/bin/sh\n");
  // The attacker's last step: the parent's mtime back to what it was.
  struct timespec times[2] = {before_st.st_atim, before_st.st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, (s.dir + "/sub").c_str(), times, 0), 0);
  deferred_execution_evidence e;
  changes_since(s.dir, before, "", e);
  EXPECT_TRUE(e.complete);
  EXPECT_TRUE(found(e, "repository_created", s.dir + "/sub/.git")) << kinds(e);
  EXPECT_TRUE(found(e, "executable_config", s.dir + "/sub/.git/config", "core.fsmonitor")) << kinds(e);
  EXPECT_TRUE(found(e, "hook", s.dir + "/sub/.git/hooks/pre-commit")) << kinds(e);
  EXPECT_TRUE(found(e, "repository_created", s.dir + "/sub/implicit")) << kinds(e);
  EXPECT_TRUE(found(e, "executable_config", s.dir + "/sub/implicit/config", "filter.f.clean")) << kinds(e);
}

TEST(VcsScan, AConfigRewrittenInPlaceWithItsMtimeRestoredIsFound) {
  scratch s;
  make_bare(s, ".git", "[core]\nbare = false\n");
  const std::string config = s.dir + "/.git/config";
  struct stat st {};
  ASSERT_EQ(::stat(config.c_str(), &st), 0);
  vcs_scan before = scan_vcs_metadata(s.dir, "");
  std::ofstream(config) << "[core]\nbare = falsE\n";  // same size, same inode
  struct timespec times[2] = {st.st_atim, st.st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, config.c_str(), times, 0), 0);
  deferred_execution_evidence e;
  changes_since(s.dir, before, "", e);
  EXPECT_TRUE(found(e, "repository_changed", config)) << kinds(e);
  // Nothing changed: nothing found.
  deferred_execution_evidence quiet;
  changes_since(s.dir, scan_vcs_metadata(s.dir, ""), "", quiet);
  EXPECT_TRUE(quiet.findings.empty()) << kinds(quiet);
}

TEST(VcsScan, StartupPathsUnderTheRootAreProtectedOrWatched) {
  scratch s;
  const std::string home = s.dir + "/home";
  s.write("home/.bashrc", "# mine\n");
  vcs_scan before = scan_vcs_metadata(s.dir, home);
  EXPECT_TRUE(has(before.protect, home + "/.bashrc"));
  EXPECT_FALSE(has(before.protect, home + "/.zlogin"));
  s.write("home/.zlogin", "evil\n");
  s.write("home/.config/autostart/x.desktop", "[Desktop Entry]\n");
  deferred_execution_evidence e;
  changes_since(s.dir, before, home, e);
  EXPECT_TRUE(found(e, "startup_file", home + "/.zlogin")) << kinds(e);
  EXPECT_TRUE(found(e, "startup_file", home + "/.config/autostart")) << kinds(e);
  EXPECT_FALSE(found(e, "startup_file", home + "/.bashrc")) << kinds(e);
}

TEST(VcsScan, TheBoundIsAFindingNotSilence) {
  scratch s;
  for (int i = 0; i < 5; ++i) fs::create_directories(s.dir + "/d" + std::to_string(i));
  vcs_scan small = scan_vcs_metadata(s.dir, "", 3);
  EXPECT_TRUE(small.truncated);
  std::string deep = s.dir;
  for (std::size_t i = 0; i <= max_depth; ++i) deep += "/x";
  fs::create_directories(deep);
  // Past the depth bound only that subtree is unseen: a gap naming it.
  vcs_scan before = scan_vcs_metadata(s.dir, "");
  EXPECT_FALSE(before.truncated);
  ASSERT_EQ(before.incomplete.size(), 1u);
  const std::string unseen = before.incomplete[0].path;
  EXPECT_EQ(unseen.rfind(s.dir + "/x/", 0), 0u) << unseen;
  deferred_execution_evidence e;
  changes_since(s.dir, before, "", e);
  EXPECT_FALSE(e.complete);
  EXPECT_TRUE(found(e, "scan_incomplete", unseen)) << kinds(e);
}

// A directory this user cannot list hides its subtree: the scan names it
// (launch: `incomplete`; after the run: a scan_incomplete finding) and is
// not complete. Root lists it anyway, so the case needs another user.
TEST(VcsScan, AnUnreadableDirectoryIsIncompleteNotSilence) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads a mode-111 directory";
  scratch s;
  fs::create_directories(s.dir + "/d/x");
  vcs_scan before = scan_vcs_metadata(s.dir, "");
  EXPECT_TRUE(before.incomplete.empty());
  ASSERT_EQ(::chmod((s.dir + "/d").c_str(), 0111), 0);
  deferred_execution_evidence e;
  changes_since(s.dir, before, "", e);
  EXPECT_FALSE(e.complete);
  EXPECT_TRUE(found(e, "scan_incomplete", s.dir + "/d")) << kinds(e);
  ::chmod((s.dir + "/d").c_str(), 0755);
}

// A config made unparseable, cyclic or giant during the run is a
// scan_incomplete finding naming it (on main the post-run scan ignored it).
TEST(VcsScan, AConfigTheScanCannotReadAfterTheRunIsAFinding) {
  scratch s;
  s.write("r/.git/config", "[core]\n");
  fs::create_directories(s.dir + "/r/.git/hooks");
  vcs_scan before = scan_vcs_metadata(s.dir, "");
  s.write("r/.git/config", "[include]\npath = config\n");
  deferred_execution_evidence e;
  changes_since(s.dir, before, "", e);
  EXPECT_FALSE(e.complete);
  EXPECT_TRUE(found(e, "scan_incomplete", s.dir + "/r/.git/config")) << kinds(e);
}

// Operation state created during the run, and the exec lines of its todo
// lists (x or exec, indented or not); a comment is no exec line, and a state
// directory that existed unchanged is nothing.
TEST(VcsScan, OperationStateAndTodoExecLinesAreFindings) {
  scratch s;
  s.write("r/.git/config", "[core]\n");
  fs::create_directories(s.dir + "/r/.git/hooks");
  s.write("r/.git/rebase-apply/next", "1\n");
  vcs_scan before = scan_vcs_metadata(s.dir, "");
  s.write("r/.git/rebase-merge/git-rebase-todo", "pick 1234 one\n  x make\n# exec not-this\nexec touch /tmp/p\n");
  s.write("r/.git/sequencer/todo", "pick 5678 two\n");
  deferred_execution_evidence e;
  changes_since(s.dir, before, "", e);
  EXPECT_TRUE(found(e, "operation_state", s.dir + "/r/.git/rebase-merge")) << kinds(e);
  EXPECT_TRUE(found(e, "operation_state", s.dir + "/r/.git/sequencer")) << kinds(e);
  EXPECT_FALSE(found(e, "operation_state", s.dir + "/r/.git/rebase-apply")) << kinds(e);
  int execs = 0;
  for (const auto& f : e.findings) execs += f.kind == "operation_exec";
  EXPECT_EQ(execs, 2) << kinds(e);
  EXPECT_TRUE(found(e, "operation_exec", s.dir + "/r/.git/rebase-merge/git-rebase-todo")) << kinds(e);
}

// However much the command leaves, at most 1,000 findings are named and one
// more scan_incomplete says the rest were not (the report stays bounded).
TEST(VcsScan, FindingsAreCappedWithAScanIncomplete) {
  scratch s;
  vcs_scan before = scan_vcs_metadata(s.dir, "");
  s.write("r/.git/config", "[core]\n");
  for (int i = 0; i < 1200; ++i) s.write("r/.git/hooks/h" + std::to_string(i), "#!/bin/sh\n");
  deferred_execution_evidence e;
  changes_since(s.dir, before, "", e);
  ASSERT_EQ(e.findings.size(), 1001u);
  EXPECT_EQ(e.findings.back().kind, "scan_incomplete");
  EXPECT_NE(e.findings.back().detail.find("more than 1000 findings"), std::string::npos) << e.findings.back().detail;
  EXPECT_FALSE(e.complete);
}


// The listing cache (docs/deferred-execution.md, "Cost"). Listings are kept
// only once a directory's ctime is older than the clock; these tests keep
// every settled listing (settle 0) and wait, by polling the clock the kernel
// stamps ctime from, until what they made is older than it.
void until_clock_passes(const std::string& path) {
  struct stat st {};
  ASSERT_EQ(::lstat(path.c_str(), &st), 0);
  for (;;) {
    timespec now{};
    ::clock_gettime(CLOCK_REALTIME_COARSE, &now);
    if (now.tv_sec > st.st_ctim.tv_sec || (now.tv_sec == st.st_ctim.tv_sec && now.tv_nsec > st.st_ctim.tv_nsec)) return;
    ::sched_yield();
  }
}

bool kernel_sets_ctime(const std::string& path) {
  struct statfs f {};
  if (::statfs(path.c_str(), &f) != 0) return false;
  auto t = static_cast<unsigned long>(f.f_type);
  return t == EXT4_SUPER_MAGIC || t == XFS_SUPER_MAGIC || t == BTRFS_SUPER_MAGIC || t == TMPFS_MAGIC;
}

TEST(VcsScanCache, ADirectoryWhoseCtimeDidNotMoveIsNotReadAgain) {
  scratch s;
  if (!kernel_sets_ctime(s.dir)) GTEST_SKIP() << "no listing is kept on this file system";
  make_bare(s, "a/.git", "[core]\nbare = false\n");
  fs::create_directories(s.dir + "/a/b/c");
  fs::create_directories(s.dir + "/d");
  until_clock_passes(s.dir);  // made last: the root's ctime is the newest
  vcs_scan first = scan_vcs_metadata(s.dir, "", max_directories, nullptr, 0);
  EXPECT_EQ(first.listings.reused, 0u);
  EXPECT_EQ(first.listings.listings.size(), 5u);  // the root, a, a/b, a/b/c, d (not inside .git)
  vcs_scan second = scan_vcs_metadata(s.dir, "", max_directories, &first.listings, 0);
  EXPECT_EQ(second.listings.reused, 5u);
  EXPECT_EQ(second.repositories, first.repositories);
  EXPECT_EQ(second.protect, first.protect);
  EXPECT_EQ(second.entries_seen, first.entries_seen);
}

// The change a cache could hide: a repository made in a directory the cache
// has listed, with the directory's mtime set back. Its ctime moved, so it
// is read again and the repository found; what did not change is reused.
TEST(VcsScanCache, ARepositoryHiddenFromTheCacheIsStillFound) {
  scratch s;
  if (!kernel_sets_ctime(s.dir)) GTEST_SKIP() << "no listing is kept on this file system";
  fs::create_directories(s.dir + "/sub/deep/er");
  fs::create_directories(s.dir + "/other");
  until_clock_passes(s.dir);
  vcs_scan before = scan_vcs_metadata(s.dir, "", max_directories, nullptr, 0);
  ASSERT_EQ(before.listings.listings.size(), 5u);
  struct stat st {};
  ASSERT_EQ(::stat((s.dir + "/sub/deep/er").c_str(), &st), 0);
  make_bare(s, "sub/deep/er/.git", "[core]\n\tfsmonitor = touch /tmp/x\n");
  make_bare(s, "sub/deep/er/implicit", "[core]\n");
  struct timespec times[2] = {st.st_atim, st.st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, (s.dir + "/sub/deep/er").c_str(), times, 0), 0);
  deferred_execution_evidence e;
  vcs_scan after;
  changes_since(s.dir, before, "", e, &after);
  EXPECT_TRUE(e.complete);
  EXPECT_TRUE(found(e, "repository_created", s.dir + "/sub/deep/er/.git")) << kinds(e);
  EXPECT_TRUE(found(e, "executable_config", s.dir + "/sub/deep/er/.git/config", "core.fsmonitor")) << kinds(e);
  EXPECT_TRUE(found(e, "repository_created", s.dir + "/sub/deep/er/implicit")) << kinds(e);
  EXPECT_EQ(after.listings.reused, 4u);  // the root, sub, sub/deep, other: unchanged
}

// A directory replaced by another of the same name (rename over it, or
// remove and make again) is another identity: never taken for the old one.
TEST(VcsScanCache, AReplacedDirectoryIsReadAgain) {
  scratch s;
  if (!kernel_sets_ctime(s.dir)) GTEST_SKIP() << "no listing is kept on this file system";
  fs::create_directories(s.dir + "/w/x");
  fs::create_directories(s.dir + "/staged");
  until_clock_passes(s.dir);
  vcs_scan before = scan_vcs_metadata(s.dir, "", max_directories, nullptr, 0);
  make_bare(s, "staged/x/.git", "[alias]\n\tco = !sh -c evil\n");
  fs::remove_all(s.dir + "/w/x");
  ASSERT_EQ(::rename((s.dir + "/staged/x").c_str(), (s.dir + "/w/x").c_str()), 0);
  deferred_execution_evidence e;
  changes_since(s.dir, before, "", e);
  EXPECT_TRUE(found(e, "repository_created", s.dir + "/w/x/.git")) << kinds(e);
  EXPECT_TRUE(found(e, "executable_config", s.dir + "/w/x/.git/config", "alias.co")) << kinds(e);
}

// A directory whose ctime is not yet older than the clock by `settle` is
// not kept: a change in the same clock tick would leave its ctime equal.
TEST(VcsScanCache, AListingNotSettledIsNotKept) {
  scratch s;
  fs::create_directories(s.dir + "/fresh");
  vcs_scan before = scan_vcs_metadata(s.dir, "", max_directories, nullptr, 3600LL * 1000000000);
  EXPECT_TRUE(before.listings.listings.empty());
  make_bare(s, "fresh/.git", "[core]\n\tpager = evil\n");
  deferred_execution_evidence e;
  changes_since(s.dir, before, "", e);
  EXPECT_TRUE(found(e, "repository_created", s.dir + "/fresh/.git")) << kinds(e);
}

// A stale or forged entry (the right identity, another ctime) is not used.
TEST(VcsScanCache, AListingForAnotherCtimeIsNotUsed) {
  scratch s;
  make_bare(s, "r/.git", "[core]\n");
  struct stat st {};
  ASSERT_EQ(::lstat((s.dir + "/r").c_str(), &st), 0);
  listing_cache forged;
  timespec other = st.st_ctim;
  other.tv_nsec = (other.tv_nsec + 1) % 1000000000;
  forged.listings[{st.st_dev, st.st_ino}] = {other, {}};  // "r holds nothing"
  vcs_scan scan = scan_vcs_metadata(s.dir, "", max_directories, &forged, 0);
  EXPECT_TRUE(has(scan.repositories, s.dir + "/r/.git"));
  EXPECT_EQ(scan.listings.reused, 0u);
}

}  // namespace
}  // namespace cordon::vcs
