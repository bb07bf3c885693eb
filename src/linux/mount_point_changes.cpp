// mount_point_changes.cpp — EROFS, and a violation, for a rename or removal
// of a protected path (mount_point_changes.h).
#include "linux/mount_point_changes.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <linux/stat.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "linux/caller_paths.h"
#include "posix/unique_fd.h"

namespace cordon::linux_impl {
namespace {

struct path_argument {
  int dirfd = AT_FDCWD;
  std::uint64_t address = 0;
};

// The paths a call renames, replaces or removes.
std::vector<path_argument> path_arguments(const seccomp_notif& request) {
  const auto& a = request.data.args;
  const auto nr = request.data.nr;
#ifdef SYS_rename
  if (nr == SYS_rename) return {{AT_FDCWD, a[0]}, {AT_FDCWD, a[1]}};
#endif
#ifdef SYS_unlink
  if (nr == SYS_unlink) return {{AT_FDCWD, a[0]}};
#endif
#ifdef SYS_rmdir
  if (nr == SYS_rmdir) return {{AT_FDCWD, a[0]}};
#endif
#ifdef SYS_renameat
  if (nr == SYS_renameat) return {{caller_dirfd(a[0]), a[1]}, {caller_dirfd(a[2]), a[3]}};
#endif
  if (nr == SYS_renameat2) return {{caller_dirfd(a[0]), a[1]}, {caller_dirfd(a[2]), a[3]}};
  if (nr == SYS_unlinkat) return {{caller_dirfd(a[0]), a[1]}};
  return {};
}

std::optional<std::uint64_t> mount_id(int dirfd, const char* name, int flags) {
  struct statx st {};
  if (::statx(dirfd, name, flags | AT_NO_AUTOMOUNT, STATX_MNT_ID, &st) != 0) return std::nullopt;
  if ((st.stx_mask & STATX_MNT_ID) == 0) return std::nullopt;
  return st.stx_mnt_id;
}

// The path's last component ("" for none: "/", ".", "..").
std::string last_component(std::string p) {
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  const auto slash = p.rfind('/');
  std::string last = slash == std::string::npos ? p : p.substr(slash + 1);
  return last == "." || last == ".." ? std::string() : last;
}

// The directory a path's last component is in, resolved as the caller sees
// it, and that component.
struct parent_and_last {
  unique_fd dir;
  std::string last;
};

std::optional<parent_and_last> open_parent(int start, const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  const auto slash = p.rfind('/');
  const std::string parent = slash == std::string::npos ? "." : slash == 0 ? "/" : p.substr(0, slash);
  std::string last = slash == std::string::npos ? p : p.substr(slash + 1);
  if (last.empty() || last == "." || last == "..") return std::nullopt;
  unique_fd dir(open_beneath(start, parent, O_DIRECTORY, path.front() == '/' ? RESOLVE_IN_ROOT : RESOLVE_BENEATH));
  if (!dir) return std::nullopt;
  return parent_and_last{std::move(dir), std::move(last)};
}

// The mount id of the last component when it is a mount point.
std::optional<std::uint64_t> mount_point_id(const parent_and_last& at) {
  const auto own = mount_id(at.dir.get(), at.last.c_str(), AT_SYMLINK_NOFOLLOW);
  const auto above = mount_id(at.dir.get(), "", AT_EMPTY_PATH);
  if (!own || !above || *own == *above) return std::nullopt;
  return own;
}

// linux-os-sandbox: the path in the caller's view when it is one of `paths`.
std::optional<std::string> protected_change_path(const parent_and_last& at, const std::vector<std::string>& paths) {
  const std::string dir = descriptor_path(at.dir.get());
  if (dir.empty()) return std::nullopt;
  const std::string where = (dir == "/" ? "" : dir) + "/" + at.last;
  if (std::find(paths.begin(), paths.end(), where) == paths.end()) return std::nullopt;
  return where;
}

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string unescape_mountinfo(const std::string& field) {
  std::string out;
  for (std::size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '\\' && i + 3 < field.size()) {
      const std::string digits = field.substr(i + 1, 3);
      if (digits.size() == 3 && digits.find_first_not_of("01234567") == std::string::npos) {
        out += static_cast<char>(std::stoi(digits, nullptr, 8));
        i += 3;
        continue;
      }
    }
    out += field[i];
  }
  return out;
}

// The mount point of mount `id` as the caller sees it (/proc/PID/mountinfo,
// field 5), or `fallback` when it is not listed.
std::string mount_point_path(pid_t pid, std::uint64_t id, const std::string& fallback) {
  std::ifstream info("/proc/" + std::to_string(pid) + "/mountinfo");
  std::string line;
  while (std::getline(info, line)) {
    std::istringstream fields(line);
    std::uint64_t mount = 0;
    std::string parent, device, root, point;
    if (!(fields >> mount >> parent >> device >> root >> point)) continue;
    if (mount == id) return unescape_mountinfo(point);
  }
  return fallback;
}

}  // namespace

bool is_mount_point_change(int syscall_nr) noexcept {
  switch (syscall_nr) {
#ifdef SYS_rename
    case SYS_rename:
#endif
#ifdef SYS_unlink
    case SYS_unlink:
#endif
#ifdef SYS_rmdir
    case SYS_rmdir:
#endif
#ifdef SYS_renameat
    case SYS_renameat:
#endif
    case SYS_renameat2:
    case SYS_unlinkat: return true;
    default: return false;
  }
}

void answer_mount_point_change(int listener_fd, const seccomp_notif& request, seccomp_notif_resp& response,
                               const seccomp_program& program, violation_log& log) {
  response.error = 0;
  response.val = 0;
  response.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
  const auto& names = program.mount_point_names;
  const auto pid = static_cast<pid_t>(request.pid);
  for (const auto& argument : path_arguments(request)) {
    const auto path = read_caller_path(pid, argument.address);
    if (!path || path->empty()) continue;
    // No mount point of the plan has this name: nothing to look up.
    if (std::find(names.begin(), names.end(), last_component(*path)) == names.end()) continue;
    unique_fd start = caller_start_directory(pid, argument.dirfd, *path);
    // Opened from /proc/PID: only trusted while the caller still waits in
    // this call, so that PID was not reused (seccomp_unotify(2)).
    if (!start || !notification_still_valid(listener_fd, request)) continue;
    const auto at = open_parent(start.get(), *path);
    if (!at) continue;
    std::string where;
    if (program.protected_by_landlock) {
      const auto found = protected_change_path(*at, program.protected_change_paths);
      if (!found || !notification_still_valid(listener_fd, request)) continue;
      where = *found;
    } else {
      const auto id = mount_point_id(*at);
      if (!id) continue;
      where = mount_point_path(pid, *id, *path);
    }
    log.record("protected_write", where);
    response.error = -EROFS;
    response.flags = 0;
    return;
  }
}

}  // namespace cordon::linux_impl
