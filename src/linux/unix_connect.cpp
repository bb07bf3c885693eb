// unix_connect.cpp — connect(2) to a named unix socket, performed by the
// supervisor on the inode it checked (unix_connect.h).
#include "linux/unix_connect.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

#include "posix/unique_fd.h"

namespace cordon::linux_impl {
namespace {

struct identity {
  dev_t dev = 0;
  ino_t ino = 0;
  bool directory = false;
  bool operator==(const identity& o) const { return dev == o.dev && ino == o.ino; }
};

std::optional<identity> identity_of(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return std::nullopt;
  return identity{st.st_dev, st.st_ino, S_ISDIR(st.st_mode) != 0};
}

// openat2(2) from `base` with `resolve` flags; -1 and errno on failure.
// A scoped lookup fails with EAGAIN when a rename or mount anywhere on the
// host races one of its ".." steps (openat2(2), ERRORS: the caller may
// retry); sandboxes starting beside this one mount all the time. Retried a
// bounded number of times, so a sandbox renaming without pause to provoke it
// gets EAGAIN for its connect(2), never a lookup that skipped the check.
int open_resolved(int base, const std::string& path, std::uint64_t flags, std::uint64_t resolve) {
  constexpr int kAttempts = 128;
  open_how how{};
  how.flags = flags | O_PATH | O_CLOEXEC;
  how.resolve = resolve;
  int fd = -1;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    fd = static_cast<int>(::syscall(SYS_openat2, base, path.c_str(), &how, sizeof how));
    if (fd >= 0 || errno != EAGAIN) break;
  }
  return fd;
}

constexpr std::uint64_t kInRoot = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
constexpr std::uint64_t kBeneath = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;

// Is the socket `target` (its directory `parent`, when the last component
// was no symlink) one the policy allows? Entries resolve inside the same root.
bool allowed(int root, const identity& target, const std::optional<identity>& parent, const seccomp_program& program) {
  for (const auto& entry : program.unix_sockets_allowed) {
    unique_fd fd(open_resolved(root, entry, 0, kInRoot));
    if (!fd) continue;
    auto id = identity_of(fd.get());
    if (!id) continue;
    if (*id == target) return true;
    if (id->directory && parent && *id == *parent) return true;
  }
  if (program.unix_private_tmp) {
    unique_fd tmp(open_resolved(root, "/tmp", O_DIRECTORY, kInRoot));
    std::optional<identity> id;
    if (tmp) id = identity_of(tmp.get());
    if (id && id->dev == target.dev) return true;  // the run's own tmpfs
  }
  return false;
}

// connect(2) on our copy to the inode behind `target_fd`; a blocking socket
// waits at most `wait` (its SO_SNDTIMEO, restored afterwards).
int connect_to_inode(int socket_fd, int target_fd, std::chrono::milliseconds wait) {
  sockaddr_un to{};
  to.sun_family = AF_UNIX;
  std::snprintf(to.sun_path, sizeof to.sun_path, "/proc/self/fd/%d", target_fd);
  const int flags = ::fcntl(socket_fd, F_GETFL);
  if (flags < 0) return errno;
  timeval old{};
  socklen_t size = sizeof old;
  const bool bound = (flags & O_NONBLOCK) == 0 && ::getsockopt(socket_fd, SOL_SOCKET, SO_SNDTIMEO, &old, &size) == 0;
  if (bound) {
    timeval limit{static_cast<time_t>(wait.count() / 1000), static_cast<suseconds_t>((wait.count() % 1000) * 1000)};
    const bool longer = (old.tv_sec != 0 || old.tv_usec != 0) &&
                        (old.tv_sec < limit.tv_sec || (old.tv_sec == limit.tv_sec && old.tv_usec < limit.tv_usec));
    if (!longer) ::setsockopt(socket_fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
  }
  int err = ::connect(socket_fd, reinterpret_cast<const sockaddr*>(&to), sizeof to) == 0 ? 0 : errno;
  if (bound) ::setsockopt(socket_fd, SOL_SOCKET, SO_SNDTIMEO, &old, sizeof old);
  return err;
}

}  // namespace

int connect_unix(int socket_fd, pid_t pid, const sockaddr_storage& address, std::size_t length,
                 const seccomp_program& program, violation_log& log, const std::function<bool()>& still_waiting,
                 std::chrono::milliseconds wait) {
  constexpr std::size_t kPathOffset = offsetof(sockaddr_un, sun_path);
  const auto* un = reinterpret_cast<const sockaddr_un*>(&address);
  // Unnamed (autobind) and abstract addresses name nothing in the
  // filesystem; a family other than AF_UNIX is the kernel's to refuse.
  if (program.abstract_unix_refused && address.ss_family == AF_UNIX && length > kPathOffset + 1 &&
      un->sun_path[0] == '\0') {
    log.record("unix_connect", "@" + std::string(un->sun_path + 1, length - kPathOffset - 1) +
                                   " (an abstract name of the host's network namespace)");
    return EACCES;
  }
  if (address.ss_family != AF_UNIX || length <= kPathOffset || un->sun_path[0] == '\0') {
    return ::connect(socket_fd, reinterpret_cast<const sockaddr*>(&address), static_cast<socklen_t>(length)) == 0
               ? 0
               : errno;
  }
  const std::size_t most = std::min(length - kPathOffset, sizeof un->sun_path);
  const std::string path(un->sun_path, ::strnlen(un->sun_path, most));
  const bool absolute = path.front() == '/';
  const std::string proc = "/proc/" + std::to_string(pid);
  unique_fd root(::open((proc + "/root").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  unique_fd base(absolute ? -1 : ::open((proc + "/cwd").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!root || (!absolute && !base)) return EACCES;  // the caller is gone, or not ours to look at
  if (!still_waiting()) return EACCES;               // it died after the check: `pid` may be another's now
  const int from = absolute ? root.get() : base.get();
  const std::uint64_t resolve = absolute ? kInRoot : kBeneath;

  unique_fd target(open_resolved(from, path, 0, resolve));
  if (!target) {
    // EXDEV: a relative path that climbs out of the working directory.
    if (errno == EXDEV) {
      log.record("unix_connect", path + " (a relative path leaving the working directory)");
      return EACCES;
    }
    return errno;  // ENOENT, ENOTDIR, ELOOP, EACCES: what the lookup itself says
  }
  struct stat st {};
  if (::fstat(target.get(), &st) != 0) return errno;
  if (!S_ISSOCK(st.st_mode)) return ECONNREFUSED;  // what connect(2) says of a file that is no socket
  const identity id{st.st_dev, st.st_ino, false};

  // The directory it sits in, when its last component is the socket itself.
  std::optional<identity> parent;
  const auto slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  unique_fd parent_fd(open_resolved(from, dir, O_DIRECTORY, resolve));
  struct stat entry {};
  if (parent_fd && ::fstatat(parent_fd.get(), name.c_str(), &entry, AT_SYMLINK_NOFOLLOW) == 0 &&
      entry.st_dev == st.st_dev && entry.st_ino == st.st_ino) {
    parent = identity_of(parent_fd.get());
  }
  if (!allowed(root.get(), id, parent, program)) {
    log.record("unix_connect", path);
    return EACCES;
  }
  return connect_to_inode(socket_fd, target.get(), wait);
}

}  // namespace cordon::linux_impl
