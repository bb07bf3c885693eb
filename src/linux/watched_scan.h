// watched_scan.h — the repository scan of one writable root with its
// directory listings taken from an inotify watch set kept current
// (linux/directory_watch.h) instead of a walk (docs/deferred-execution.md,
// "Why a pooled run is no cheaper than a cold one"): no directory is
// examined or read, and everything git reads in each repository found is
// stamped as in any scan (a write through a shared mmap(2) raises no
// event). When the set's refresh() listed no directory again since the last
// scan from it, the repositories are found again where that scan found them
// (vcs::rescan_places: no walk at all). Whenever the set is in doubt (the
// kernel dropped events, a watch was refused, a directory could not be
// listed, ...), the scan is the full walk, and `how` says why. A pool's
// process calls it at each request's compile and after each run
// (linux/pool_watch.h). Linux only.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cordon/launch.h"
#include "linux/directory_watch.h"
#include "posix/vcs_scan.h"

namespace cordon::linux_impl {

// A watch set and what the last scan from it found (its places and the
// directories it saw), for the next scan when nothing was listed again.
struct watched_root {
  directory_watch set;
  vcs::vcs_scan last;  // only its places and entries_seen are kept
  bool known = false;  // `last` is from the set, and nothing was listed again since
  // Runs vcs::rescan_places elsewhere (a pool's scan server,
  // linux/scan_server.h); nullopt, or unset: here.
  std::function<std::optional<vcs::vcs_scan>(const std::string& root, const std::string& home,
                                             const vcs::vcs_scan& earlier)>
      rescan_elsewhere;
};

// How a scan took its listings: "watch" (from the set: its listings, or the
// last scan's places when no directory changed), or "walk: <why>" (the
// set's doubt; every directory examined, as a scan without a set).
using listings_taken = std::string;

// Refreshes the set and scans its root as vcs::scan_vcs_metadata does (in
// the same memory-bounded child, `home` as there): from the set when it
// leaves no doubt (the listing store is then neither read nor written),
// else the full walk with `store_dir` (posix/listing_store.h, "" for none).
// `how` receives how the listings were taken. Never fails: what the walk
// cannot see is a gap of the scan, as in any scan.
vcs::vcs_scan watched_scan(watched_root& root, const std::string& home, const std::string& store_dir,
                           listings_taken& how);

// The post-run check of the root (vcs::changes_since) against `before`,
// with the scan after the run taken as watched_scan takes it.
void watched_changes_since(watched_root& root, const vcs::vcs_scan& before, const std::string& home,
                           deferred_execution_evidence& evidence, const std::string& store_dir,
                           listings_taken& how);

}  // namespace cordon::linux_impl
