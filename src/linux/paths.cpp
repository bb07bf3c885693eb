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
#include "core/git_config.h"

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
  long direct = ::syscall(SYS_openat2, AT_FDCWD, path.c_str(), &how, sizeof how);
  if (direct >= 0) {
    struct stat st {};
    bool ok = ::fstat(static_cast<int>(direct), &st) == 0;
    ::close(static_cast<int>(direct));
    if (ok) {
      out = path;
      is_directory = S_ISDIR(st.st_mode);
      return true;
    }
  } else if (errno == ENOENT || errno == ENOTDIR) {
    return false;
  }
  int fd = ::open(path.c_str(), O_PATH | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st {};
  bool ok = ::fstat(fd, &st) == 0;
  char link[64];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  char buffer[PATH_MAX];
  ssize_t n = ok ? ::readlink(link, buffer, sizeof buffer - 1) : -1;
  ::close(fd);
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

namespace {

bool lstat_kind(const std::string& path, mode_t& mode) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return false;
  mode = st.st_mode;
  return true;
}

// core.hooksPath of a repository's own config (git-config(1)): hooks then run
// from there instead of .git/hooks, so that directory needs the same
// protection. A config that includes other files cannot be checked here and
// is reported as missing protection (fail closed).
void protect_hooks_path(const std::string& git_dir, vcs_scan& scan) {
  for (const auto& line : core::read_git_config(git_dir + "/config")) {
    if (line.header) {
      if (line.section.rfind("include", 0) == 0) {
        scan.missing.push_back(git_dir + "/config (its [" + line.section + "] section names other config files)");
      }
      continue;
    }
    if (line.section != "core" || line.key != "hookspath") continue;
    const std::string& value = line.value;
    if (value.empty()) continue;
    std::string top = git_dir.substr(0, git_dir.find_last_of('/'));
    std::string path = value[0] == '/' ? value : top + "/" + value;
    mode_t mode = 0;
    if (value[0] == '~' || !lstat_kind(path, mode)) {
      scan.missing.push_back(path + " (core.hooksPath of " + git_dir + ")");
    } else {
      scan.protect.push_back(path);
    }
  }
}

void protect_git_dir(const std::string& git_dir, vcs_scan& scan, int depth) {
  protect_hooks_path(git_dir, scan);
  mode_t mode = 0;
  for (const char* name : {"hooks", "config"}) {
    std::string p = git_dir + "/" + name;
    if (lstat_kind(p, mode)) {
      scan.protect.push_back(p);
    } else {
      scan.missing.push_back(p);
    }
  }
  // gitrepository-layout(5): "commondir" moves config and hooks elsewhere;
  // "config.worktree" adds config when extensions.worktreeConfig is set.
  for (const char* name : {"commondir", "config.worktree"}) {
    std::string p = git_dir + "/" + name;
    if (lstat_kind(p, mode)) {
      scan.protect.push_back(p);
    } else {
      scan.absent_redirects.push_back(p);
    }
  }
  // Submodules keep their own hooks and config under .git/modules/<name>/.
  if (depth > 8) return;
  std::string modules = git_dir + "/modules";
  DIR* dir = ::opendir(modules.c_str());
  if (dir == nullptr) return;
  while (dirent* entry = ::readdir(dir)) {
    std::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    std::string sub = modules + "/" + entry->d_name;
    if (lstat_kind(sub, mode) && S_ISDIR(mode) && lstat_kind(sub + "/config", mode)) {
      protect_git_dir(sub, scan, depth + 1);
    }
  }
  ::closedir(dir);
}

void walk(const std::string& dir_path, vcs_scan& scan, std::uint64_t max_entries) {
  DIR* dir = ::opendir(dir_path.c_str());
  if (dir == nullptr) return;
  struct stat self {};
  if (::fstat(::dirfd(dir), &self) == 0) {
    scan.directories.push_back({dir_path, self.st_dev, self.st_ino, self.st_mtim});
  }
  std::vector<std::string> subdirs;
  while (dirent* entry = ::readdir(dir)) {
    std::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    std::string child = dir_path == "/" ? "/" + std::string(name) : dir_path + "/" + std::string(name);
    mode_t mode = 0;
    bool is_dir = entry->d_type == DT_DIR;
    if (entry->d_type == DT_UNKNOWN && lstat_kind(child, mode)) is_dir = S_ISDIR(mode);
    if (name == ".git") {
      scan.repositories.push_back(child);
      if (is_dir) {
        protect_git_dir(child, scan, 0);
      } else {
        scan.protect.push_back(child);  // a gitdir pointer must not be redirected
      }
      std::string gitmodules = dir_path + "/.gitmodules";
      if (lstat_kind(gitmodules, mode)) {
        scan.protect.push_back(gitmodules);
      } else {
        scan.absent_gitmodules.push_back(gitmodules);
      }
      continue;
    }
    if (is_dir) {
      if (++scan.entries_seen > max_entries) {
        scan.truncated = true;
        break;
      }
      subdirs.push_back(std::move(child));
    }
  }
  ::closedir(dir);
  for (const auto& sub : subdirs) {
    if (scan.truncated) return;
    walk(sub, scan, max_entries);
  }
}

}  // namespace

vcs_scan scan_vcs_metadata(const std::string& root, std::uint64_t max_entries) {
  vcs_scan scan;
  walk(root, scan, max_entries);
  return scan;
}

void scan_git_directory(const std::string& git_dir, vcs_scan& scan) { protect_git_dir(git_dir, scan, 0); }

std::vector<std::string> repositories_created_since(const vcs_scan& before, std::uint64_t max_entries) {
  std::set<std::string, std::less<>> known_dirs, known_repos(before.repositories.begin(), before.repositories.end());
  for (const auto& d : before.directories) known_dirs.insert(d.path);
  std::vector<std::string> created;
  for (const auto& d : before.directories) {
    struct stat st {};
    if (::lstat(d.path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
    if (st.st_dev == d.device && st.st_ino == d.inode && st.st_mtim.tv_sec == d.modified.tv_sec &&
        st.st_mtim.tv_nsec == d.modified.tv_nsec) {
      continue;
    }
    DIR* dir = ::opendir(d.path.c_str());
    if (dir == nullptr) continue;
    std::vector<std::string> new_dirs;
    while (dirent* entry = ::readdir(dir)) {
      std::string_view name = entry->d_name;
      if (name == "." || name == "..") continue;
      std::string child = d.path == "/" ? "/" + std::string(name) : d.path + "/" + std::string(name);
      mode_t mode = 0;
      bool is_dir = entry->d_type == DT_DIR;
      if (entry->d_type == DT_UNKNOWN && lstat_kind(child, mode)) is_dir = S_ISDIR(mode);
      if (name == ".git") {
        if (known_repos.find(child) == known_repos.end()) created.push_back(child);
      } else if (is_dir && known_dirs.find(child) == known_dirs.end()) {
        new_dirs.push_back(std::move(child));
      }
    }
    ::closedir(dir);
    for (const auto& fresh : new_dirs) {
      vcs_scan inside = scan_vcs_metadata(fresh, max_entries);
      created.insert(created.end(), inside.repositories.begin(), inside.repositories.end());
    }
  }
  return created;
}

}  // namespace cordon::linux_impl
