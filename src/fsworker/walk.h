// walk.h — directory walks for glob and grep: beneath a checked directory,
// every entry opened through the resolver, gitignore rules optional, glob
// patterns (docs/fs-worker.md, "Operations").
#pragma once

#include <sys/stat.h>

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "fsworker/ops.h"

namespace cordon::fsworker {

// `*` and `?` within one component, `[abc]`/`[a-z]`/`[!x]` classes, `**` as
// a whole component for any number of components, `{a,b}` alternatives.
// Linear in practice: one backtracking point per component.
bool glob_matches(std::string_view pattern, std::string_view path);
// The alternatives of a pattern's `{a,b}` groups (at most 256).
std::vector<std::string> expand_braces(const std::string& pattern);

struct walk_entry {
  std::string relative;  // from the walk's base
  std::string absolute;
  int dir_fd = -1;       // the directory that holds it
  std::string name;
  struct stat st {};
};

struct walk_counts {
  std::uint64_t skipped_non_utf8 = 0;
  std::uint64_t skipped_refused = 0;   // denied, other mounts, unreadable directories
  std::uint64_t skipped_ignored = 0;   // gitignore
};

// Calls `visit` for every entry (directories before their contents, names
// sorted); `visit` returns false to stop. Directories deeper than
// `max_depth` are not entered. Errors: deadline_exceeded, and those of
// opening the base.
fs_status walk_tree(op_context& ctx, const checked_path& base, bool gitignore, std::size_t max_depth,
                    walk_counts& counts, const std::function<bool(const walk_entry&)>& visit);

}  // namespace cordon::fsworker
