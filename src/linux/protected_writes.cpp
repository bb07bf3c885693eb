// protected_writes.cpp — EROFS, and a violation, for an open for writing or a
// truncate of a protected path (protected_writes.h).
#include "linux/protected_writes.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "linux/caller_paths.h"
#include "linux/paths.h"
#include "posix/unique_fd.h"

namespace cordon::linux_impl {
namespace {

// O_TMPFILE without O_DIRECTORY (__O_TMPFILE): the bit that makes an open a tmpfile.
constexpr std::uint64_t kTmpfileBit = O_TMPFILE & ~static_cast<std::uint64_t>(O_DIRECTORY);
constexpr std::uint64_t kSetIdBits = S_ISUID | S_ISGID;

struct write_call {
  int dirfd = AT_FDCWD;
  std::uint64_t address = 0;  // the path
  std::uint64_t flags = 0;    // open(2) flags; truncate(2): O_WRONLY
  bool truncate = false;
};

// open, creat and truncate where the architecture has them (aarch64 has only openat; -1: none).
#ifdef SYS_open
constexpr long kOpen = SYS_open;
#else
constexpr long kOpen = -1;
#endif
#ifdef SYS_creat
constexpr long kCreat = SYS_creat;
#else
constexpr long kCreat = -1;
#endif
#ifdef SYS_truncate
constexpr long kTruncate = SYS_truncate;
#else
constexpr long kTruncate = -1;
#endif

bool is_open(long nr) noexcept { return kOpen >= 0 && nr == kOpen; }
bool is_creat(long nr) noexcept { return kCreat >= 0 && nr == kCreat; }
bool is_truncate(long nr) noexcept { return kTruncate >= 0 && nr == kTruncate; }

bool is_write_call(long nr) noexcept {
  return is_open(nr) || is_creat(nr) || is_truncate(nr) || nr == SYS_openat || nr == SYS_openat2;
}

// The table's set-id rule (seccomp_rules.cpp, add_setuid_rules) for this
// open, openat or creat: a mode with S_ISUID or S_ISGID, with O_CREAT or
// O_TMPFILE in the flags of open and openat. Modes and flags are 32-bit.
bool setid_rule_matches(const seccomp_notif& request) noexcept {
  const auto& a = request.data.args;
  const long nr = request.data.nr;
  std::uint64_t flags = O_CREAT;
  std::uint64_t mode = 0;
  if (is_creat(nr)) {
    mode = a[1];
  } else if (is_open(nr)) {
    flags = a[1];
    mode = a[2];
  } else if (nr == SYS_openat) {
    flags = a[2];
    mode = a[3];
  } else {
    return false;
  }
  return (flags & (O_CREAT | kTmpfileBit)) != 0 && (mode & kSetIdBits) != 0;
}

// The call's path and flags; nullopt when it is not judged here (an openat2
// whose struct cannot be read or that asks for resolve flags of its own).
std::optional<write_call> write_call_of(const seccomp_notif& request) {
  const auto& a = request.data.args;
  const long nr = request.data.nr;
  constexpr std::uint64_t kInt = 0xffffffffU;  // open(2)'s flags are an int
  if (is_open(nr)) return write_call{AT_FDCWD, a[0], a[1] & kInt, false};
  if (is_creat(nr)) return write_call{AT_FDCWD, a[0], O_CREAT | O_WRONLY | O_TRUNC, false};
  if (is_truncate(nr)) return write_call{AT_FDCWD, a[0], O_WRONLY, true};
  if (nr == SYS_openat) return write_call{caller_dirfd(a[0]), a[1], a[2] & kInt, false};
  if (nr == SYS_openat2) {
    open_how how{};
    if (a[3] < sizeof how || !read_caller_memory(static_cast<pid_t>(request.pid), a[2], &how, sizeof how)) {
      return std::nullopt;
    }
    if (how.resolve != 0) return std::nullopt;
    return write_call{caller_dirfd(a[0]), a[1], how.flags, false};
  }
  return std::nullopt;
}

bool asks_write_access(std::uint64_t flags) noexcept {
  const auto access = flags & O_ACCMODE;
  return access == O_WRONLY || access == O_RDWR || (flags & O_TRUNC) != 0;
}

// The path's directory and last component ("" when there is none: "/", ".",
// "..", or a trailing slash, which names a directory the call cannot create).
std::pair<std::string, std::string> split_last(const std::string& path) {
  const auto slash = path.rfind('/');
  std::string parent = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  std::string last = slash == std::string::npos ? path : path.substr(slash + 1);
  if (last == "." || last == "..") last.clear();
  return {parent, last};
}

// Where the call would write, as the caller's view names it: the existing
// file (or O_TMPFILE's directory) when the kernel would write it, or the
// directory of a name O_CREAT would make. nullopt: the kernel answers
// before any write (EEXIST, EISDIR, ELOOP, ENOENT, EINVAL, a read-only open)
// or the path cannot be resolved.
struct write_target {
  unique_fd fd;      // the file, or the directory the name would be made in
  std::string name;  // "" or the name to be made
};

std::optional<write_target> resolve_target(pid_t pid, const write_call& call, const std::string& path) {
  const std::uint64_t flags = call.flags;
  const bool creates = (flags & O_CREAT) != 0 && (flags & kTmpfileBit) == 0 && !call.truncate;
  const bool tmpfile = (flags & kTmpfileBit) != 0;
  // O_CREAT|O_EXCL never follows a last symlink (open(2)).
  const bool follow = (flags & O_NOFOLLOW) == 0 && !(creates && (flags & O_EXCL) != 0);
  unique_fd start = caller_start_directory(pid, call.dirfd, path);
  if (!start) return std::nullopt;
  unique_fd file = open_as_caller(pid, call.dirfd, path, follow ? 0 : O_NOFOLLOW, start.get());
  if (file) {
    struct stat st {};
    if (::fstat(file.get(), &st) != 0) return std::nullopt;
    if (creates && (flags & O_EXCL) != 0) return std::nullopt;               // EEXIST
    if (tmpfile != S_ISDIR(st.st_mode)) return std::nullopt;                 // EISDIR, ENOTDIR
    if (S_ISLNK(st.st_mode)) return std::nullopt;                            // ELOOP (O_NOFOLLOW)
    if (call.truncate && !S_ISREG(st.st_mode)) return std::nullopt;          // EINVAL, EISDIR
    if (!asks_write_access(flags)) return std::nullopt;                      // O_CREAT of an existing file: read-only
    return write_target{std::move(file), {}};
  }
  if (errno != ENOENT || !creates || path.back() == '/') return std::nullopt;
  auto [parent, last] = split_last(path);
  if (last.empty()) return std::nullopt;
  unique_fd directory = open_as_caller(pid, call.dirfd, parent, O_DIRECTORY, start.get());
  if (!directory) return std::nullopt;
  // A dangling symlink: O_CREAT makes its target, somewhere else.
  struct stat st {};
  if (::fstatat(directory.get(), last.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT) return std::nullopt;
  return write_target{std::move(directory), last};
}

bool on_read_only_mount(int fd) {
  struct statfs st {};
  return ::fstatfs(fd, &st) == 0 && (st.f_flags & ST_RDONLY) != 0;
}

}  // namespace

bool is_protected_write_check(const seccomp_program& program, const seccomp_notif& request) noexcept {
  const long nr = request.data.nr;
  if (!program.protected_writes_checked || !is_write_call(nr)) return false;
  const bool in_table = std::any_of(program.errno_by_syscall.begin(), program.errno_by_syscall.end(),
                                    [&](const auto& entry) { return entry.first == nr; });
  if (!in_table) return true;
  if (nr == SYS_openat2) return false;  // refused with ENOSYS for root callers: libc falls back to openat
  return !setid_rule_matches(request);
}

void answer_protected_write(int listener_fd, const seccomp_notif& request, seccomp_notif_resp& response,
                            const seccomp_program& program, violation_log& log) {
  const auto& protected_paths = program.protected_write_paths;
  response.error = 0;
  response.val = 0;
  response.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
  const auto call = write_call_of(request);
  if (!call || !(asks_write_access(call->flags) || (call->flags & O_CREAT) != 0)) return;
  const auto pid = static_cast<pid_t>(request.pid);
  const auto path = read_caller_path(pid, call->address);
  if (!path || path->empty()) return;
  auto target = resolve_target(pid, *call, *path);
  // The common case ends here: a write to a writable mount. Under Landlock
  // (linux-os-sandbox) there is no mount to ask: the paths decide.
  if (!target || (!program.protected_by_landlock && !on_read_only_mount(target->fd.get()))) return;
  std::string where = descriptor_path(target->fd.get());
  if (where.empty()) return;
  if (!target->name.empty()) where += (where == "/" ? "" : "/") + target->name;
  const bool is_protected = std::any_of(protected_paths.begin(), protected_paths.end(),
                                        [&](const std::string& p) { return path_is_within(where, p); });
  // What was opened through /proc/PID is the caller's only while it still waits in this call.
  if (!is_protected || !notification_still_valid(listener_fd, request)) return;
  log.record("protected_write", where);
  response.error = -EROFS;
  response.flags = 0;
}

}  // namespace cordon::linux_impl
