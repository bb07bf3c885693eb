// Binds and masks by descriptor (linux/mount_by_fd.h). Runs in PID 1:
// system calls only.
#include "linux/mount_by_fd.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cordon::linux_impl {
namespace {

// Closes a descriptor on every path out, keeping errno.
class fd_guard {
 public:
  explicit fd_guard(int fd) noexcept : fd_(fd) {}
  ~fd_guard() {
    if (fd_ < 0) return;
    int saved = errno;
    ::close(fd_);
    errno = saved;
  }
  fd_guard(const fd_guard&) = delete;
  fd_guard& operator=(const fd_guard&) = delete;
  int get() const noexcept { return fd_; }

 private:
  int fd_;
};

bool same(const struct stat& st, const file_identity& id) noexcept {
  return static_cast<std::uint64_t>(st.st_dev) == id.dev && static_cast<std::uint64_t>(st.st_ino) == id.ino;
}

}  // namespace

int open_no_symlinks(const char* path) noexcept {
  open_how how{};
  how.flags = O_PATH | O_CLOEXEC;
  // No symlink in any component; magic links (/proc/N/fd/...) are symlinks too.
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  return static_cast<int>(::syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how));
}

mount_by_fd_status bind_by_fd(const char* source, const char* target, const file_identity& expected,
                              std::uint64_t attributes) noexcept {
  fd_guard src(open_no_symlinks(source));
  if (src.get() < 0) return mount_by_fd_status::failed;
  struct stat st {};
  if (::fstat(src.get(), &st) != 0) return mount_by_fd_status::failed;
  if (!expected.known || !same(st, expected)) return mount_by_fd_status::source_changed;
  fd_guard dst(open_no_symlinks(target));
  if (dst.get() < 0) return mount_by_fd_status::failed;
  struct stat at {};
  if (::fstat(dst.get(), &at) != 0) return mount_by_fd_status::failed;
  // On the source's filesystem the target can only be the same host object
  // (an earlier bind shows it); another object there was put in its place.
  if (static_cast<std::uint64_t>(at.st_dev) == expected.dev && !same(at, expected)) {
    return mount_by_fd_status::target_changed;
  }
  return attach_copy(src.get(), dst.get(), attributes) ? mount_by_fd_status::ok : mount_by_fd_status::failed;
}

bool attach_copy(int source_fd, int target_fd, std::uint64_t attributes) noexcept {
  fd_guard tree(static_cast<int>(
      ::open_tree(source_fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH)));
  if (tree.get() < 0) return false;
  // Attributes on the detached copy: it is never attached writable or with setuid.
  struct mount_attr attr {};
  attr.attr_set = attributes;
  return ::mount_setattr(tree.get(), "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) == 0 &&
         ::move_mount(tree.get(), "", target_fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) == 0;
}

int open_target_link(const char* target, char* out) noexcept {
  int fd = open_no_symlinks(target);
  if (fd < 0) return -1;
  char digits[16];
  int n = 0;
  for (unsigned v = static_cast<unsigned>(fd); n == 0 || v != 0; v /= 10) digits[n++] = static_cast<char>('0' + v % 10);
  std::strcpy(out, "/newroot/proc/self/fd/");
  char* end = out + std::strlen(out);
  while (n > 0) *end++ = digits[--n];
  *end = '\0';
  return fd;
}

}  // namespace cordon::linux_impl
