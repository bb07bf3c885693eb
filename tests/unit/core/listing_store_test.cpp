// The scan's listings kept between runs (posix/listing_store.h): read back
// as written, and not read at all when they could be another's choice.
#include "posix/listing_store.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <filesystem>
#include <fstream>

namespace cordon::vcs {
namespace {

namespace fs = std::filesystem;

struct store_dir {
  std::string base;
  store_dir() {
    char tmpl[] = "/tmp/cordon-listings-XXXXXX";
    base = ::mkdtemp(tmpl);
  }
  ~store_dir() { fs::remove_all(base); }
  std::string dir() const { return base + "/cache/cordon/scan-listings"; }
};

listing_cache sample() {
  listing_cache c;
  c.listings[{7, 42}] = {{1700000000, 5}, {{".git", 4}, {"src", 4}, {"odd\nname", 0}}};
  c.listings[{7, 43}] = {{1700000001, 999999999}, {}};
  return c;
}

TEST(ListingStore, WhatIsSavedIsLoadedForTheSameRootOnly) {
  store_dir s;
  ASSERT_TRUE(save_listings(s.dir(), "/work/a", sample()));
  struct stat st {};
  ASSERT_EQ(::stat(s.dir().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  listing_cache back = load_listings(s.dir(), "/work/a");
  ASSERT_EQ(back.listings.size(), 2u);
  const auto& l = back.listings.at({7, 42});
  EXPECT_EQ(l.changed.tv_sec, 1700000000);
  EXPECT_EQ(l.changed.tv_nsec, 5);
  ASSERT_EQ(l.entries.size(), 3u);
  EXPECT_EQ(l.entries[2].first, "odd\nname");
  EXPECT_TRUE(load_listings(s.dir(), "/work/b").listings.empty());
}

// The same listings again write nothing (the file keeps its inode: no
// temporary file renamed over it, no fsync on every launch); different
// listings replace it.
TEST(ListingStore, SavingWhatIsStoredAlreadyWritesNothing) {
  store_dir s;
  ASSERT_TRUE(save_listings(s.dir(), "/work/a", sample()));
  std::string file;
  for (const auto& entry : fs::directory_iterator(s.dir())) file = entry.path();
  ASSERT_FALSE(file.empty());
  struct stat first {}, again {}, changed {};
  ASSERT_EQ(::stat(file.c_str(), &first), 0);
  ASSERT_TRUE(save_listings(s.dir(), "/work/a", sample()));
  ASSERT_EQ(::stat(file.c_str(), &again), 0);
  EXPECT_EQ(again.st_ino, first.st_ino);
  listing_cache other = sample();
  other.listings[{7, 44}] = {{1700000002, 0}, {{"new", 8}}};
  ASSERT_TRUE(save_listings(s.dir(), "/work/a", other));
  ASSERT_EQ(::stat(file.c_str(), &changed), 0);
  EXPECT_NE(changed.st_ino, first.st_ino);
  EXPECT_EQ(load_listings(s.dir(), "/work/a").listings.size(), 3u);
}

// A store others may write, or a file in it that is malformed or linked
// elsewhere, is not read (the scan then reads every directory).
TEST(ListingStore, AStoreThatCouldBeAnothersChoiceIsNotRead) {
  store_dir s;
  ASSERT_TRUE(save_listings(s.dir(), "/work/a", sample()));
  ASSERT_EQ(::chmod(s.dir().c_str(), 0777), 0);
  EXPECT_TRUE(load_listings(s.dir(), "/work/a").listings.empty());
  EXPECT_FALSE(save_listings(s.dir(), "/work/a", sample()));
  ASSERT_EQ(::chmod(s.dir().c_str(), 0700), 0);
  ASSERT_FALSE(load_listings(s.dir(), "/work/a").listings.empty());
  // Cut short in the middle of a record: malformed, nothing kept.
  for (const auto& entry : fs::directory_iterator(s.dir())) {
    fs::resize_file(entry.path(), fs::file_size(entry.path()) - 3);
  }
  EXPECT_TRUE(load_listings(s.dir(), "/work/a").listings.empty());
  // A second link to the file: another name could be written through it.
  ASSERT_TRUE(save_listings(s.dir(), "/work/a", sample()));
  for (const auto& entry : fs::directory_iterator(s.dir())) {
    fs::create_hard_link(entry.path(), s.base + "/other-name");
    break;
  }
  EXPECT_TRUE(load_listings(s.dir(), "/work/a").listings.empty());
}

// A writer that dies between making its temporary file and renaming it into
// place (the scan's child killed past its time or memory bound) leaves
// ".<file>.tmp.<n>" behind; before this, every such death left one for
// good. The next save removes those of this user whose mtime is older than
// listing_store_stale_seconds, and leaves a live writer's (fresh), names of
// another form and (as root) another user's alone.
TEST(ListingStore, TemporaryFilesADeadWriterLeftAreRemovedWhenTheStoreIsWritten) {
  store_dir s;
  ASSERT_TRUE(save_listings(s.dir(), "/work/a", sample()));
  std::string stored;
  for (const auto& entry : fs::directory_iterator(s.dir())) stored = entry.path().filename();
  ASSERT_EQ(stored.size(), 64u);
  const std::string left = s.dir() + "/." + stored + ".tmp.12345";
  const std::string live = s.dir() + "/." + stored + ".tmp.67890";
  const std::string others = s.dir() + "/." + stored + ".tmp.424242";
  const std::string unrelated = s.dir() + "/.notes.tmp.1";
  for (const auto& path : {left, live, others, unrelated}) std::ofstream(path) << "half a listing";
  const bool root = ::geteuid() == 0;
  if (root) {
    ASSERT_EQ(::chown(others.c_str(), 65534, 65534), 0);
  }
  const timespec old_time{::time(nullptr) - listing_store_stale_seconds - 60, 0};
  const timespec times[2] = {old_time, old_time};
  for (const auto& path : {left, others, unrelated}) ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);

  // Another root's listings: the store is written, and cleaned first.
  ASSERT_TRUE(save_listings(s.dir(), "/work/b", sample()));
  struct stat st {};
  EXPECT_EQ(::lstat(left.c_str(), &st), -1);
  EXPECT_EQ(errno, ENOENT);
  EXPECT_EQ(::lstat(live.c_str(), &st), 0);
  EXPECT_EQ(::lstat(unrelated.c_str(), &st), 0);
  EXPECT_EQ(::lstat(others.c_str(), &st), root ? 0 : -1);  // as a user it is this user's own, and old
  EXPECT_EQ(load_listings(s.dir(), "/work/a").listings.size(), 2u);
  EXPECT_EQ(load_listings(s.dir(), "/work/b").listings.size(), 2u);
}

}  // namespace
}  // namespace cordon::vcs
