// The inotify watch set (linux/directory_watch.h): what a command does under
// the watched root is in the kept listings after refresh() exactly as a new
// walk would list it, and whatever the set cannot vouch for is a doubt (the
// caller falls back to the full walk), never a listing silently short.
#include "linux/directory_watch.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "posix/unique_fd.h"

#include "posix/vcs_scan.h"

namespace cordon::linux_impl {
namespace {

namespace fs = std::filesystem;

struct temp_tree {
  std::string root;
  temp_tree() {
    char tmpl[] = "/tmp/cordon-dirwatch-XXXXXX";
    root = fs::canonical(::mkdtemp(tmpl)).string();
    fs::create_directories(root + "/ws/a/b/c");
    fs::create_directories(root + "/ws/a/.git/hooks");
    fs::create_directories(root + "/ws/d");
    std::ofstream(root + "/ws/a/file") << "x";
  }
  ~temp_tree() { fs::remove_all(root); }
  std::string ws() const { return root + "/ws"; }
};

// What a walk made now lists (as the set keeps it): every directory below
// `root` (not into .git) with its subdirectories and the names the scan uses.
std::map<std::string, watched_entries> walk(const std::string& root) {
  std::map<std::string, watched_entries> out;
  std::vector<std::string> stack{root};
  while (!stack.empty()) {
    const std::string dir = stack.back();
    stack.pop_back();
    watched_entries entries;
    for (const auto& entry : fs::directory_iterator(dir)) {
      const std::string name = entry.path().filename();
      const bool is_dir = entry.is_directory() && !entry.is_symlink();
      if (is_dir && name != ".git") stack.push_back(entry.path());
      if (is_dir || name == ".git" || name == "HEAD" || name == "objects" || name == "refs") {
        entries.emplace_back(name, is_dir ? DT_DIR : DT_REG);
      }
    }
    std::sort(entries.begin(), entries.end());
    out[dir] = entries;
  }
  return out;
}

void expect_same_as_walk(const directory_watch& set) {
  EXPECT_EQ(set.doubt(), "");
  EXPECT_EQ(set.listings(), walk(set.root()));
}

bool lists(const directory_watch& set, const std::string& dir, const std::string& name) {
  const watched_entries* entries = set.listing(dir);
  if (entries == nullptr) return false;
  for (const auto& [n, type] : *entries) {
    if (n == name) return true;
  }
  return false;
}

TEST(DirectoryWatch, ListsTheTreeAndAQuietRefreshReadsNothing) {
  temp_tree t;
  auto set = directory_watch::open(t.ws(), vcs::max_directories);
  ASSERT_TRUE(set);
  expect_same_as_walk(*set);
  EXPECT_TRUE(lists(*set, t.ws() + "/a", ".git"));
  EXPECT_EQ(set->listing(t.ws() + "/a/.git"), nullptr);  // not entered, as the scan
  EXPECT_TRUE(set->refresh().empty());
  std::ofstream(t.ws() + "/a/b/c/plain") << "not a name the scan uses";
  EXPECT_EQ(set->refresh(), std::vector<std::string>{t.ws() + "/a/b/c"});
  expect_same_as_walk(*set);
}

// A nested repository with a hook, made by the command: its directory is in
// the kept listings with its .git, as a walk finds it.
TEST(DirectoryWatch, ANestedRepositoryWithAHookIsSeen) {
  temp_tree t;
  auto set = directory_watch::open(t.ws(), vcs::max_directories);
  ASSERT_TRUE(set);
  fs::create_directories(t.ws() + "/a/b/nested/.git/hooks");
  std::ofstream(t.ws() + "/a/b/nested/.git/hooks/post-checkout") << "#!/bin/sh\n";
  const auto changed = set->refresh();
  EXPECT_NE(std::find(changed.begin(), changed.end(), t.ws() + "/a/b/nested"), changed.end());
  EXPECT_TRUE(lists(*set, t.ws() + "/a/b/nested", ".git"));
  expect_same_as_walk(*set);
}

// A directory holding .git made outside the root and renamed into place,
// with a tree below it: listed whole, and watched (a change in it later is seen).
TEST(DirectoryWatch, ADirectoryHoldingGitRenamedIntoPlaceIsListedAndWatched) {
  temp_tree t;
  fs::create_directories(t.root + "/outside/x/deep/.git");
  fs::create_directories(t.root + "/outside/x/deep/more");
  auto set = directory_watch::open(t.ws(), vcs::max_directories);
  ASSERT_TRUE(set);
  fs::rename(t.root + "/outside/x", t.ws() + "/d/x");
  set->refresh();
  EXPECT_TRUE(lists(*set, t.ws() + "/d/x/deep", ".git"));
  expect_same_as_walk(*set);
  fs::create_directories(t.ws() + "/d/x/deep/more/.git");
  EXPECT_EQ(set->refresh(), std::vector<std::string>{t.ws() + "/d/x/deep/more"});
  expect_same_as_walk(*set);
}

// A directory moved within the root: the old path is gone from the
// listings, the new one is watched (a later change under it is seen there).
TEST(DirectoryWatch, ADirectoryMovedWithinTheRootIsWatchedAtItsNewPath) {
  temp_tree t;
  auto set = directory_watch::open(t.ws(), vcs::max_directories);
  ASSERT_TRUE(set);
  fs::rename(t.ws() + "/a/b", t.ws() + "/d/b");
  set->refresh();
  expect_same_as_walk(*set);
  EXPECT_EQ(set->listing(t.ws() + "/a/b/c"), nullptr);
  fs::create_directories(t.ws() + "/d/b/c/.git");
  EXPECT_EQ(set->refresh(), std::vector<std::string>{t.ws() + "/d/b/c"});
  expect_same_as_walk(*set);
}

// Removed and made again under the same name, faster than any refresh: the
// new directory (another inode) is listed, not the old one's listing kept.
TEST(DirectoryWatch, AReplacedDirectoryIsListedAgain) {
  temp_tree t;
  auto set = directory_watch::open(t.ws(), vcs::max_directories);
  ASSERT_TRUE(set);
  fs::remove_all(t.ws() + "/a/b");
  fs::create_directories(t.ws() + "/a/b/.git");
  fs::create_directories(t.ws() + "/a/b/other");
  set->refresh();
  EXPECT_TRUE(lists(*set, t.ws() + "/a/b", ".git"));
  expect_same_as_walk(*set);
  // A leaf (d holds no directory) replaced by a rename over it: only its
  // parent has an event naming it; the new d is listed and watched.
  fs::create_directories(t.ws() + "/new/.git");
  fs::rename(t.ws() + "/new", t.ws() + "/d");
  set->refresh();
  EXPECT_TRUE(lists(*set, t.ws() + "/d", ".git"));
  expect_same_as_walk(*set);
  fs::create_directories(t.ws() + "/d/later");
  EXPECT_EQ(set->refresh(), (std::vector<std::string>{t.ws() + "/d", t.ws() + "/d/later"}));
  expect_same_as_walk(*set);
}

// A deep new subtree made at once (each level made before the set could
// watch it): every level is listed, the repository at the bottom found.
TEST(DirectoryWatch, ADeepNewSubtreeIsListedWhole) {
  temp_tree t;
  auto set = directory_watch::open(t.ws(), vcs::max_directories);
  ASSERT_TRUE(set);
  std::string deep = t.ws() + "/d";
  for (int i = 0; i < 40; ++i) deep += "/l" + std::to_string(i);
  fs::create_directories(deep + "/.git");
  set->refresh();
  EXPECT_TRUE(lists(*set, deep, ".git"));
  expect_same_as_walk(*set);
}

// More events than the kernel queues (fs.inotify.max_queued_events): the
// kernel drops the rest and says so; the set is in doubt for good.
TEST(DirectoryWatch, AnOverflowedQueueIsADoubt) {
  temp_tree t;
  std::size_t queued = 16384;
  std::ifstream("/proc/sys/fs/inotify/max_queued_events") >> queued;
  auto set = directory_watch::open(t.ws(), vcs::max_directories);
  ASSERT_TRUE(set);
  for (std::size_t i = 0; i <= queued; ++i) {
    std::ofstream(t.ws() + "/d/f" + std::to_string(i));  // IN_CREATE and IN_CLOSE_WRITE each
  }
  EXPECT_TRUE(set->refresh().empty());
  EXPECT_NE(set->doubt().find("IN_Q_OVERFLOW"), std::string::npos) << set->doubt();
  fs::create_directories(t.ws() + "/d/later/.git");
  EXPECT_TRUE(set->refresh().empty());
  EXPECT_FALSE(set->doubt().empty());
}

// A watch the kernel refuses (ENOSPC past the user's watch limit: here a
// user namespace's own limit of 3, /proc/sys/user/max_inotify_watches) is
// a doubt, whether at open or for a directory made later.
TEST(DirectoryWatch, ARefusedWatchIsADoubt) {
  temp_tree t;
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (::unshare(CLONE_NEWUSER) != 0) ::_exit(10);
    std::ofstream("/proc/sys/user/max_inotify_watches") << 3;
    {
      auto at_open = directory_watch::open(t.ws(), vcs::max_directories);  // 5 directories
      if (!at_open || at_open->doubt().find("max_user_watches") == std::string::npos) ::_exit(11);
    }
    auto later = directory_watch::open(t.ws() + "/a", vcs::max_directories);  // a, a/b, a/b/c: 3
    if (!later || !later->doubt().empty()) ::_exit(12);
    fs::create_directories(t.ws() + "/a/b/c/e");
    if (!later->refresh().empty() || later->doubt().find("ENOSPC") == std::string::npos) ::_exit(13);
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(DirectoryWatch, TheRootMovedOrTheBoundPassedIsADoubt) {
  temp_tree t;
  auto set = directory_watch::open(t.ws(), vcs::max_directories);
  ASSERT_TRUE(set);
  fs::rename(t.ws(), t.root + "/elsewhere");
  EXPECT_TRUE(set->refresh().empty());
  EXPECT_NE(set->doubt().find("removed, moved"), std::string::npos) << set->doubt();
  auto small = directory_watch::open(t.root + "/elsewhere", 3);  // it holds 5
  ASSERT_TRUE(small);
  EXPECT_NE(small->doubt().find("more than 3 directories"), std::string::npos) << small->doubt();
}

// A command that keeps making directories while the set is opened (each
// watched before it is listed): whatever it made before a listing is in
// it, whatever after raised an event; once it stops, a refresh leaves the
// kept listings exactly what a walk finds.
TEST(DirectoryWatch, DirectoriesMadeWhileTheSetOpensAreNotLost) {
  temp_tree t;
  for (int i = 0; i < 200; ++i) fs::create_directories(t.ws() + "/d/w" + std::to_string(i % 20) + "/x" + std::to_string(i));
  std::atomic<bool> stop{false};
  std::thread maker([&] {
    for (int i = 0; !stop.load() && i < 5000; ++i) {
      fs::create_directories(t.ws() + "/d/w" + std::to_string(i % 20) + "/new" + std::to_string(i) + "/.git");
    }
  });
  auto set = directory_watch::open(t.ws(), vcs::max_directories);
  stop = true;
  maker.join();
  ASSERT_TRUE(set);
  set->refresh();
  expect_same_as_walk(*set);
}

// A directory the command makes unreadable: as a user the set cannot list
// it and is in doubt (the walk then names it a gap); root lists it anyway.
TEST(DirectoryWatch, AnUnreadableDirectoryIsADoubtWhenItCannotBeListed) {
  temp_tree t;
  auto set = directory_watch::open(t.ws(), vcs::max_directories);
  ASSERT_TRUE(set);
  fs::create_directories(t.ws() + "/d/hidden/repo/.git");
  ASSERT_EQ(::chmod((t.ws() + "/d/hidden").c_str(), 0111), 0);
  set->refresh();
  if (::geteuid() == 0) {
    EXPECT_EQ(set->doubt(), "");
    EXPECT_TRUE(lists(*set, t.ws() + "/d/hidden/repo", ".git"));
  } else {
    // Refused at the watch (inotify_add_watch needs read permission) or at the listing: either names it.
    EXPECT_NE(set->doubt().find("/d/hidden: "), std::string::npos) << set->doubt();
    EXPECT_NE(set->doubt().find("Permission denied"), std::string::npos) << set->doubt();
  }
  ::chmod((t.ws() + "/d/hidden").c_str(), 0755);
}

// What the set does not see, by design: a write through a shared mapping
// raises no inotify event while the mapping lives (only its end is a
// close), and the set never reads content, so what git reads (a
// .git/config written this way) must be stamped by the scan every time.
TEST(DirectoryWatch, AWriteThroughASharedMappingRaisesNoEvent) {
  temp_tree t;
  const std::string config = t.ws() + "/a/.git/config";
  std::ofstream(config) << "[core]\n\tbare = false\n";
  auto set = directory_watch::open(t.ws() + "/a/.git", vcs::max_directories);  // watching inside .git itself
  ASSERT_TRUE(set);
  unique_fd fd(::open(config.c_str(), O_RDWR | O_CLOEXEC));
  ASSERT_TRUE(fd);
  void* map = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
  ASSERT_NE(map, MAP_FAILED);
  fd.reset();  // the mapping holds the file: no close event yet
  std::memcpy(map, "[core]\n\thooksPath=/x", 20);
  ASSERT_EQ(::msync(map, 4096, MS_SYNC), 0);
  EXPECT_TRUE(set->refresh().empty());
  EXPECT_EQ(set->doubt(), "");
  // The last reference to the file (the mapping) gone: IN_CLOSE_WRITE, which
  // relists the directory; the set never reads the content.
  ::munmap(map, 4096);
  EXPECT_EQ(set->refresh(), std::vector<std::string>{t.ws() + "/a/.git"});
  std::ifstream in(config);
  std::string first, second;
  std::getline(in, first);
  std::getline(in, second);
  EXPECT_EQ(second, "\thooksPath=/x");  // changed, unseen by the set
}

}  // namespace
}  // namespace cordon::linux_impl
