// paths.h — compile-time path facts (root tokens are core's: src/core/tokens.h): symlink resolution,
// containment, and discovery of repositories whose metadata must be protected.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cordon/result.h"

namespace cordon::linux_impl {

// Resolves symlinks in the longest existing prefix of an absolute path and
// appends the missing rest unchanged (realpath(3) semantics for the prefix).
// `exists` tells whether the whole path exists.
struct resolved_path {
  std::string path;
  bool exists = false;
  bool is_directory = false;
  bool was_symlink = false;  // the resolved path differs from the input
};
resolved_path resolve_on_host(const std::string& absolute);

// resolve_on_host for many paths: each parent directory is resolved once,
// then each path costs one lstat(2) when its last component is not a symlink
// (policies list hundreds of entries under the same few directories).
class host_path_resolver {
 public:
  host_path_resolver() = default;
  host_path_resolver(const host_path_resolver&) = delete;
  host_path_resolver& operator=(const host_path_resolver&) = delete;
  ~host_path_resolver();
  resolved_path resolve(const std::string& absolute);

 private:
  struct parent_dir {
    resolved_path resolved;
    int fd = -1;  // O_PATH descriptor: the leaf is looked up from here, one component
  };
  std::map<std::string, parent_dir, std::less<>> parents_;
};

// True when `path` is `root` or lies beneath it (component-wise).
bool path_is_within(const std::string& path, const std::string& root);

// Number of components of an absolute path ("/" = 0, "/a/b" = 2).
std::size_t path_depth(const std::string& path);

// Repository metadata to protect under one writable root: for every `.git`
// directory, its hooks/ and config (and those of .git/modules/*), and the
// `.gitmodules` beside it; for every `.git` file (worktree or submodule
// pointer), the file itself. Stops with an error (enforcement is then
// impossible) after visiting `max_entries` directories.
struct vcs_scan {
  std::vector<std::string> protect;  // existing paths to re-bind read-only
  std::vector<std::string> missing;  // hooks/ or config that should exist but do not
  std::vector<std::string> absent_gitmodules;  // repositories without a .gitmodules
  // Files git would follow to other config and hooks (commondir,
  // config.worktree) that do not exist: a mount cannot cover them, so the
  // launcher checks after the run whether the command created them.
  std::vector<std::string> absent_redirects;
  std::vector<std::string> repositories;       // every .git found (directory or file)
  struct directory_stamp {
    std::string path;
    dev_t device = 0;
    ino_t inode = 0;
    timespec modified{};
  };
  std::vector<directory_stamp> directories;    // every directory walked, as it was
  std::uint64_t entries_seen = 0;  // directories visited
  bool truncated = false;
};
vcs_scan scan_vcs_metadata(const std::string& root, std::uint64_t max_entries);

// The protections of one git directory found some other way (the common
// directory of a linked worktree, linux/git_worktrees.h): its hooks/, config,
// core.hooksPath, commondir, config.worktree and .git/modules/*, added to
// `scan` exactly as scan_vcs_metadata() adds them for a .git directory.
void scan_git_directory(const std::string& git_dir, vcs_scan& scan);

// The ".git" entries that appeared beneath the scanned root since `before`
// was taken. Only directories whose modification time (or identity) changed
// are read again, and directories that did not exist are walked whole: a new
// entry always changes its parent's mtime, so a run that touched nothing costs
// one stat(2) per directory instead of a second full walk.
std::vector<std::string> repositories_created_since(const vcs_scan& before, std::uint64_t max_entries);

}  // namespace cordon::linux_impl
