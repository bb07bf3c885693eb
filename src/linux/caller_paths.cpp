// caller_paths.cpp — a notified call's paths, read and resolved as the caller
// sees them (caller_paths.h).
#include "linux/caller_paths.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <string_view>

namespace cordon::linux_impl {

int caller_dirfd(std::uint64_t arg) noexcept { return static_cast<int>(static_cast<std::int32_t>(arg & 0xffffffffU)); }

std::optional<std::string> read_caller_path(pid_t pid, std::uint64_t address) {
  constexpr std::size_t kPage = 4096;
  std::string out;
  char chunk[kPage];
  while (out.size() < PATH_MAX) {
    const std::size_t room = kPage - static_cast<std::size_t>(address % kPage);
    iovec local{chunk, room};
    iovec remote{reinterpret_cast<void*>(static_cast<std::uintptr_t>(address)), room};
    const ssize_t n = ::process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (n <= 0) return std::nullopt;
    const auto* end = static_cast<const char*>(std::memchr(chunk, '\0', static_cast<std::size_t>(n)));
    if (end != nullptr) return out.append(chunk, static_cast<std::size_t>(end - chunk));
    out.append(chunk, static_cast<std::size_t>(n));
    address += static_cast<std::uint64_t>(n);
  }
  return std::nullopt;
}

bool read_caller_memory(pid_t pid, std::uint64_t address, void* out, std::size_t size) {
  iovec local{out, size};
  iovec remote{reinterpret_cast<void*>(static_cast<std::uintptr_t>(address)), size};
  return ::process_vm_readv(pid, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(size);
}

unique_fd caller_start_directory(pid_t pid, int dirfd, const std::string& path) {
  std::string proc = "/proc/" + std::to_string(pid);
  proc += path.front() == '/' ? "/root" : dirfd == AT_FDCWD ? "/cwd" : "/fd/" + std::to_string(dirfd);
  return unique_fd(::open(proc.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
}

int open_beneath(int base, const std::string& path, std::uint64_t flags, std::uint64_t resolve) {
  open_how how{};
  how.flags = O_PATH | O_CLOEXEC | flags;
  how.resolve = resolve | RESOLVE_NO_MAGICLINKS;
  int fd = -1;
  for (int attempt = 0; attempt < 128; ++attempt) {
    fd = static_cast<int>(::syscall(SYS_openat2, base, path.c_str(), &how, sizeof how));
    if (fd >= 0 || errno != EAGAIN) break;
  }
  return fd;
}

std::string descriptor_path(int fd) {
  char buffer[PATH_MAX + 1];
  const std::string link = "/proc/self/fd/" + std::to_string(fd);
  const ssize_t n = ::readlink(link.c_str(), buffer, PATH_MAX);
  if (n <= 0 || buffer[0] != '/') return {};
  std::string out(buffer, static_cast<std::size_t>(n));
  constexpr std::string_view deleted = " (deleted)";
  if (out.size() >= deleted.size() && out.compare(out.size() - deleted.size(), deleted.size(), deleted) == 0) return {};
  return out;
}

unique_fd open_as_caller(pid_t pid, int dirfd, const std::string& path, std::uint64_t flags, int start) {
  if (path.empty()) {
    errno = ENOENT;
    return unique_fd();
  }
  unique_fd opened;
  if (start < 0) {
    opened = caller_start_directory(pid, dirfd, path);
    if (!opened) return unique_fd();
    start = opened.get();
  }
  const bool absolute = path.front() == '/';
  unique_fd fd(open_beneath(start, path, flags, absolute ? RESOLVE_IN_ROOT : RESOLVE_BENEATH));
  if (fd || absolute || errno != EXDEV) return fd;
  const std::string directory = descriptor_path(start);
  if (directory.empty()) {
    errno = ENOENT;
    return unique_fd();
  }
  const std::string root_link = "/proc/" + std::to_string(pid) + "/root";
  unique_fd root(::open(root_link.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!root) return unique_fd();
  return unique_fd(open_beneath(root.get(), directory + "/" + path, flags, RESOLVE_IN_ROOT));
}

bool notification_still_valid(int listener_fd, const seccomp_notif& request) {
  std::uint64_t id = request.id;
  return ::ioctl(listener_fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

}  // namespace cordon::linux_impl
