// mount_table.h — the fresh root a plan builds from bind mounts.
//
// Computed at compile time (so tests can check the exact table, and launch
// does no path logic), applied at launch inside the new mount namespace.
// Precedence (docs/policy.md): denied > protected read-only > writable > readable
// > platform default. It is preserved by mounting in that order, least
// precedent first and shallowest first within a class: a later mount covers
// everything an earlier one put beneath it.
#pragma once

#include <string>
#include <vector>

#include "cordon/backend.h"
#include "cordon/policy.h"
#include "linux/landlock.h"
#include "linux/mount_by_fd.h"

namespace cordon::linux_impl {

enum class mount_kind {
  bind_read_only,  // recursive bind, then read-only, nosuid (nodev outside /dev)
  bind_writable,   // recursive bind, nosuid (nodev outside /dev)
  private_tmpfs,   // a new, empty, writable tmpfs (the private /tmp)
  mask,            // at launch: a directory gets an empty read-only mode-000 tmpfs,
                   // anything else an empty mode-000 file; absent: nothing
  symlink,         // restricted root only: recreate a top-level symlink (/bin -> usr/bin)
  seal_read_only,  // last: a directory of the private /tmp that only leads to mounted roots,
                   // bound onto itself with them and made read-only (linux/private_tmp.h)
};

struct mount_op {
  mount_kind kind = mount_kind::bind_read_only;
  std::string path;         // where it appears inside the sandbox (== host path)
  std::string link_target;  // symlink only
  bool directory = true;    // the source is a directory (false: a file)
  std::string why;          // "platform default", "readable", "writable", "protected", "denied", "vcs", "device"
                            // (only "device" binds keep device nodes usable: filesystem.devices)
  file_identity source_identity{};  // binds: the source as the plan saw it (linux/mount_by_fd.h)
};

struct mount_table {
  bool full_root = false;    // read = full: the host root, read-only, is the base
  bool private_tmp = false;  // "{run_tmp}" is writable: a private tmpfs at /tmp
  std::vector<mount_op> ops; // applied in order after the base, /proc and /dev
  std::vector<std::string> skipped;  // entries that needed no mount, with the reason
};

struct mount_table_input {
  const sandbox_policy* policy = nullptr;  // normalized, tokens resolved except {run_tmp}
  std::vector<std::string> vcs_protected;  // from scan_vcs_metadata
};

struct mount_table_result {
  mount_table table;
  std::vector<blocker> blockers;  // paths the table cannot hold (e.g. a denied path that
                                  // does not exist but could be created in a writable root)
  std::vector<std::string> notes; // e.g. "policy path /a resolved through a symlink to /b"
};

// Builds the mount table. Paths are resolved on the host (symlinks followed
// once, here). Never touches the filesystem beyond lstat/realpath.
mount_table_result build_mount_table(const mount_table_input& input);

// The platform default roots for a restricted read (existing ones only).
std::vector<std::string> platform_default_roots();

// Landlock rules matching the table: read for readable roots and platform
// defaults (or "/" for a full read), read_write for writable ones, device for
// /dev and /proc.
std::vector<landlock_path_rule> landlock_rules_for(const mount_table& table);

// One line per mount for the report, in the order they are applied, including
// the base, /proc and /dev.
std::vector<std::string> describe_mounts(const mount_table& table);

}  // namespace cordon::linux_impl
