// pool_scan_hooks.h — what a prepared pool (posix/prepared.cpp) asks the
// host backend for so that a pooled call pays no walk of the workspace
// (docs/deferred-execution.md, "The pool's watch sets"). Core cannot call a
// backend's internals; the Linux backends install these when they are made
// (a plan comes only from a backend, so any pool of a Linux plan finds them
// set). Unset (other platforms): a pool keeps nothing, and every pooled run
// is checked by its helper, as a cold run.
#pragma once

#include <atomic>
#include <memory>

#include "cordon/launch.h"
#include "cordon/plan.h"

namespace cordon::core {

struct pool_scan_hooks {
  // Starts keeping the directory listings of `plan`'s writable roots current
  // in this process (Linux: an inotify watch set per root), for every
  // compile and post-run check made here while the returned holder lives.
  // Slow (it lists every directory): a pool calls it in its refill thread.
  // nullptr: nothing is kept (each scan walks).
  using open_fn = std::shared_ptr<void> (*)(const sandbox_plan& plan);
  std::atomic<open_fn> open{nullptr};
  // The post-run check of deferred execution of a command run with `plan`
  // (compiled in this process just before the command started), into
  // `outcome` exactly as the run's helper would make it. Never fails: a set
  // in doubt, or none, is the full walk.
  using check_fn = void (*)(const sandbox_plan& plan, run_outcome& outcome);
  std::atomic<check_fn> check{nullptr};
  // Opens again what `open`'s holder keeps for a root and can no longer
  // vouch for (Linux: a set in doubt: the kernel dropped events, a watch
  // was refused, ...), so that the calls after the next refill take the
  // sets again instead of walking. Slow for such a root (it lists every
  // directory): a pool calls it in its refill thread, before preparing.
  using repair_fn = void (*)(const void* holder);
  std::atomic<repair_fn> repair{nullptr};
};

// This process's hooks (set once by a backend's constructor; read by pools).
pool_scan_hooks& process_pool_scan_hooks();

}  // namespace cordon::core
