#include "linux/paths.h"

#include <dirent.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <climits>
#include <fstream>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <set>
#include <string_view>

#include "cordon/policy.h"
#include "posix/unique_fd.h"

namespace cordon::linux_impl {

namespace {

// The kernel's own resolution of an existing path, in one walk: open it
// O_PATH and read the descriptor's link in /proc (glibc's realpath(3) instead
// calls readlink(2) once per component, which dominates compile time for
// policies with many deep paths).
bool kernel_realpath(const std::string& path, std::string& out, bool& is_directory) {
  // Most policy paths contain no symlink at all: then the (already
  // lexically normalized) path is its own real path, and one openat2(2) with
  // RESOLVE_NO_SYMLINKS proves it without asking /proc.
  open_how how{};
  how.flags = O_PATH | O_CLOEXEC;
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  unique_fd direct(static_cast<int>(::syscall(SYS_openat2, AT_FDCWD, path.c_str(), &how, sizeof how)));
  if (direct) {
    struct stat st {};
    bool ok = ::fstat(direct.get(), &st) == 0;
    direct.reset();
    if (ok) {
      out = path;
      is_directory = S_ISDIR(st.st_mode);
      return true;
    }
  } else if (errno == ENOENT || errno == ENOTDIR) {
    return false;
  }
  unique_fd fd(::open(path.c_str(), O_PATH | O_CLOEXEC));
  if (!fd) return false;
  struct stat st {};
  bool ok = ::fstat(fd.get(), &st) == 0;
  char link[64];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd.get());
  char buffer[PATH_MAX];
  ssize_t n = ok ? ::readlink(link, buffer, sizeof buffer - 1) : -1;
  fd.reset();
  if (n <= 0 || buffer[0] != '/') {
    // No /proc, or a path the kernel cannot name: fall back to the library.
    if (!ok || ::realpath(path.c_str(), buffer) == nullptr) return false;
    n = static_cast<ssize_t>(std::strlen(buffer));
  }
  out.assign(buffer, static_cast<std::size_t>(n));
  is_directory = S_ISDIR(st.st_mode);
  return true;
}

}  // namespace

resolved_path resolve_on_host(const std::string& absolute) {
  resolved_path out;
  // Walk back to the longest prefix that exists, resolve it, re-append the rest.
  std::string prefix = absolute;
  std::string rest;
  while (true) {
    std::string resolved;
    bool is_directory = false;
    if (kernel_realpath(prefix, resolved, is_directory)) {
      if (!rest.empty()) resolved = (resolved == "/" ? "" : resolved) + rest;
      out.path = resolved;
      out.exists = rest.empty();
      out.is_directory = out.exists && is_directory;
      break;
    }
    auto slash = prefix.find_last_of('/');
    if (slash == std::string::npos || prefix == "/") {
      out.path = absolute;
      break;
    }
    rest = prefix.substr(slash) + rest;
    prefix = slash == 0 ? "/" : prefix.substr(0, slash);
  }
  out.was_symlink = out.path != absolute;
  return out;
}

host_path_resolver::~host_path_resolver() {
  for (auto& [path, parent] : parents_) {
    if (parent.fd >= 0) ::close(parent.fd);
  }
}

resolved_path host_path_resolver::resolve(const std::string& absolute) {
  auto slash = absolute.find_last_of('/');
  if (slash == std::string::npos || slash == 0 || absolute.size() == slash + 1) return resolve_on_host(absolute);
  std::string parent_path = absolute.substr(0, slash);
  auto it = parents_.find(parent_path);
  if (it == parents_.end()) {
    parent_dir dir;
    dir.resolved = resolve_on_host(parent_path);
    if (dir.resolved.exists && dir.resolved.is_directory) {
      dir.fd = ::open(dir.resolved.path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    }
    it = parents_.emplace(parent_path, std::move(dir)).first;
  }
  const resolved_path& parent = it->second.resolved;
  if (it->second.fd < 0) return resolve_on_host(absolute);
  std::string leaf = absolute.substr(slash);  // "/name"
  struct stat st {};
  if (::fstatat(it->second.fd, leaf.c_str() + 1, &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno != ENOENT) return resolve_on_host(absolute);
    resolved_path out;
    out.path = (parent.path == "/" ? "" : parent.path) + leaf;
    out.was_symlink = out.path != absolute;
    return out;
  }
  if (S_ISLNK(st.st_mode)) return resolve_on_host(absolute);
  resolved_path out;
  out.path = (parent.path == "/" ? "" : parent.path) + leaf;
  out.exists = true;
  out.is_directory = S_ISDIR(st.st_mode);
  out.was_symlink = out.path != absolute;
  return out;
}

bool path_is_within(const std::string& path, const std::string& root) {
  if (root == "/") return !path.empty() && path[0] == '/';
  if (path.size() < root.size() || path.compare(0, root.size(), root) != 0) return false;
  return path.size() == root.size() || path[root.size()] == '/';
}

std::size_t path_depth(const std::string& path) {
  std::size_t depth = 0;
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (path[i] == '/' && i + 1 < path.size()) ++depth;
  }
  return depth;
}

}  // namespace cordon::linux_impl
