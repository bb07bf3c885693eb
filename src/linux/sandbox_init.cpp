// PID 1 of the sandbox. Async-signal-safe style throughout: no allocation, no
// stdio, only system calls on strings prepared by the supervisor.
#include "linux/sandbox_init.h"
#include "linux/run_tls.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <linux/close_range.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/un.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <csignal>
#include <cstring>
#include <ctime>

#include "linux/capabilities.h"
#include "linux/mount_by_fd.h"
#include "linux/namespace_reap.h"
#include "linux/namespaces.h"
#include "linux/pty.h"
#include "posix/scm_rights.h"

extern char** environ;

namespace cordon::linux_impl {
namespace {

constexpr const char* kStaging = "/tmp";  // a tmpfs mounted here becomes the staging root
constexpr const char* kMaskFile = "/mask";

[[noreturn]] void fail(const prepared_launch& launch, init_step step, int err, int op_index = -1) noexcept {
  init_message message;
  message.kind = init_message_kind::setup_failed;
  message.step = step;
  message.error = err;
  message.op_index = op_index;
  ssize_t ignored = ::write(launch.status_write_fd, &message, sizeof message);
  (void)ignored;
  ::_exit(125);
}

bool write_file(const char* path, const char* text) noexcept {
  int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  std::size_t len = std::strlen(text);
  bool ok = ::write(fd, text, len) == static_cast<ssize_t>(len);
  int saved = errno;
  ::close(fd);
  errno = saved;
  return ok;
}

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

bool bind(const char* source, const char* target, bool read_only, bool nodev) noexcept {
  if (::mount(source, target, nullptr, MS_BIND | MS_REC, nullptr) != 0) return false;
  std::uint64_t attributes = MOUNT_ATTR_NOSUID;
  if (read_only) attributes |= MOUNT_ATTR_RDONLY;
  if (nodev) attributes |= MOUNT_ATTR_NODEV;
  return set_mount_attributes(target, attributes, true);
}

void setup_dev(const prepared_launch& launch) noexcept {
  const char* dev = "/newroot/dev";
  if (!ensure_mount_point(dev, true) ||
      ::mount("tmpfs", dev, "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=64k,nr_inodes=64") != 0) {
    fail(launch, init_step::dev, errno);
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
      fail(launch, init_step::dev, errno);
    }
  }
  if (::mkdir("/newroot/dev/pts", 0755) != 0 ||
      ::mount("devpts", "/newroot/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
              "newinstance,ptmxmode=0666,mode=620") != 0 ||
      ::symlink("pts/ptmx", "/newroot/dev/ptmx") != 0) {
    fail(launch, init_step::dev, errno);
  }
  if (::mkdir("/newroot/dev/shm", 01777) != 0 ||
      ::mount("tmpfs", "/newroot/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, launch.payload->tmpfs_options.c_str()) != 0) {
    fail(launch, init_step::dev, errno);
  }
  static constexpr const char* kLinks[][2] = {{"/proc/self/fd", "/newroot/dev/fd"},
                                              {"/proc/self/fd/0", "/newroot/dev/stdin"},
                                              {"/proc/self/fd/1", "/newroot/dev/stdout"},
                                              {"/proc/self/fd/2", "/newroot/dev/stderr"}};
  for (const auto& link : kLinks) {
    if (::symlink(link[0], link[1]) != 0) fail(launch, init_step::dev, errno);
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
      if (::symlink(op.link_target.c_str(), target) != 0) fail(launch, init_step::mount_op, errno, i);
      return;
    case mount_kind::bind_read_only:
    case mount_kind::bind_writable: {
      // By descriptor, source checked against the plan: a swap since compile time cannot redirect it.
      if (!ensure_mount_point(target, op.directory)) fail(launch, init_step::mount_op, errno, i);
      std::uint64_t attributes = MOUNT_ATTR_NOSUID;
      if (op.kind == mount_kind::bind_read_only) attributes |= MOUNT_ATTR_RDONLY;
      if (nodev) attributes |= MOUNT_ATTR_NODEV;
      switch (bind_by_fd(source, target, op.source_identity, attributes)) {
        case mount_by_fd_status::ok: return;
        case mount_by_fd_status::failed: fail(launch, init_step::mount_op, errno, i);
        case mount_by_fd_status::source_changed:
        case mount_by_fd_status::target_changed: fail(launch, init_step::mount_identity, ESTALE, i);
      }
      return;
    }
    case mount_kind::seal_read_only:
      // Itself with what is mounted beneath it, then read-only on this bind alone (linux/private_tmp.h).
      if (::mount(target, target, nullptr, MS_BIND | MS_REC, nullptr) != 0 ||
          !set_mount_attributes(target, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, false)) {
        fail(launch, init_step::mount_op, errno, i);
      }
      return;
    case mount_kind::private_tmpfs:
      if (!ensure_mount_point(target, true) ||
          ::mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, launch.payload->tmpfs_options.c_str()) != 0) {
        fail(launch, init_step::mount_op, errno, i);
      }
      return;
    case mount_kind::mask: {
      struct stat st {};
      if (::lstat(source, &st) != 0) {
        if (errno == ENOENT) return;  // compile proved nothing can create it
        fail(launch, init_step::mount_op, errno, i);
      }
      if (S_ISLNK(st.st_mode)) fail(launch, init_step::mount_op, ELOOP, i);
      // On the name reached with no symlink on the way (linux/mount_by_fd.h), through its descriptor.
      char at[48];
      int fd = open_target_link(target, at);
      if (fd < 0) fail(launch, init_step::mount_op, errno, i);
      if (S_ISDIR(st.st_mode)) {
        if (::mount("tmpfs", at, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                    "mode=000,size=4k,nr_inodes=1") != 0) {
          fail(launch, init_step::mount_op, errno, i);
        }
      } else {
        int mask = open_no_symlinks(kMaskFile);
        if (mask < 0 || !attach_copy(mask, fd, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
                                                   MOUNT_ATTR_NOEXEC)) {
          fail(launch, init_step::mount_op, errno, i);
        }
        ::close(mask);
      }
      ::close(fd);
      return;
    }
  }
}

// The broker's unix socket, bound in the private /dev before it becomes
// read-only: the command can connect to it but not remove or replace it, and
// it vanishes with the mount namespace (nothing is left on the host).
int open_broker_unix_listener(const prepared_launch& launch) noexcept {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) fail(launch, init_step::broker_listeners, errno);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strcpy(address.sun_path, "/newroot");
  std::strcat(address.sun_path, broker_socket_path);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::chmod(address.sun_path, 0666) != 0 || ::listen(fd, SOMAXCONN) != 0) {
    fail(launch, init_step::broker_listeners, errno);
  }
  return fd;
}

// The broker's TCP listener on the namespace's loopback (which is up).
int open_broker_tcp_listener(const prepared_launch& launch, std::uint16_t port = broker_port) noexcept {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) fail(launch, init_step::broker_listeners, errno);
  int one = 1;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
      ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || ::listen(fd, SOMAXCONN) != 0) {
    fail(launch, init_step::broker_listeners, errno);
  }
  return fd;
}

// The broker's transparent listener (src/linux/connect_redirect.h): the
// supervisor connects the command's own TCP sockets here. Dual-stack [::]
// when the namespace has IPv6, else 127.0.0.1.
int open_broker_transparent_listener(const prepared_launch& launch) noexcept {
  int one = 1;
  int zero = 0;
  int fd = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd >= 0) {
    sockaddr_in6 any6{};
    any6.sin6_family = AF_INET6;
    any6.sin6_port = htons(broker_transparent_port);
    if (::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero) == 0 &&
        ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == 0 &&
        ::bind(fd, reinterpret_cast<sockaddr*>(&any6), sizeof any6) == 0 && ::listen(fd, SOMAXCONN) == 0) {
      return fd;
    }
    ::close(fd);
  }
  return open_broker_tcp_listener(launch, broker_transparent_port);
}

// The broker's DNS socket: UDP on 127.0.0.1:53 inside (docs/network.md,
// "DNS inside the sandbox").
int open_broker_dns_socket(const prepared_launch& launch) noexcept {
  int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) fail(launch, init_step::broker_listeners, errno);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(broker_dns_port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    fail(launch, init_step::broker_listeners, errno);
  }
  return fd;
}

// The sandbox's /etc/resolv.conf names the broker's DNS socket: a file in
// the staging root bound read-only over the host's. When the view has no
// /etc/resolv.conf (or it is a link that leads outside the view) nothing is
// mounted and names simply do not resolve inside (the broker still decides
// every connection).
void overlay_resolv_conf() noexcept {
  static constexpr char contents[] = "# cordon: the network broker answers for the names the policy allows\n"
                                     "nameserver 127.0.0.1\noptions timeout:3 attempts:2\n";
  int fd = ::open("/resolv.conf", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  const bool written = ::write(fd, contents, sizeof contents - 1) == static_cast<ssize_t>(sizeof contents - 1);
  ::close(fd);
  struct stat target {};
  if (!written || ::stat("/newroot/etc/resolv.conf", &target) != 0 || !S_ISREG(target.st_mode)) return;
  bind("/resolv.conf", "/newroot/etc/resolv.conf", true, true);
}

// Returns the broker's unix listener, or -1 when the plan has no broker.
int build_root(const prepared_launch& launch) noexcept {
  int broker_unix = -1;
  const mount_table& table = launch.payload->mounts;
  // Nothing we mount may propagate back to the host.
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0) fail(launch, init_step::mount_private, errno);
  // Staging root: a tmpfs holding /newroot, /oldroot and the mask file.
  if (::mount("tmpfs", kStaging, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") != 0 ||
      ::mkdir("/tmp/newroot", 0755) != 0 || ::mkdir("/tmp/oldroot", 0755) != 0) {
    fail(launch, init_step::staging_root, errno);
  }
  int mask = ::open("/tmp/mask", O_WRONLY | O_CREAT | O_CLOEXEC, 0);
  if (mask < 0) fail(launch, init_step::staging_root, errno);
  ::close(mask);
  if (::chdir(kStaging) != 0 || ::syscall(SYS_pivot_root, ".", "oldroot") != 0 || ::chdir("/") != 0) {
    fail(launch, init_step::pivot_staging, errno);
  }
  if (table.full_root) {
    if (!bind("/oldroot", "/newroot", true, true)) fail(launch, init_step::new_root, errno);
  } else if (::mount("tmpfs", "/newroot", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") != 0) {
    fail(launch, init_step::new_root, errno);
  }
  // The new /proc belongs to this PID namespace, but its kernel-wide files
  // (/proc/sys, sysrq-trigger, irq, ...) act on the host, and uid 0 inside
  // (cordon run by root) owns them: the whole mount is read-only, as the
  // Landlock rule for /proc is. Reads (/proc/self, cpuinfo) are unaffected;
  // kcore and kmsg need capabilities the command does not have.
  if (!ensure_mount_point("/newroot/proc", true) ||
      ::mount("proc", "/newroot/proc", "proc", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0) {
    fail(launch, init_step::proc, errno);
  }
  setup_dev(launch);
  if (launch.ca_bundle != nullptr) {
    if (int err = install_ca_bundle(*launch.ca_bundle); err != 0) fail(launch, init_step::dev, err);
  }
  if (launch.payload->network_broker) broker_unix = open_broker_unix_listener(launch);
  for (std::size_t i = 0; i < table.ops.size(); ++i) apply_mount_op(launch, i);
  if (launch.payload->network_broker) overlay_resolv_conf();
  if (!table.full_root && !set_mount_attributes("/newroot", MOUNT_ATTR_RDONLY, false)) {
    fail(launch, init_step::finalize_root, errno);
  }
  // Recursive: the device binds in it too (null, tty, ...), so the command
  // cannot chmod the host's device nodes through them; /dev/shm stays writable.
  struct mount_attr writable {};
  writable.attr_clr = MOUNT_ATTR_RDONLY;
  if (!set_mount_attributes("/newroot/dev", MOUNT_ATTR_RDONLY, true) ||
      ::mount_setattr(AT_FDCWD, "/newroot/dev/shm", 0, &writable, sizeof writable) != 0 ||
      ::umount2("/oldroot", MNT_DETACH) != 0) {
    fail(launch, init_step::finalize_root, errno);
  }
  // Enter the new root and drop the staging root beneath it (pivot_root(2), "new_root == put_old").
  if (::chdir("/newroot") != 0 || ::syscall(SYS_pivot_root, ".", ".") != 0 ||
      ::umount2(".", MNT_DETACH) != 0 || ::chdir("/") != 0) {
    fail(launch, init_step::pivot_new_root, errno);
  }
  return broker_unix;
}

void bring_up_loopback(const prepared_launch& launch) noexcept {
  int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) fail(launch, init_step::loopback, errno);
  struct ifreq request {};
  std::strcpy(request.ifr_name, "lo");
  if (::ioctl(fd, SIOCGIFFLAGS, &request) != 0) fail(launch, init_step::loopback, errno);
  request.ifr_flags = static_cast<short>(request.ifr_flags | IFF_UP);
  if (::ioctl(fd, SIOCSIFFLAGS, &request) != 0) fail(launch, init_step::loopback, errno);
  ::close(fd);
}

// Every TCP connection of the sandbox's network namespace crosses its
// loopback (to the broker, or to the command itself). A host may make BBR
// its default, and a new namespace inherits it; BBR paces a loopback
// transfer to less than half of what cubic moves (docs/network.md,
// "Throughput"). So this namespace, and only it, uses cubic. Through the
// host's /proc, before the new root (whose /proc/sys is read-only). A
// namespace other than the host's may choose only an algorithm of
// tcp_allowed_congestion_control (EPERM otherwise, whatever its
// capabilities), which on some hosts lists no cubic; reno is always
// allowed and, like cubic, unpaced. Not a control: where neither can be set
// the inherited default stays.
void loopback_congestion_control() noexcept {
  constexpr const char* kPath = "/proc/sys/net/ipv4/tcp_congestion_control";
  if (!write_file(kPath, "cubic")) (void)write_file(kPath, "reno");
}

// Sends `count` (1 to 4) descriptors in one SCM_RIGHTS message.
bool send_descriptors(int socket_fd, const int* fds, std::size_t count) noexcept {
  char byte = 'L';
  iovec io{&byte, 1};
  scm_rights_space space;
  if (count == 0 || count > 4) return false;
  msghdr message = rights_message(io, space, fds, count);
  return ::sendmsg(socket_fd, &message, MSG_NOSIGNAL) == 1;
}

// The deadline, from PID 1 (prepared_launch::deadline_ns): the supervisor
// may be stopped. Leaving as PID 1 ends the whole tree.
const prepared_launch* deadline_launch = nullptr;
void deadline_reached(int) noexcept {
  // The tree's CPU time reaches PID 1's rusage only if PID 1 reaps it (linux/namespace_reap.h).
  kill_and_reap_namespace();
  init_message message;
  message.kind = init_message_kind::timed_out;
  ssize_t ignored = ::write(deadline_launch->status_write_fd, &message, sizeof message);
  (void)ignored;
  ::_exit(0);
}

void arm_deadline(const prepared_launch& launch) noexcept {
  if (launch.deadline_ns == 0) return;
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  std::int64_t left = launch.deadline_ns - (static_cast<std::int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec);
  if (left < 1000) left = 1000;
  deadline_launch = &launch;
  struct sigaction action {};
  action.sa_handler = deadline_reached;
  ::sigemptyset(&action.sa_mask);
  ::sigaction(SIGALRM, &action, nullptr);
  itimerval timer{};
  timer.it_value.tv_sec = left / 1000000000;
  timer.it_value.tv_usec = (left % 1000000000) / 1000;
  ::setitimer(ITIMER_REAL, &timer, nullptr);
}

// Every signal back to its default disposition. What the supervisor or its
// host ignored (a host under nohup ignores SIGHUP; the relay ignores
// SIGTTOU) would stay ignored across exec and reach the command. PID 1 only
// installs handlers after this, never SIG_IGN, so the command needs no reset
// of its own (exec_command).
void reset_dispositions() noexcept {
  struct sigaction action {};
  action.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &action, nullptr);
}

void forward_signal(int sig) noexcept {
  int saved = errno;
  ::kill(-1, sig);  // every process in this PID namespace but PID 1
  errno = saved;
}

// What the command's process reports through the exec pipe when it does not
// reach the command.
enum class command_failure_kind : std::int32_t { exec = 1, rlimit = 2 };
struct command_failure {
  command_failure_kind kind = command_failure_kind::exec;
  std::int32_t error = 0;  // errno
  std::int32_t index = -1;  // rlimit: index in payload->rlimits
};

[[noreturn]] void exec_command(const prepared_launch& launch, int exec_error_fd) noexcept {
  ::setsid();  // a session of its own: the caller's terminal is not its controlling terminal
  take_controlling_terminal(launch.stdio);  // the private pty, when it has one (pty.h)
  // Every disposition is the default at exec: PID 1 reset them all before
  // it installed its handlers (reset_dispositions), and exec resets a
  // handled signal. Not done again here, on the command's critical path.
  sigset_t empty;
  ::sigemptyset(&empty);
  ::sigprocmask(SIG_SETMASK, &empty, nullptr);
  // A limit the plan promises must hold: a failed setrlimit fails the
  // launch (reported as the rlimits step, with the limit's index).
  const auto& rlimits = launch.payload->rlimits;
  for (std::size_t i = 0; i < rlimits.size(); ++i) {
    struct rlimit value {rlimits[i].value, rlimits[i].value};
    if (::setrlimit(rlimits[i].resource, &value) != 0) {
      command_failure failure{command_failure_kind::rlimit, errno, static_cast<std::int32_t>(i)};
      ssize_t ignored = ::write(exec_error_fd, &failure, sizeof failure);
      (void)ignored;
      ::_exit(125);
    }
  }
  // Every descriptor above stderr closes at exec, including the error pipe.
  ::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
  environ = const_cast<char**>(launch.envp.data());
  ::execvp(launch.argv[0], const_cast<char* const*>(launch.argv.data()));
  command_failure failure{command_failure_kind::exec, errno, -1};
  ssize_t ignored = ::write(exec_error_fd, &failure, sizeof failure);
  (void)ignored;
  ::_exit(127);
}

// Sends `message` to the supervisor (best effort: it may be gone).
void report(const prepared_launch& launch, init_message_kind kind) noexcept {
  init_message message;
  message.kind = kind;
  ssize_t ignored = ::write(launch.status_write_fd, &message, sizeof message);
  (void)ignored;
}

// Points argv (or envp) at `count` NUL-terminated strings from `cursor`;
// false when they do not fit in [cursor, end).
bool take_words(char*& cursor, const char* end, std::int32_t count, std::vector<char*>& words) noexcept {
  for (std::int32_t i = 0; i < count; ++i) {
    char* nul = static_cast<char*>(std::memchr(cursor, '\0', static_cast<std::size_t>(end - cursor)));
    if (nul == nullptr) return false;
    words[static_cast<std::size_t>(i)] = cursor;
    cursor = nul + 1;
  }
  words[static_cast<std::size_t>(count)] = nullptr;
  return true;
}

bool skip_word(char*& cursor, const char* end) noexcept {
  char* nul = static_cast<char*>(std::memchr(cursor, '\0', static_cast<std::size_t>(end - cursor)));
  if (nul == nullptr) return false;
  cursor = nul + 1;
  return true;
}

// A prepared sandbox waits here, locked down, for its command: the strings
// land in the buffer sized before the clone, the standard descriptors are
// installed as an ordinary launch installs them, and the working directory
// is entered (path rules do not govern chdir; the mount table decides what
// exists). EOF means the supervisor gave the sandbox up: PID 1 leaves, and
// the namespace with it.
void receive_command(prepared_launch& launch) noexcept {
  std::vector<char>& buffer = launch.command_buffer;
  iovec io{buffer.data(), buffer.size()};
  scm_rights_space space;
  msghdr message = receiving_message(io, space);
  ssize_t n;
  do {
    n = ::recvmsg(launch.command_receive_fd, &message, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  if (n <= 0) ::_exit(125);
  int fds[3] = {-1, -1, -1};
  const std::size_t received = take_rights(message, fds, 3);
  prepared_command_header header;
  if ((message.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0 || static_cast<std::size_t>(n) < sizeof header) {
    fail(launch, init_step::stdio, EMSGSIZE);
  }
  std::memcpy(&header, buffer.data(), sizeof header);
  char* cursor = buffer.data() + sizeof header;
  const char* end = buffer.data() + n;
  char* working_directory = cursor;
  if (header.argc < 1 || header.envc < 0 ||
      static_cast<std::size_t>(header.argc) + static_cast<std::size_t>(header.envc) > prepared_command_max_words ||
      !skip_word(cursor, end) || !take_words(cursor, end, header.argc, launch.argv) ||
      !take_words(cursor, end, header.envc, launch.envp)) {
    fail(launch, init_step::fork_command, EINVAL);
  }
  stdio_handoff stdio = header.stdio;
  for (int slot = 0; slot < 3; ++slot) {
    const std::int32_t index = header.fd_index[slot];
    stdio.child_fd[slot] = index >= 0 && static_cast<std::size_t>(index) < received ? fds[index] : -1;
  }
  for (int& fd : stdio.supervisor_fd) fd = -1;  // PID 1 never held the supervisor's relay ends
  stdio.any_terminal = false;                   // a prepared command gets no private pty
  int no_master = -1;
  if (int err = install_stdio(stdio, &no_master); err != 0) fail(launch, init_step::stdio, err);
  if (::chdir(working_directory) != 0) fail(launch, init_step::working_directory, errno);
  ::close(launch.command_receive_fd);
  launch.deadline_ns = header.deadline_ns;
}

}  // namespace

const char* describe_step(init_step step) noexcept {
  switch (step) {
    case init_step::wait_for_supervisor: return "waiting for the supervisor";
    case init_step::identity_maps: return "writing the user namespace's uid/gid maps";
    case init_step::hostname: return "setting the UTS namespace's host name";
    case init_step::mount_private: return "making the mount namespace private";
    case init_step::staging_root: return "creating the staging root";
    case init_step::pivot_staging: return "entering the staging root";
    case init_step::new_root: return "creating the new root";
    case init_step::proc: return "mounting /proc";
    case init_step::dev: return "building the private /dev";
    case init_step::mount_op: return "applying a mount";
    case init_step::mount_identity:
      return "binding a path that is no longer the object the plan was compiled for (it was moved or replaced)";
    case init_step::finalize_root: return "making the new root read-only";
    case init_step::pivot_new_root: return "entering the new root";
    case init_step::loopback: return "bringing up loopback";
    case init_step::working_directory: return "changing to the working directory";
    case init_step::no_new_privs: return "setting no_new_privs";
    case init_step::landlock: return "applying the Landlock ruleset";
    case init_step::capabilities: return "dropping capabilities";
    case init_step::seccomp: return "installing the seccomp filter";
    case init_step::signals: return "installing signal forwarding";
    case init_step::fork_command: return "starting the command";
    case init_step::broker_listeners: return "opening the network broker's listeners";
    case init_step::rlimits: return "setting a resource limit (setrlimit)";
    case init_step::stdio: return "installing the standard descriptors (private pty, relay pipes)";
    case init_step::cgroup_namespace: return "creating the cgroup namespace (after joining the run's cgroup)";
  }
  return "unknown step";
}

void run_sandbox_init(prepared_launch& launch) noexcept {
  const linux_plan_payload& plan = *launch.payload;
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  char byte = 0;
  // The supervisor may have died before PR_SET_PDEATHSIG took effect: then
  // its end of the pipe is closed and this read sees EOF.
  if (::read(launch.sync_read_fd, &byte, 1) != 1) ::_exit(125);
  ::close(launch.sync_read_fd);
  // In the run's cgroup now (the supervisor wrote it before the byte): the
  // cgroup namespace is rooted there (namespaces.h).
  if (::unshare(static_cast<int>(namespaces_after_cgroup_join)) != 0) fail(launch, init_step::cgroup_namespace, errno);

  if (!write_file("/proc/self/setgroups", "deny") || !write_file("/proc/self/uid_map", launch.uid_map.c_str()) ||
      !write_file("/proc/self/gid_map", launch.gid_map.c_str())) {
    fail(launch, init_step::identity_maps, errno);
  }
  // PID 1 is a copy of cordon: its memory holds the host environment. Not
  // dumpable means the command cannot read /proc/1/environ or /proc/1/mem.
  // (Only after the maps: a non-dumpable process's /proc/self files belong
  // to root, so an unprivileged one could no longer write its uid_map.)
  if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) fail(launch, init_step::identity_maps, errno);
  if (::sethostname("cordon", 6) != 0) fail(launch, init_step::hostname, errno);
  if (plan.loopback_up) loopback_congestion_control();
  int broker_listeners[4] = {-1, build_root(launch), -1, -1};
  if (plan.loopback_up) bring_up_loopback(launch);
  if (plan.network_broker) {
    // Created here, before Landlock and seccomp, served outside: the
    // supervisor's broker accepts on them directly (src/broker/broker.h).
    broker_listeners[0] = open_broker_tcp_listener(launch);
    broker_listeners[2] = open_broker_transparent_listener(launch);
    broker_listeners[3] = open_broker_dns_socket(launch);
    if (!send_descriptors(launch.broker_send_fd, broker_listeners, 4)) {
      fail(launch, init_step::broker_listeners, errno);
    }
    for (int fd : broker_listeners) ::close(fd);
  }
  if (launch.broker_send_fd >= 0) ::close(launch.broker_send_fd);
  // stdio (stdio_plan.h): in the final root, before anything of the command
  // exists. A prepared sandbox gets them with its command (receive_command).
  const bool prepared = launch.command_receive_fd >= 0;
  if (!prepared) {
    int pty_master = -1;
    if (int err = install_stdio(launch.stdio, &pty_master); err != 0) fail(launch, init_step::stdio, err);
    if (pty_master >= 0) {
      if (!send_descriptors(launch.stdio.pty_send_fd, &pty_master, 1)) fail(launch, init_step::stdio, errno);
      ::close(pty_master);
    }
    if (launch.stdio.pty_send_fd >= 0) ::close(launch.stdio.pty_send_fd);
    if (::chdir(launch.working_directory.c_str()) != 0) fail(launch, init_step::working_directory, errno);
  }

  reset_dispositions();  // before seccomp: 64 calls through no filter
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail(launch, init_step::no_new_privs, errno);
  if (plan.landlock.abi > 0) {
    int failed_rule = -1;
    int err = apply_landlock(plan.landlock, nullptr, &failed_rule);
    if (err != 0) fail(launch, init_step::landlock, err, failed_rule);
  }
  if (int err = drop_all_capabilities(); err != 0) fail(launch, init_step::capabilities, err);
  int listener = -1;
  if (int err = install_seccomp_program(plan.seccomp, &listener); err != 0) fail(launch, init_step::seccomp, err);
  // The listener answers for every blocked call: it must leave the sandbox
  // before the command exists, and no copy may stay here.
  if (listener >= 0) {
    if (!send_descriptors(launch.notify_send_fd, &listener, 1)) fail(launch, init_step::seccomp, errno);
    ::close(listener);
  }
  if (launch.notify_send_fd >= 0) ::close(launch.notify_send_fd);

  // The supervisor forwards SIGINT/SIGTERM/SIGHUP/SIGQUIT here; PID 1 only
  // receives signals it handles, and passes them to the whole tree.
  struct sigaction action {};
  action.sa_handler = forward_signal;
  ::sigemptyset(&action.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) {
    if (::sigaction(sig, &action, nullptr) != 0) fail(launch, init_step::signals, errno);
  }
  sigset_t empty;
  ::sigemptyset(&empty);
  ::sigprocmask(SIG_SETMASK, &empty, nullptr);
  if (prepared) {
    report(launch, init_message_kind::ready);
    receive_command(launch);
  }

  int exec_pipe[2];
  if (::pipe2(exec_pipe, O_CLOEXEC) != 0) fail(launch, init_step::fork_command, errno);
  // vfork: the child borrows PID 1's memory until it execs, instead of copying
  // the page tables of a process the size of cordon. Safe here: the child
  // only makes system calls on prepared data, changes no memory PID 1 reads
  // afterwards (environ aside, which PID 1 never uses), and ends in exec or
  // _exit. Descriptors and signal handlers are not shared with it.
  pid_t command = ::vfork();
  if (command < 0) fail(launch, init_step::fork_command, errno);
  if (command == 0) {
    ::close(exec_pipe[0]);
    exec_command(launch, exec_pipe[1]);
  }
  ::close(exec_pipe[1]);
  arm_deadline(launch);
  command_failure failure;
  ssize_t n;
  do {
    n = ::read(exec_pipe[0], &failure, sizeof failure);
  } while (n < 0 && errno == EINTR);
  ::close(exec_pipe[0]);

  init_message message;
  if (n == static_cast<ssize_t>(sizeof failure)) {
    message.kind = failure.kind == command_failure_kind::rlimit ? init_message_kind::setup_failed
                                                                : init_message_kind::exec_failed;
    message.step = failure.kind == command_failure_kind::rlimit ? init_step::rlimits : init_step::fork_command;
    message.error = failure.error;
    message.op_index = failure.index;
  }
  // Reap everything; the command's own status is the run's.
  int status = 0;
  while (true) {
    int child_status = 0;
    pid_t pid = ::waitpid(-1, &child_status, 0);
    if (pid == command) {
      status = child_status;
      break;
    }
    if (pid < 0 && errno != EINTR) break;
  }
  // What the command left behind is killed now, and reaped so that its CPU time is counted.
  kill_and_reap_namespace();
  if (n != static_cast<ssize_t>(sizeof failure)) {
    struct rusage usage {};
    ::getrusage(RUSAGE_CHILDREN, &usage);
    message.kind = init_message_kind::exited;
    message.wait_status = status;
    message.user_cpu_us = usage.ru_utime.tv_sec * 1000000 + usage.ru_utime.tv_usec;
    message.system_cpu_us = usage.ru_stime.tv_sec * 1000000 + usage.ru_stime.tv_usec;
    message.max_rss_kib = usage.ru_maxrss;
  }
  ssize_t ignored = ::write(launch.status_write_fd, &message, sizeof message);
  (void)ignored;
  // Exiting as PID 1 makes the kernel SIGKILL every remaining process here.
  ::_exit(0);
}

}  // namespace cordon::linux_impl
