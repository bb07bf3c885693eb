// post_run_watch.h — the post-run repository scan of deferred execution
// (docs/deferred-execution.md), shared by both Linux backends: what the
// compile recorded under the writable roots, and the check after the run
// that turns every new or changed repository, gitlink, hook, executable
// config key or start-up path into a finding and a violation.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cordon/backend.h"
#include "cordon/launch.h"
#include "posix/home_watch.h"
#include "posix/vcs_scan.h"

namespace cordon::linux_impl {

// What a plan keeps for the check after the run (protect_vcs_metadata).
struct post_run_watch {
  // Paths that must still be absent (files that would redirect git).
  std::vector<std::string> watch_absent;
  // .gitmodules files absent at compile time: reported only if the command
  // creates one (docs/linux-backend.md, "Compile (in the calling process)").
  std::vector<std::string> watch_gitmodules;
  struct repository_scan {
    std::string root;
    vcs::vcs_scan before;
  };
  std::vector<repository_scan> repository_scans;  // one per scanned writable root
  std::string home;  // the caller's, for ~/ in git includes and the start-up paths
  // Where the scan's listings are kept between runs (posix/listing_store.h);
  // "" when they are not (no home, or the directory is not this user's own).
  std::string listing_store;
  // A writable home (a writable root holds it): watched whole after the run
  // (posix/home_watch.h), outside the writable roots inside it.
  std::optional<vcs::home_watch> home_watch;
};

// What one writable root's compile-time scan could not cover, said at
// compile time: past the entry bound a warning (no workspace is refused for
// its size; the report names it after the run), a configuration git would
// read and the scan cannot a blocker (`filesystem_deny`), any other gap a
// warning (a scan_incomplete finding after the run).
void report_scan_bounds(const std::string& root, const vcs::vcs_scan& scan, backend_build& out);

// Records one writable root's compile-time scan: its absent redirects and
// .gitmodules are watched, the scan is the "before" of the check.
void watch_repository_scan(const std::string& root, vcs::vcs_scan scan, post_run_watch& watch);

// A home inside (or equal to) one of `writable_roots` (resolved host paths)
// is watched whole after the run, except the writable roots inside it, which
// the repository scan covers, and the listing store (cordon rewrites it after
// each run). Nothing when the home is not writable.
void watch_writable_home(const std::string& home, const std::vector<std::string>& writable_roots,
                         post_run_watch& watch);

// After the run: scans every recorded root again, whole, and the watched
// home; each finding goes to outcome.deferred_execution (set whenever a root
// was scanned), outcome.violations (one per finding, of its kind) and one
// summary warning; then the new listings are saved in the listing store for
// the next run (a store that cannot be written only costs that run its
// reuse, so it is not reported); a root with a watch set in this process
// (linux/pool_watch.h) is checked from its listings, and
// deferred_execution.listings says how ("watch", or "walk" and why). Never
// fails: what cannot be seen is a scan_incomplete finding.
void check_repository_metadata(const post_run_watch& watch, run_outcome& outcome);

// In a prepared sandbox's helper whose host said so (the command line's
// "host_checks", src/supervisor/main.cpp): check_repository_metadata does
// nothing in this process from now on, because the pool's process, which
// holds a watch set of the roots, checks after the run from the plan it
// compiled for the command (linux/pool_watch.h, check_pooled_run). A helper
// runs one command.
void leave_repository_check_to_host();

}  // namespace cordon::linux_impl
