// The repository scan in a memory-bounded child (src/posix/bounded_scan.cpp,
// src/posix/vcs_scan_codec.cpp): its result crosses the pipe whole, a child
// past its bound is a named gap that refuses the launch and a
// scan_incomplete finding after the run, and the caller's own memory does
// not carry what the child allocated.
#include "posix/bounded_scan.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <new>
#include <string>
#include <vector>

#include "posix/vcs_scan_codec.h"
#include "../../sanitizer.h"

namespace cordon::vcs {
namespace {

namespace fs = std::filesystem;

struct scratch {
  std::string dir;
  scratch() {
    char tmpl[] = "/tmp/cordon-boundedscan-XXXXXX";
    dir = ::mkdtemp(tmpl);
  }
  ~scratch() { fs::remove_all(dir); }
  void write(const std::string& rel, const std::string& text) const {
    fs::create_directories(fs::path(dir + "/" + rel).parent_path());
    std::ofstream(dir + "/" + rel) << text;
  }
};

// A workspace with a bit of everything the scan records.
void make_workspace(const scratch& s) {
  s.write("a/.git/config", "[core]\n\thooksPath = ../hooks\n[alias]\n\tx = !sh -c true\n");
  s.write("a/.git/HEAD", "ref: refs/heads/main\n");
  s.write("a/.git/rebase-merge/git-rebase-todo", "pick 1 x\nexec sh -c true\n");
  fs::create_directories(s.dir + "/a/.git/hooks");
  fs::create_directories(s.dir + "/b/c/d");
  s.write("w/.git", "gitdir: ../a/.git\n");
}

TEST(BoundedScan, TheResultCrossesThePipeWhole) {
  scratch s;
  make_workspace(s);
  vcs_scan scan = scan_vcs_metadata(s.dir, "/nonexistent-home", max_directories, nullptr, 0);
  ASSERT_FALSE(scan.records.empty());
  // A listing kept (one whose ctime had settled), as the walk keeps them.
  scan.listings.listings[{1, 2}] = {{3, 4}, {{"d0", 4}, {".git", 4}}};
  scan.agent[s.dir + "/.envrc"] = {stamp_of(s.dir + "/a/.git/config"), true};
  ASSERT_TRUE(scan.incomplete.empty()) << scan.incomplete.front().reason;
  const std::string bytes = encode_scan(scan);
  const auto back = decode_scan(bytes);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(encode_scan(*back), bytes);
  EXPECT_EQ(back->protect, scan.protect);
  EXPECT_EQ(back->records.size(), scan.records.size());
  EXPECT_EQ(back->entries_seen, scan.entries_seen);
  EXPECT_EQ(back->places, scan.places);
  EXPECT_EQ(back->listings.listings.at({1, 2}).entries, scan.listings.listings.at({1, 2}).entries);
  EXPECT_TRUE(back->agent.at(s.dir + "/.envrc").stamp == scan.agent.at(s.dir + "/.envrc").stamp);
  // Anything cut or appended is refused whole, never half read.
  EXPECT_FALSE(decode_scan(bytes.substr(0, bytes.size() - 1)).has_value());
  EXPECT_FALSE(decode_scan(bytes + "x").has_value());
  EXPECT_FALSE(decode_scan("").has_value());
  std::string huge_count = bytes.substr(0, std::strlen("cordon-vcs-scan 2\n"));
  huge_count.append(8, '\xff');
  EXPECT_FALSE(decode_scan(huge_count).has_value());
}

TEST(BoundedScan, PastItsMemoryBoundTheScanIsAGapThatRefusesTheLaunch) {
  const std::uint64_t bound = 16ull << 20;
  const vcs_scan scan = run_bounded_scan(
      "/the/root",
      [] {
        vcs_scan big;
        // 64 MiB the child may not have: the allocation fails (std::bad_alloc).
        // A sanitizer's allocator aborts with a report instead of throwing, so
        // there the child throws what the bound would make operator new throw.
        if (CORDON_TEST_UNDER_SANITIZER) throw std::bad_alloc();
        big.protect.emplace_back(std::string(64u << 20, 'x'));
        return big;
      },
      bound);
  ASSERT_EQ(scan.incomplete.size(), 1u);
  EXPECT_EQ(scan.incomplete[0].path, "/the/root");
  EXPECT_NE(scan.incomplete[0].reason.find("memory bound of 16 MiB"), std::string::npos) << scan.incomplete[0].reason;
  EXPECT_TRUE(scan.incomplete[0].refuses_launch);
  EXPECT_TRUE(scan.protect.empty());
  EXPECT_TRUE(scan.records.empty());

  // A result well within the bound is an answer (its encoding grows to
  // about three times its size while it is written).
  const vcs_scan fits = run_bounded_scan(
      "/the/root",
      [] {
        vcs_scan small;
        small.protect.emplace_back(std::string(2u << 20, 'x'));
        return small;
      },
      bound);
  EXPECT_TRUE(fits.incomplete.empty()) << fits.incomplete.front().reason;
  ASSERT_EQ(fits.protect.size(), 1u);
  EXPECT_EQ(fits.protect[0].size(), 2u << 20);
}

TEST(BoundedScan, AFailedChildIsAGapAfterTheRunToo) {
  scratch s;
  make_workspace(s);
  const vcs_scan before = scan_vcs_metadata(s.dir, "", max_directories, nullptr, 0);
  // What changes_since turns a failed scan into: the gap is a scan_incomplete
  // finding and the scan is not complete (vcs_scan_test covers the gap path).
  const vcs_scan crashed = run_bounded_scan(s.dir, []() -> vcs_scan { std::abort(); });
  ASSERT_EQ(crashed.incomplete.size(), 1u);
  EXPECT_NE(crashed.incomplete[0].reason.find("signal"), std::string::npos) << crashed.incomplete[0].reason;
  EXPECT_FALSE(before.records.empty());
}

TEST(BoundedScan, TheCallersOwnMemoryDoesNotCarryTheChildsAllocation) {
  struct rusage self_before {};
  ASSERT_EQ(::getrusage(RUSAGE_SELF, &self_before), 0);
  const vcs_scan scan = run_bounded_scan("/the/root", [] {
    // 96 MiB touched in the child, a small answer.
    std::vector<char> heavy(96u << 20, 1);
    vcs_scan small;
    small.entries_seen = static_cast<std::uint64_t>(heavy[heavy.size() / 2]);
    return small;
  });
  ASSERT_TRUE(scan.incomplete.empty()) << scan.incomplete.front().reason;
  EXPECT_EQ(scan.entries_seen, 1u);
  struct rusage self_after {}, children {};
  ASSERT_EQ(::getrusage(RUSAGE_SELF, &self_after), 0);
  ASSERT_EQ(::getrusage(RUSAGE_CHILDREN, &children), 0);
  EXPECT_GE(children.ru_maxrss, 96 * 1024);                            // KiB
  EXPECT_LT(self_after.ru_maxrss - self_before.ru_maxrss, 32 * 1024);  // the caller did not grow by it
}

}  // namespace
}  // namespace cordon::vcs
