// resolver.h — every path the worker touches, resolved from a directory
// descriptor beneath a root (docs/fs-worker.md, "Path resolution").
//
// Two layers, the first only to name the rule and refuse early:
//  1. lexical: the path is UTF-8, has no ".." and no NUL, lies under one of
//     the plan's roots, and the plan's innermost mount over it allows the
//     access (a mask is `denied`, a protected or vcs bind is `protected`, a
//     read-only bind is `read_only`); a case variant of a denied or protected
//     path is refused as `case_variant`.
//  2. the kernel: openat2(root_fd, rest, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS
//     | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV). A crossing into another
//     mount is retried one component at a time and accepted only onto a
//     mount the plan made (its mount point is in the plan's table). Where
//     the sandbox refuses openat2 (root callers), the same walk with
//     O_NOFOLLOW and a mount-id check per component. The sandbox's own
//     mounts and Landlock still apply underneath.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "fsworker/fs_error.h"
#include "fsworker/worker_config.h"
#include "posix/unique_fd.h"

namespace cordon::fsworker {

enum class access_kind { read, write };

struct root_dir {
  std::string path;  // absolute, normalized
  bool writable = false;
  unique_fd fd;      // O_PATH | O_DIRECTORY
};

// A path checked lexically: the root it lies under and the rest of it.
struct checked_path {
  const root_dir* root = nullptr;
  std::string absolute;  // normalized: no ".", "..", repeated or trailing "/"
  std::string relative;  // from the root; "" for the root itself
};

class resolver {
 public:
  // Opens every root the plan's mount table makes (writable and readable
  // binds, the private /tmp, the host root of a full read) and reads the
  // mount ids of the plan's mounts from /proc/self/mountinfo.
  static fs_result<resolver> open(const worker_config& config);

  // Layer 1 (see the file comment). `path` is absolute, or relative to the
  // workspace. Errors: path_invalid, path_escape, outside_roots, denied,
  // protected, read_only, case_variant.
  fs_result<checked_path> check(std::string_view path, access_kind access) const;

  // Layer 2: opens a checked path. `flags` as for open(2) (O_NOFOLLOW is
  // implied). Errors (from errno): symlink (ELOOP), not_found, cross_device
  // (a mount the plan did not make), permission_denied, read_only (EROFS),
  // not_a_directory, is_directory, already_exists, io_error.
  fs_result<unique_fd> open(const checked_path& path, int flags, mode_t mode = 0) const;

  // Opens the directory that holds a checked path, and gives the last
  // component. The path must not be a root.
  fs_result<unique_fd> open_parent(const checked_path& path, std::string& name) const;

  // One entry of an open directory (walks: list, glob, grep): the same
  // kernel flags and mount check, and layer 1 for `absolute`.
  fs_result<unique_fd> open_child(int dir_fd, std::string_view name, const std::string& absolute, int flags) const;

  // The stable code of an errno from an open, e.g. ELOOP -> "symlink".
  static fs_error from_errno(int err, const std::string& what, const std::string& path);

  const std::vector<root_dir>& roots() const noexcept { return roots_; }
  const std::string& workspace() const noexcept { return workspace_; }
  // The mount id of an open descriptor (statx STATX_MNT_ID), 0 when unknown.
  static std::uint64_t mount_id(int fd) noexcept;
  bool is_plan_mount(std::uint64_t id) const noexcept { return plan_mount_ids_.count(id) != 0; }
  // "openat2", or "openat-walk" once openat2 was refused (ENOSYS: the
  // sandbox of a root caller refuses it, docs/seccomp.md) and every path is
  // resolved one O_NOFOLLOW component at a time with the same mount check.
  static const char* method() noexcept;

 private:
  // One component: a descriptor or -1 with errno (ELOOP for a symlink,
  // EXDEV for a mount the plan did not make).
  long step(int dir_fd, const std::string& name, int flags, mode_t mode, bool last) const;
  fs_result<unique_fd> walk_components(const root_dir& root, const std::string& relative, int flags,
                                       mode_t mode) const;
  std::vector<root_dir> roots_;
  std::vector<plan_mount> mounts_;
  std::set<std::uint64_t> plan_mount_ids_;
  std::string workspace_;
};

// Lexical normalization (shared with the tests): drops "." and repeated
// slashes; refuses "..", NUL and non-UTF-8. `base` prefixes a relative path.
fs_result<std::string> normalize_path(std::string_view path, const std::string& base);
bool is_valid_utf8(std::string_view text) noexcept;
// `path` equals `prefix` or lies beneath it (component-wise).
bool path_within(std::string_view path, std::string_view prefix) noexcept;

}  // namespace cordon::fsworker
