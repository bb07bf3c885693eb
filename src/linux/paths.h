// paths.h — compile-time path facts (root tokens are core's: src/core/tokens.h): symlink resolution,
// containment.
#pragma once

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

// The repository scanner (scan_vcs_metadata and the post-run check) is
// POSIX: posix/vcs_scan.h.

}  // namespace cordon::linux_impl
