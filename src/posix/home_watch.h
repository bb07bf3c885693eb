// home_watch.h — a writable home, watched whole (docs/deferred-execution.md,
// "A writable home"): after the run, every file or directory under the home
// whose ctime is at or after the moment the plan was compiled is a
// `home_file` finding, outside the subtrees excluded (the workspace's own
// tree and other writable roots inside the home, which the repository scan
// covers).
//
// Why ctime: no unprivileged call sets it (utimensat(2) sets mtime and
// atime, and sets ctime to now), and every change of a file's content, mode,
// owner or links sets it; a directory's ctime moves when an entry is
// created, removed or renamed in it, so a removal shows as its directory. No
// list of start-up files to keep up to date, and no snapshot: the walk
// compares each entry with one instant. POSIX only: openat(2), fstatat(2).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <ctime>
#include <string>
#include <vector>

#include "cordon/launch.h"

namespace cordon::vcs {

// The walk's bounds: past them a scan_incomplete finding names where it stopped.
inline constexpr std::uint64_t home_max_entries = 2000000;  // entries examined
inline constexpr std::size_t home_max_findings = 1000;       // home_file findings named; one more counts the rest
inline constexpr int home_time_budget_seconds = 30;
inline constexpr std::size_t home_max_depth = 64;  // levels below the home (one open directory each)

struct home_watch {
  std::string home;                   // absolute, resolved
  std::vector<std::string> excluded;  // absolute subtrees not walked
  timespec since{};                   // CLOCK_REALTIME when the plan was compiled
};

// The instant to compare with, taken now (CLOCK_REALTIME_COARSE: the clock
// the kernel stamps ctime from, so a change after this call is not earlier).
timespec home_watch_now();

// Appends one home_file finding per entry changed since `watch.since` (and
// scan_incomplete for what could not be walked), adds the entries examined
// to `evidence.entries`, and clears `evidence.complete` on any gap.
void home_changes_since(const home_watch& watch, deferred_execution_evidence& evidence);

}  // namespace cordon::vcs
