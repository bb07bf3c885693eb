// The writable home's post-run watch (src/posix/home_watch.cpp): every entry
// whose ctime is at or after the compile instant is a finding, outside the
// excluded subtrees; what did not change is not.
#include "posix/home_watch.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

namespace cordon::vcs {
namespace {

namespace fs = std::filesystem;

bool found(const deferred_execution_evidence& e, const std::string& kind, const std::string& path) {
  return std::any_of(e.findings.begin(), e.findings.end(),
                     [&](const deferred_execution_finding& f) { return f.kind == kind && f.path == path; });
}

std::string kinds(const deferred_execution_evidence& e) {
  std::string out;
  for (const auto& f : e.findings) out += f.kind + " " + f.path + "\n";
  return out;
}

// The first coarse instant after every ctime under `dir`: what follows is
// later than all of it (the clock is polled, no sleep decides this).
timespec after_everything(const std::string& dir) {
  timespec latest{};
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    struct stat st {};
    if (::lstat(entry.path().c_str(), &st) != 0) continue;
    if (st.st_ctim.tv_sec > latest.tv_sec || (st.st_ctim.tv_sec == latest.tv_sec && st.st_ctim.tv_nsec > latest.tv_nsec)) {
      latest = st.st_ctim;
    }
  }
  for (;;) {
    timespec now = home_watch_now();
    if (now.tv_sec > latest.tv_sec || (now.tv_sec == latest.tv_sec && now.tv_nsec > latest.tv_nsec)) return now;
  }
}

TEST(HomeWatch, EveryEntryChangedAfterTheInstantIsAFindingOutsideTheExcludedTrees) {
  char tmpl[] = "/tmp/cordon-homewatch-XXXXXX";
  const std::string home = ::mkdtemp(tmpl);
  fs::create_directories(home + "/old");
  fs::create_directories(home + "/ws");
  std::ofstream(home + "/old/a.txt") << "a";
  std::ofstream(home + "/still.txt") << "s";
  home_watch watch{home, {home + "/ws"}, after_everything(home)};
  std::ofstream(home + "/new.txt") << "n";
  std::ofstream(home + "/old/a.txt", std::ios::app) << "more";
  std::ofstream(home + "/ws/y") << "y";
  deferred_execution_evidence e;
  home_changes_since(watch, e);
  EXPECT_TRUE(found(e, "home_file", home + "/new.txt")) << kinds(e);
  EXPECT_TRUE(found(e, "home_file", home + "/old/a.txt")) << kinds(e);
  EXPECT_FALSE(found(e, "home_file", home + "/still.txt")) << kinds(e);
  EXPECT_FALSE(found(e, "home_file", home + "/old")) << kinds(e);  // its entries did not change
  EXPECT_FALSE(found(e, "home_file", home + "/ws/y")) << kinds(e);
  EXPECT_TRUE(e.complete);
  fs::remove_all(home);
}

}  // namespace
}  // namespace cordon::vcs
