// Mount application for PID 1 of the sandbox (sandbox_init_steps.h): the
// staging root, /newroot with /proc and a private /dev, the plan's mount
// table, then read-only and pivot_root. Child side: no allocation.
#include "linux/sandbox_init_steps.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>

#include "linux/mount_by_fd.h"
#include "linux/run_tls.h"

namespace cordon::linux_impl {
namespace {

constexpr const char* kStaging = "/tmp";  // a tmpfs mounted here becomes the staging root
constexpr const char* kMaskFile = "/mask";

// mkdir -p on a fixed buffer. Existing components are fine.
bool make_parents(const char* path) noexcept {
  char buffer[PATH_MAX];
  std::size_t len = std::strlen(path);
  if (len >= sizeof buffer) {
    errno = ENAMETOOLONG;
    return false;
  }
  std::memcpy(buffer, path, len + 1);
  for (std::size_t i = 1; i < len; ++i) {
    if (buffer[i] != '/') continue;
    buffer[i] = '\0';
    if (::mkdir(buffer, 0755) != 0 && errno != EEXIST) return false;
    buffer[i] = '/';
  }
  return true;
}

bool create_mount_point(const char* path, bool directory) noexcept {
  if (directory) return ::mkdir(path, 0755) == 0;
  int fd = ::open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

// Makes sure a mount point exists: a directory, or an empty file. Creating it
// first is one system call in the common cases (a fresh tmpfs whose parent
// exists; an existing path, where EEXIST wins over EROFS on the read-only
// host root); only a missing parent costs the walk.
bool ensure_mount_point(const char* path, bool directory) noexcept {
  if (create_mount_point(path, directory) || errno == EEXIST) return true;
  if (errno != ENOENT || !make_parents(path)) return false;
  return create_mount_point(path, directory) || errno == EEXIST;
}

bool set_mount_attributes(const char* path, std::uint64_t attributes, bool recursive) noexcept {
  struct mount_attr attr {};
  attr.attr_set = attributes;
  return ::mount_setattr(AT_FDCWD, path, recursive ? AT_RECURSIVE : 0, &attr, sizeof attr) == 0;
}

void setup_dev(const prepared_launch& launch) noexcept {
  const char* dev = "/newroot/dev";
  if (!ensure_mount_point(dev, true) ||
      ::mount("tmpfs", dev, "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=64k,nr_inodes=64") != 0) {
    init_fail(launch, init_step::dev, errno);
  }
  static constexpr const char* kDevices[] = {"null", "zero", "full", "random", "urandom", "tty"};
  char target[64];
  char source[64];
  for (const char* name : kDevices) {
    std::strcpy(target, "/newroot/dev/");
    std::strcat(target, name);
    std::strcpy(source, "/oldroot/dev/");
    std::strcat(source, name);
    // Character devices: nosuid/noexec would change nothing, and each is a system call at every launch.
    if (!ensure_mount_point(target, false) || ::mount(source, target, nullptr, MS_BIND, nullptr) != 0) {
      init_fail(launch, init_step::dev, errno);
    }
  }
  if (::mkdir("/newroot/dev/pts", 0755) != 0 ||
      ::mount("devpts", "/newroot/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
              "newinstance,ptmxmode=0666,mode=620") != 0 ||
      ::symlink("pts/ptmx", "/newroot/dev/ptmx") != 0) {
    init_fail(launch, init_step::dev, errno);
  }
  if (::mkdir("/newroot/dev/shm", 01777) != 0 ||
      ::mount("tmpfs", "/newroot/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, launch.payload->tmpfs_options.c_str()) != 0) {
    init_fail(launch, init_step::dev, errno);
  }
  static constexpr const char* kLinks[][2] = {{"/proc/self/fd", "/newroot/dev/fd"},
                                              {"/proc/self/fd/0", "/newroot/dev/stdin"},
                                              {"/proc/self/fd/1", "/newroot/dev/stdout"},
                                              {"/proc/self/fd/2", "/newroot/dev/stderr"}};
  for (const auto& link : kLinks) {
    if (::symlink(link[0], link[1]) != 0) init_fail(launch, init_step::dev, errno);
  }
}

void apply_mount_op(const prepared_launch& launch, std::size_t index) noexcept {
  const mount_op& op = launch.payload->mounts.ops[index];
  const char* source = launch.op_source[index].c_str();
  const char* target = launch.op_target[index].c_str();
  int i = static_cast<int>(index);
  // Device nodes work only where the policy names them (filesystem.devices);
  // a readable or writable root under /dev shows its nodes, unusable.
  bool nodev = op.why != "device";
  switch (op.kind) {
    case mount_kind::symlink:
      if (::symlink(op.link_target.c_str(), target) != 0) init_fail(launch, init_step::mount_op, errno, i);
      return;
    case mount_kind::bind_read_only:
    case mount_kind::bind_writable: {
      // By descriptor, source checked against the plan: a swap since compile time cannot redirect it.
      if (!ensure_mount_point(target, op.directory)) init_fail(launch, init_step::mount_op, errno, i);
      std::uint64_t attributes = MOUNT_ATTR_NOSUID;
      if (op.kind == mount_kind::bind_read_only) attributes |= MOUNT_ATTR_RDONLY;
      if (nodev) attributes |= MOUNT_ATTR_NODEV;
      switch (bind_by_fd(source, target, op.source_identity, attributes)) {
        case mount_by_fd_status::ok: return;
        case mount_by_fd_status::failed: init_fail(launch, init_step::mount_op, errno, i);
        case mount_by_fd_status::source_changed:
        case mount_by_fd_status::target_changed: init_fail(launch, init_step::mount_identity, ESTALE, i);
      }
      return;
    }
    case mount_kind::seal_read_only:
      // Itself with what is mounted beneath it, then read-only on this bind alone (linux/private_tmp.h).
      if (::mount(target, target, nullptr, MS_BIND | MS_REC, nullptr) != 0 ||
          !set_mount_attributes(target, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, false)) {
        init_fail(launch, init_step::mount_op, errno, i);
      }
      return;
    case mount_kind::private_tmpfs:
      if (!ensure_mount_point(target, true) ||
          ::mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, launch.payload->tmpfs_options.c_str()) != 0) {
        init_fail(launch, init_step::mount_op, errno, i);
      }
      return;
    case mount_kind::mask: {
      struct stat st {};
      if (::lstat(source, &st) != 0) {
        if (errno == ENOENT) return;  // compile proved nothing can create it
        init_fail(launch, init_step::mount_op, errno, i);
      }
      if (S_ISLNK(st.st_mode)) init_fail(launch, init_step::mount_op, ELOOP, i);
      // On the name reached with no symlink on the way (linux/mount_by_fd.h), through its descriptor.
      char at[48];
      int fd = open_target_link(target, at);
      if (fd < 0) init_fail(launch, init_step::mount_op, errno, i);
      if (S_ISDIR(st.st_mode)) {
        if (::mount("tmpfs", at, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                    "mode=000,size=4k,nr_inodes=1") != 0) {
          init_fail(launch, init_step::mount_op, errno, i);
        }
      } else {
        int mask = open_no_symlinks(kMaskFile);
        if (mask < 0 || !attach_copy(mask, fd, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
                                                   MOUNT_ATTR_NOEXEC)) {
          init_fail(launch, init_step::mount_op, errno, i);
        }
        ::close(mask);
      }
      ::close(fd);
      return;
    }
  }
}

}  // namespace

bool init_bind(const char* source, const char* target, bool read_only, bool nodev) noexcept {
  if (::mount(source, target, nullptr, MS_BIND | MS_REC, nullptr) != 0) return false;
  std::uint64_t attributes = MOUNT_ATTR_NOSUID;
  if (read_only) attributes |= MOUNT_ATTR_RDONLY;
  if (nodev) attributes |= MOUNT_ATTR_NODEV;
  return set_mount_attributes(target, attributes, true);
}

void enter_staging_root(const prepared_launch& launch) noexcept {
  // Nothing we mount may propagate back to the host.
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0) {
    init_fail(launch, init_step::mount_private, errno);
  }
  // Staging root: a tmpfs holding /newroot, /oldroot and the mask file.
  if (::mount("tmpfs", kStaging, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") != 0 ||
      ::mkdir("/tmp/newroot", 0755) != 0 || ::mkdir("/tmp/oldroot", 0755) != 0) {
    init_fail(launch, init_step::staging_root, errno);
  }
  int mask = ::open("/tmp/mask", O_WRONLY | O_CREAT | O_CLOEXEC, 0);
  if (mask < 0) init_fail(launch, init_step::staging_root, errno);
  ::close(mask);
  if (::chdir(kStaging) != 0 || ::syscall(SYS_pivot_root, ".", "oldroot") != 0 || ::chdir("/") != 0) {
    init_fail(launch, init_step::pivot_staging, errno);
  }
}

void mount_base_root(const prepared_launch& launch) noexcept {
  if (launch.payload->mounts.full_root) {
    if (!init_bind("/oldroot", "/newroot", true, true)) init_fail(launch, init_step::new_root, errno);
  } else if (::mount("tmpfs", "/newroot", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") != 0) {
    init_fail(launch, init_step::new_root, errno);
  }
  // The new /proc belongs to this PID namespace, but its kernel-wide files
  // (/proc/sys, sysrq-trigger, irq, ...) act on the host, and uid 0 inside
  // (cordon run by root) owns them: the whole mount is read-only, as the
  // Landlock rule for /proc is. Reads (/proc/self, cpuinfo) are unaffected;
  // kcore and kmsg need capabilities the command does not have.
  if (!ensure_mount_point("/newroot/proc", true) ||
      ::mount("proc", "/newroot/proc", "proc", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0) {
    init_fail(launch, init_step::proc, errno);
  }
  setup_dev(launch);
  if (launch.ca_bundle != nullptr) {
    if (int err = install_ca_bundle(*launch.ca_bundle); err != 0) init_fail(launch, init_step::dev, err);
  }
}

void apply_mount_ops(const prepared_launch& launch) noexcept {
  for (std::size_t i = 0; i < launch.payload->mounts.ops.size(); ++i) apply_mount_op(launch, i);
}

void finalize_root(const prepared_launch& launch) noexcept {
  if (!launch.payload->mounts.full_root && !set_mount_attributes("/newroot", MOUNT_ATTR_RDONLY, false)) {
    init_fail(launch, init_step::finalize_root, errno);
  }
  // Recursive: the device binds in it too (null, tty, ...), so the command
  // cannot chmod the host's device nodes through them; /dev/shm stays writable.
  struct mount_attr writable {};
  writable.attr_clr = MOUNT_ATTR_RDONLY;
  if (!set_mount_attributes("/newroot/dev", MOUNT_ATTR_RDONLY, true) ||
      ::mount_setattr(AT_FDCWD, "/newroot/dev/shm", 0, &writable, sizeof writable) != 0 ||
      ::umount2("/oldroot", MNT_DETACH) != 0) {
    init_fail(launch, init_step::finalize_root, errno);
  }
  // Enter the new root and drop the staging root beneath it (pivot_root(2), "new_root == put_old").
  if (::chdir("/newroot") != 0 || ::syscall(SYS_pivot_root, ".", ".") != 0 ||
      ::umount2(".", MNT_DETACH) != 0 || ::chdir("/") != 0) {
    init_fail(launch, init_step::pivot_new_root, errno);
  }
}

}  // namespace cordon::linux_impl
