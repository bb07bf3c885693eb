// pool_watch.h — the inotify watch sets a pool's process holds, one per
// writable root (docs/deferred-execution.md, "The pool's watch sets"), and
// the scans that use them: the compile's repository scan and the post-run
// check of a root with a set registered here take their listings from it
// (linux/watched_scan.h); every other root, and every root of a process
// that holds no set (a helper, a `cordon run`), is walked as before. The
// limit decides the shape: fs.inotify.max_user_watches (192,540 here) holds
// one set of 150,000 directories, not two, so there is one set per root in
// this process, shared by every pool of it, never one per sandbox.
#pragma once

#include <memory>
#include <string>

#include "cordon/launch.h"
#include "cordon/plan.h"
#include "posix/vcs_scan.h"

namespace cordon::linux_impl {

// The repository scan of `root` (resolved) at compile time: from the set
// registered for it, else vcs::scan_vcs_metadata with the listing store
// `store_dir`. `how`: "watch", or "walk" (no set) or "walk: <the set's doubt>".
vcs::vcs_scan scan_writable_root(const std::string& root, const std::string& home, const std::string& store_dir,
                                 std::string& how);

// The post-run check of `root` against `before`, taken the same way.
void check_writable_root(const std::string& root, const vcs::vcs_scan& before, const std::string& home,
                         deferred_execution_evidence& evidence, const std::string& store_dir, std::string& how);

// core::pool_scan_hooks::open: a set for each writable root `plan` scans
// that has none in this process yet (a root whose set cannot be opened
// whole is not registered: it is walked). The holder keeps them registered;
// the last holder of a root gone, its set is closed.
std::shared_ptr<void> open_pool_watches(const sandbox_plan& plan);

// core::pool_scan_hooks::repair: each root `holder` (open_pool_watches')
// holds whose set is in doubt gets a new set (the old one closed first:
// the watch limit holds one set of a large root, not two; scans of that
// root walk while it is listed); a root whose new set cannot vouch for
// the tree stays without one, and is walked.
void repair_pool_watches(const void* holder);

// core::pool_scan_hooks::check: check_repository_metadata for `plan`'s
// payload, in this process (its registered sets used).
void check_pooled_run(const sandbox_plan& plan, run_outcome& outcome);

// Sets core::process_pool_scan_hooks() to the two above (the Linux backends' constructors).
void install_pool_scan_hooks();

}  // namespace cordon::linux_impl
