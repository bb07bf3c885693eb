// os_sandbox_landlock.h — the filesystem rules of the os_sandbox backend
// (docs/linux-backend.md, "Without namespaces"): the policy's roots as
// Landlock rules, with the precedence denied > protected > writable >
// readable kept by granting a root's children one by one.
//
// Landlock grants rights on hierarchies and cannot take a right back below a
// granted directory. So a root that holds a denied or protected path is not
// granted as a whole: each entry it holds at compile time is granted on its
// own, except the one on the way to the exception, which is split the same
// way; the directories on the way get only READ_DIR. What that costs: such a
// directory accepts no new entry (a file created there later, by the command
// or by the host, is neither creatable nor readable inside), and an entry of
// a split readable root that appears after compile is not readable inside.
#pragma once

#include <string>
#include <vector>

#include "cordon/host_facts.h"
#include "cordon/policy.h"
#include "cordon/result.h"
#include "linux/landlock.h"

namespace cordon::linux_impl {

// Largest directory split into per-entry rules; a larger one is refused.
inline constexpr std::size_t os_sandbox_max_split_entries = 4096;

struct os_sandbox_fs_rules {
  std::vector<landlock_path_rule> rules;  // resolved host paths, sorted, for apply_landlock
  std::vector<blocker> blockers;          // shapes Landlock cannot keep (filesystem_deny)
  std::vector<std::string> split;         // directories granted entry by entry (the report's detail)
  std::vector<std::string> notes;         // symlinks resolved, exceptions that needed nothing
};

// The rules for a normalized policy with tokens resolved. `extra_protected`:
// repository metadata to keep read-only (protect_vcs_metadata). The per-run
// temporary directory ({run_tmp}) is not here: it exists only at launch.
// Reads the filesystem (symlinks, directory entries). Never fails: what it
// cannot keep is a blocker.
os_sandbox_fs_rules build_os_sandbox_fs_rules(const sandbox_policy& normalized,
                                              const std::vector<std::string>& extra_protected);

}  // namespace cordon::linux_impl
