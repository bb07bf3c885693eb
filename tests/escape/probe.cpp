// probe — performs named escape attempts and prints what the kernel said.
//
// In the style of bubblewrap's tests/try-syscall.c: each attempt is one
// system call (or a short, fixed sequence), and its result is printed as
// "<action> OK" or "<action> <ERRNO-NAME>" (plus a detail for some), one line
// per action. Several actions run in order when separated by "+":
//
//   probe mount-tmpfs /tmp/x + mkdir /tmp/x
//   mount-tmpfs EPERM
//   mkdir OK
//
// The tests in this directory run it inside `cordon run` and compare the
// output exactly. Every loop here is bounded.
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/capability.h>
#include <linux/io_uring.h>
#include <linux/keyctl.h>
#include <linux/netlink.h>
#include <linux/perf_event.h>
#include <linux/userfaultfd.h>
#include <net/ethernet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/ipc.h>
#include <sys/klog.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/shm.h>
#include <sys/swap.h>
#include <sys/xattr.h>
#include <sys/personality.h>
#include <sys/quota.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif

namespace {

using args_t = std::vector<std::string>;

// The result text of one action, e.g. "OK", "EPERM", "OK /".
std::string err_name(int err) {
  const char* name = ::strerrorname_np(err);
  return name != nullptr ? name : "E" + std::to_string(err);
}

// -1 with errno → its name; anything else → "OK".
std::string rc(long result) { return result < 0 ? err_name(errno) : "OK"; }

int to_int(const std::string& s) { return static_cast<int>(std::strtol(s.c_str(), nullptr, 0)); }

void sleep_ms(long ms) {
  timespec ts{ms / 1000, (ms % 1000) * 1000000L};
  while (::nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

// ---- filesystem -----------------------------------------------------------

std::string open_read(const args_t& a) {
  int fd = ::open(a[0].c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return err_name(errno);
  char c;
  ssize_t n = ::read(fd, &c, 1);
  int err = errno;
  ::close(fd);
  return n < 0 ? "read " + err_name(err) : "OK";
}

// Opens for writing without creating or writing anything: a successful open
// of a host file is already the escape, and nothing is damaged.
std::string open_write(const args_t& a) {
  int fd = ::open(a[0].c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return err_name(errno);
  ::close(fd);
  return "OK";
}

// open(2) with the flags a word names, nothing written: "rdwr", "trunc"
// (O_RDONLY|O_TRUNC), "append" (O_WRONLY|O_APPEND|O_CREAT, the shell's >>),
// "rdonly-creat" (O_RDONLY|O_CREAT), "rdonly-append", "rdonly".
std::string open_as(const args_t& a) {
  int flags = -1;
  if (a[1] == "rdwr") flags = O_RDWR;
  if (a[1] == "trunc") flags = O_RDONLY | O_TRUNC;
  if (a[1] == "append") flags = O_WRONLY | O_APPEND | O_CREAT;
  if (a[1] == "rdonly-creat") flags = O_RDONLY | O_CREAT;
  if (a[1] == "rdonly-append") flags = O_RDONLY | O_APPEND;
  if (a[1] == "rdonly") flags = O_RDONLY;
  if (flags < 0) return "EINVAL";
  int fd = ::open(a[0].c_str(), flags | O_CLOEXEC, 0644);
  if (fd < 0) return err_name(errno);
  ::close(fd);
  return "OK";
}

// creat(2), and openat(2) O_WRONLY of a name relative to a directory descriptor.
std::string do_creat(const args_t& a) {
  int fd = static_cast<int>(::syscall(SYS_creat, a[0].c_str(), 0644));
  if (fd < 0) return err_name(errno);
  ::close(fd);
  return "OK";
}

std::string openat_write(const args_t& a) {
  int dir = ::open(a[0].c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return "dir " + err_name(errno);
  int fd = ::openat(dir, a[1].c_str(), O_WRONLY | O_CLOEXEC);
  int err = errno;
  ::close(dir);
  if (fd < 0) return err_name(err);
  ::close(fd);
  return "OK";
}

// openat2(2) O_WRONLY (its flags are in memory; root callers get ENOSYS).
std::string openat2_write(const args_t& a) {
  struct {
    std::uint64_t flags, mode, resolve;
  } how{static_cast<std::uint64_t>(O_WRONLY | O_CLOEXEC), 0, 0};
  int fd = static_cast<int>(::syscall(SYS_openat2, AT_FDCWD, a[0].c_str(), &how, sizeof how));
  if (fd < 0) return err_name(errno);
  ::close(fd);
  return "OK";
}

std::string do_truncate(const args_t& a) { return ::truncate(a[0].c_str(), 0) == 0 ? "OK" : err_name(errno); }

std::string create(const args_t& a) {
  int fd = ::open(a[0].c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return err_name(errno);
  ssize_t n = ::write(fd, "x", 1);
  int err = errno;
  ::close(fd);
  return n == 1 ? "OK" : "write " + err_name(err);
}

std::string write_text(const args_t& a) {
  int fd = ::open(a[0].c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return err_name(errno);
  ssize_t n = ::write(fd, a[1].data(), a[1].size());
  int err = errno;
  ::close(fd);
  return n == static_cast<ssize_t>(a[1].size()) ? "OK" : "write " + err_name(err);
}

std::string cat(const args_t& a) {
  int fd = ::open(a[0].c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return err_name(errno);
  char buf[256];
  ssize_t n = ::read(fd, buf, sizeof buf - 1);
  int err = errno;
  ::close(fd);
  if (n < 0) return "read " + err_name(err);
  std::string text(buf, static_cast<std::size_t>(n));
  while (!text.empty() && (text.back() == '\n' || text.back() == '\0')) text.pop_back();
  std::replace(text.begin(), text.end(), '\n', '|');
  std::replace(text.begin(), text.end(), '\0', '|');
  return "OK " + text;
}

std::string read_link(const args_t& a) {
  char buf[4096];
  ssize_t n = ::readlink(a[0].c_str(), buf, sizeof buf - 1);
  if (n < 0) return err_name(errno);
  return "OK " + std::string(buf, static_cast<std::size_t>(n));
}

std::string list_dir(const args_t& a) {
  DIR* d = ::opendir(a[0].c_str());
  if (d == nullptr) return err_name(errno);
  std::vector<std::string> names;
  for (int i = 0; i < 100000; ++i) {
    errno = 0;
    dirent* e = ::readdir(d);
    if (e == nullptr) break;
    std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  int err = errno;
  ::closedir(d);
  if (err != 0) return "readdir " + err_name(err);
  std::sort(names.begin(), names.end());
  std::string out = "OK";
  for (std::size_t i = 0; i < names.size(); ++i) out += (i == 0 ? " " : ",") + names[i];
  return out;
}

// Numeric entries of /proc other than our own: the processes we can see.
std::string list_pids(const args_t&) {
  DIR* d = ::opendir("/proc");
  if (d == nullptr) return err_name(errno);
  std::vector<long> pids;
  for (int i = 0; i < 100000; ++i) {
    dirent* e = ::readdir(d);
    if (e == nullptr) break;
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    long pid = std::strtol(e->d_name, nullptr, 10);
    if (pid != ::getpid()) pids.push_back(pid);
  }
  ::closedir(d);
  std::sort(pids.begin(), pids.end());
  std::string out = "OK";
  for (std::size_t i = 0; i < pids.size(); ++i) out += (i == 0 ? " " : ",") + std::to_string(pids[i]);
  return out;
}

std::string stat_path(const args_t& a) {
  struct stat st {};
  return rc(::lstat(a[0].c_str(), &st));
}

std::string statvfs_flags(const args_t& a) {
  struct statvfs sv {};
  if (::statvfs(a[0].c_str(), &sv) != 0) return err_name(errno);
  std::string out = "OK";
  out += (sv.f_flag & ST_RDONLY) ? " ro" : " rw";
  if (sv.f_flag & ST_NOSUID) out += ",nosuid";
  if (sv.f_flag & ST_NODEV) out += ",nodev";
  return out;
}

std::string file_mode(const args_t& a) {
  struct stat st {};
  if (::stat(a[0].c_str(), &st) != 0) return err_name(errno);
  char buf[32];
  std::snprintf(buf, sizeof buf, "OK %04o", static_cast<unsigned>(st.st_mode & 07777));
  return buf;
}

std::string do_symlink(const args_t& a) { return rc(::symlink(a[0].c_str(), a[1].c_str())); }
std::string do_link(const args_t& a) { return rc(::link(a[0].c_str(), a[1].c_str())); }
std::string do_rename(const args_t& a) { return rc(::rename(a[0].c_str(), a[1].c_str())); }
std::string do_mkdir(const args_t& a) { return rc(::mkdir(a[0].c_str(), 0755)); }
std::string do_rmdir(const args_t& a) { return rc(::rmdir(a[0].c_str())); }
std::string do_unlink(const args_t& a) { return rc(::unlink(a[0].c_str())); }
std::string do_chdir(const args_t& a) { return rc(::chdir(a[0].c_str())); }
std::string do_chmod(const args_t& a) {
  return rc(::chmod(a[0].c_str(), static_cast<mode_t>(std::strtol(a[1].c_str(), nullptr, 8))));
}
std::string do_mkfifo(const args_t& a) { return rc(::mkfifo(a[0].c_str(), 0644)); }
std::string mknod_char(const args_t& a) {
  return rc(::mknod(a[0].c_str(), S_IFCHR | 0666, ::makedev(1, 3)));  // the null device
}
std::string mknod_block(const args_t& a) {
  return rc(::mknod(a[0].c_str(), S_IFBLK | 0666, ::makedev(8, 0)));  // the first SCSI disk
}

// ---- mounts, namespaces, privilege ------------------------------------------

std::string mount_tmpfs(const args_t& a) { return rc(::mount("none", a[0].c_str(), "tmpfs", 0, nullptr)); }
std::string mount_bind(const args_t& a) { return rc(::mount(a[0].c_str(), a[1].c_str(), nullptr, MS_BIND, nullptr)); }
std::string mount_remount_rw(const args_t& a) {
  return rc(::mount(nullptr, a[0].c_str(), nullptr, MS_REMOUNT | MS_BIND, nullptr));
}
std::string do_umount(const args_t& a) { return rc(::umount2(a[0].c_str(), MNT_DETACH)); }
std::string pivot_root(const args_t& a) { return rc(::syscall(SYS_pivot_root, a[0].c_str(), a[1].c_str())); }
std::string do_chroot(const args_t& a) { return rc(::chroot(a[0].c_str())); }
std::string fsopen(const args_t&) { return rc(::syscall(SYS_fsopen, "tmpfs", 0)); }
std::string open_tree(const args_t& a) {
  return rc(::syscall(SYS_open_tree, AT_FDCWD, a[0].c_str(), 1 /* OPEN_TREE_CLONE */));
}

std::string do_unshare(const args_t& a) {
  int flags = 0;
  const std::string& what = a[0];
  if (what == "user") flags = CLONE_NEWUSER;
  else if (what == "mount") flags = CLONE_NEWNS;
  else if (what == "net") flags = CLONE_NEWNET;
  else if (what == "pid") flags = CLONE_NEWPID;
  else if (what == "time") flags = CLONE_NEWTIME;
  else if (what == "files") flags = CLONE_FILES;  // not a namespace: still refused (any flags)
  return rc(::unshare(flags));
}

// Raw clone(2): the child exits at once; the parent reaps it.
std::string raw_clone(unsigned long flags) {
  long pid = ::syscall(SYS_clone, flags | SIGCHLD, nullptr, nullptr, nullptr, 0);
  if (pid < 0) return err_name(errno);
  if (pid == 0) ::_exit(0);
  int status = 0;
  ::waitpid(static_cast<pid_t>(pid), &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "OK" : "child failed";
}
std::string clone_newuser(const args_t&) { return raw_clone(CLONE_NEWUSER); }
std::string clone_newuser_newns(const args_t&) { return raw_clone(CLONE_NEWUSER | CLONE_NEWNS); }
std::string clone_newnet(const args_t&) { return raw_clone(CLONE_NEWNET); }
std::string clone_plain(const args_t&) { return raw_clone(0); }

struct clone3_args {
  std::uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, set_tid, set_tid_size,
      cgroup;
};
std::string clone3_newuser(const args_t&) {
  clone3_args args{};
  args.flags = CLONE_NEWUSER;
  args.exit_signal = SIGCHLD;
  long pid = ::syscall(SYS_clone3, &args, sizeof args);
  if (pid < 0) return err_name(errno);
  if (pid == 0) ::_exit(0);
  ::waitpid(static_cast<pid_t>(pid), nullptr, 0);
  return "OK";
}

std::string thread(const args_t&) {
  std::atomic<int> ran{0};
  std::thread t([&] { ran = 1; });
  t.join();
  return ran == 1 ? "OK" : "did not run";
}

std::string setns_own(const args_t& a) {
  std::string path = "/proc/self/ns/" + a[0];
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "open " + err_name(errno);
  std::string out = rc(::setns(fd, 0));
  ::close(fd);
  return out;
}

std::string capset_raise(const args_t&) {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  // CAP_SYS_ADMIN (21) into the effective, permitted and inheritable sets.
  data[0].effective = data[0].permitted = data[0].inheritable = 1U << CAP_SYS_ADMIN;
  return rc(::syscall(SYS_capset, &header, data));
}

std::string capget_effective(const args_t&) {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (::syscall(SYS_capget, &header, data) != 0) return err_name(errno);
  char buf[64];
  std::snprintf(buf, sizeof buf, "OK %08x%08x/%08x%08x", data[1].effective, data[0].effective, data[1].permitted,
                data[0].permitted);
  return buf;
}

std::string do_setuid(const args_t& a) { return rc(::setuid(static_cast<uid_t>(to_int(a[0])))); }
std::string do_setgid(const args_t& a) { return rc(::setgid(static_cast<gid_t>(to_int(a[0])))); }
std::string ids(const args_t&) {
  uid_t r, e, s;
  ::getresuid(&r, &e, &s);
  return "OK uid=" + std::to_string(r) + " euid=" + std::to_string(e);
}

std::string write_uid_map(const args_t&) {
  int fd = ::open("/proc/self/uid_map", O_WRONLY | O_CLOEXEC);
  if (fd < 0) return err_name(errno);
  const char map[] = "0 0 4294967295\n";
  ssize_t n = ::write(fd, map, sizeof map - 1);
  int err = errno;
  ::close(fd);
  return n < 0 ? err_name(err) : "OK";
}

std::string set_hostname(const args_t&) { return rc(::sethostname("escaped", 7)); }

// ---- processes ---------------------------------------------------------------

std::string ptrace_attach(const args_t& a) { return rc(::syscall(SYS_ptrace, 16 /* PTRACE_ATTACH */, to_int(a[0]), 0, 0)); }
std::string ptrace_seize(const args_t& a) { return rc(::syscall(SYS_ptrace, 0x4206 /* PTRACE_SEIZE */, to_int(a[0]), 0, 0)); }
std::string ptrace_traceme(const args_t&) { return rc(::syscall(SYS_ptrace, 0 /* PTRACE_TRACEME */, 0, 0, 0)); }

std::string vm_readv(const args_t& a) {
  char local[8];
  char remote_dummy[8] = {};
  iovec l{local, sizeof local}, r{remote_dummy, sizeof remote_dummy};
  return rc(::process_vm_readv(to_int(a[0]), &l, 1, &r, 1, 0));
}
std::string vm_writev(const args_t& a) {
  char local[8] = {};
  char remote_dummy[8] = {};
  iovec l{local, sizeof local}, r{remote_dummy, sizeof remote_dummy};
  return rc(::process_vm_writev(to_int(a[0]), &l, 1, &r, 1, 0));
}

std::string do_kill(const args_t& a) { return rc(::kill(to_int(a[0]), to_int(a[1]))); }

std::string pidfd_open(const args_t& a) {
  long fd = ::syscall(SYS_pidfd_open, to_int(a[0]), 0);
  if (fd < 0) return err_name(errno);
  ::close(static_cast<int>(fd));
  return "OK";
}

std::string pidfd_getfd(const args_t&) {
  long pfd = ::syscall(SYS_pidfd_open, ::getpid(), 0);
  if (pfd < 0) return "pidfd_open " + err_name(errno);
  long fd = ::syscall(SYS_pidfd_getfd, pfd, 0, 0);
  ::close(static_cast<int>(pfd));
  if (fd < 0) return err_name(errno);
  ::close(static_cast<int>(fd));
  return "OK";
}

// A child that signals its parent back: signals inside the sandbox work.
std::string kill_child(const args_t&) {
  pid_t pid = ::fork();
  if (pid < 0) return "fork " + err_name(errno);
  if (pid == 0) {
    ::pause();
    ::_exit(0);
  }
  int r = ::kill(pid, SIGTERM);
  int err = errno;
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (r != 0) return err_name(err);
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM ? "OK" : "child not killed";
}

// ---- kernel interfaces -----------------------------------------------------

std::string io_uring(const args_t&) {
  io_uring_params p{};
  long fd = ::syscall(SYS_io_uring_setup, 4, &p);
  if (fd < 0) return err_name(errno);
  ::close(static_cast<int>(fd));
  return "OK";
}

std::string bpf_prog(const args_t&) {
  // A socket-filter program "return 0".
  bpf_insn insns[2] = {};
  insns[0].code = BPF_ALU64 | BPF_MOV | BPF_K;
  insns[0].dst_reg = BPF_REG_0;
  insns[1].code = BPF_JMP | BPF_EXIT;
  char license[] = "GPL";
  bpf_attr attr{};
  attr.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
  attr.insn_cnt = 2;
  attr.insns = reinterpret_cast<std::uintptr_t>(insns);
  attr.license = reinterpret_cast<std::uintptr_t>(license);
  long fd = ::syscall(SYS_bpf, BPF_PROG_LOAD, &attr, sizeof attr);
  if (fd < 0) return err_name(errno);
  ::close(static_cast<int>(fd));
  return "OK";
}

std::string bpf_map(const args_t&) {
  bpf_attr attr{};
  attr.map_type = BPF_MAP_TYPE_ARRAY;
  attr.key_size = 4;
  attr.value_size = 4;
  attr.max_entries = 1;
  long fd = ::syscall(SYS_bpf, BPF_MAP_CREATE, &attr, sizeof attr);
  if (fd < 0) return err_name(errno);
  ::close(static_cast<int>(fd));
  return "OK";
}

std::string perf_event(const args_t&) {
  perf_event_attr attr{};
  attr.type = PERF_TYPE_SOFTWARE;
  attr.size = sizeof attr;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.exclude_kernel = 1;
  long fd = ::syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
  if (fd < 0) return err_name(errno);
  ::close(static_cast<int>(fd));
  return "OK";
}

std::string userfaultfd(const args_t&) {
  long fd = ::syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY);
  if (fd < 0) return err_name(errno);
  ::close(static_cast<int>(fd));
  return "OK";
}

std::string keyctl(const args_t&) { return rc(::syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_KEYRING, 0)); }
std::string add_key(const args_t&) {
  return rc(::syscall(SYS_add_key, "user", "cordon-escape", "x", 1, KEY_SPEC_PROCESS_KEYRING));
}

std::string open_by_handle(const args_t& a) {
  // The classic "shocker" handle: inode 2 (a root directory) of the filesystem
  // that holds the given path's mount.
  int mount_fd = ::open(a[0].c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (mount_fd < 0) return "open " + err_name(errno);
  std::uint32_t storage[8] = {};  // a file_handle with 8 bytes of handle
  auto* handle = reinterpret_cast<file_handle*>(storage);
  handle->handle_bytes = 8;
  handle->handle_type = 1;  // FILEID_INO32_GEN
  std::uint32_t ino = 2;
  std::memcpy(handle->f_handle, &ino, sizeof ino);
  long fd = ::syscall(SYS_open_by_handle_at, mount_fd, handle, O_RDONLY);
  int err = errno;
  ::close(mount_fd);
  if (fd < 0) return err_name(err);
  ::close(static_cast<int>(fd));
  return "OK";
}

std::string name_to_handle(const args_t& a) {
  std::uint32_t storage[40] = {};  // a file_handle with 128 bytes of handle
  auto* handle = reinterpret_cast<file_handle*>(storage);
  handle->handle_bytes = 128;
  int mount_id = 0;
  return rc(::syscall(SYS_name_to_handle_at, AT_FDCWD, a[0].c_str(), handle, &mount_id, 0));
}

std::string personality_set(const args_t&) {
  long r = ::syscall(SYS_personality, static_cast<unsigned long>(ADDR_NO_RANDOMIZE));
  return r < 0 ? err_name(errno) : "OK";
}
std::string personality_query(const args_t&) {
  long r = ::syscall(SYS_personality, 0xffffffffUL);
  if (r < 0) return err_name(errno);
  return "OK " + std::to_string(r);
}

// Runs `fn` in a child and reports how the child ended: a syscall through a
// foreign ABI kills the process, so it cannot report by itself.
template <class F>
std::string in_child(F fn) {
  std::fflush(stdout);
  pid_t pid = ::fork();
  if (pid < 0) return "fork " + err_name(errno);
  if (pid == 0) {
    long r = fn();
    ::_exit(r < 0 ? 1 : 0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) return std::string("killed ") + ::sigabbrev_np(WTERMSIG(status));
  return "returned " + std::to_string(WEXITSTATUS(status));
}

std::string int80(const args_t&) {
#if defined(__x86_64__)
  return in_child([] {
    long ret = 20;  // getpid in the i386 table
    asm volatile("int $0x80" : "+a"(ret) : : "memory");
    return ret;
  });
#else
  return "not x86_64";
#endif
}

std::string x32(const args_t&) {
#if defined(__x86_64__)
  return in_child([] { return ::syscall(0x40000000L | 39 /* getpid */); });
#else
  return "not x86_64";
#endif
}

// ---- terminal ------------------------------------------------------------

std::string tiocsti(const args_t& a) {
  char c = 'x';
  return rc(::ioctl(to_int(a[0]), TIOCSTI, &c));
}
std::string tiocsti_high_bits(const args_t& a) {
  char c = 'x';
  unsigned long request = 0x100000000UL | TIOCSTI;
  return rc(::syscall(SYS_ioctl, to_int(a[0]), request, &c));
}
std::string tioclinux(const args_t& a) {
  char sub = 2;  // TIOCL_SETSEL
  return rc(::ioctl(to_int(a[0]), TIOCLINUX, &sub));
}
std::string is_tty(const args_t& a) { return ::isatty(to_int(a[0])) ? "OK" : err_name(errno); }
std::string read_line(const args_t&) {
  std::string line;
  for (int i = 0; i < 4096; ++i) {
    char c;
    ssize_t n = ::read(0, &c, 1);
    if (n < 0) return err_name(errno);
    if (n == 0 || c == '\n') break;
    line += c;
  }
  return "OK " + line;
}

// ---- network ----------------------------------------------------------------

bool fill_inet(const std::string& host, int port, sockaddr_storage& ss, socklen_t& len) {
  std::memset(&ss, 0, sizeof ss);
  auto* v4 = reinterpret_cast<sockaddr_in*>(&ss);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&ss);
  if (::inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<std::uint16_t>(port));
    len = sizeof *v4;
    return true;
  }
  if (::inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<std::uint16_t>(port));
    len = sizeof *v6;
    return true;
  }
  return false;
}

std::string inet_attempt(const args_t& a, int type) {
  sockaddr_storage ss;
  socklen_t len;
  if (!fill_inet(a[0], to_int(a[1]), ss, len)) return "bad address";
  int fd = ::socket(ss.ss_family, type | SOCK_CLOEXEC, 0);
  if (fd < 0) return "socket " + err_name(errno);
  std::string out;
  if (type == SOCK_STREAM) {
    out = ::connect(fd, reinterpret_cast<sockaddr*>(&ss), len) == 0 ? "OK" : "connect " + err_name(errno);
  } else {
    out = ::sendto(fd, "escape", 6, 0, reinterpret_cast<sockaddr*>(&ss), len) == 6 ? "OK"
                                                                                  : "sendto " + err_name(errno);
  }
  ::close(fd);
  return out;
}
std::string tcp_connect(const args_t& a) { return inet_attempt(a, SOCK_STREAM); }
// TCP connect to <host> at the port a proxy variable names (the text after
// its last ':', e.g. HTTP_PROXY=http://127.0.0.1:41234).
std::string tcp_connect_env_port(const args_t& a) {
  const char* value = std::getenv(a[1].c_str());
  if (value == nullptr) return "unset";
  const std::string text = value;
  const auto colon = text.rfind(':');
  if (colon == std::string::npos) return "no port";
  return inet_attempt({a[0], text.substr(colon + 1)}, SOCK_STREAM);
}
std::string udp_send(const args_t& a) { return inet_attempt(a, SOCK_DGRAM); }

// Listen on the sandbox's own loopback and connect to it.
std::string tcp_local(const args_t& a) {
  sockaddr_storage ss;
  socklen_t len;
  if (!fill_inet(a[0], 0, ss, len)) return "bad address";
  int server = ::socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (server < 0) return "socket " + err_name(errno);
  if (::bind(server, reinterpret_cast<sockaddr*>(&ss), len) != 0) return "bind " + err_name(errno);
  if (::listen(server, 1) != 0) return "listen " + err_name(errno);
  ::getsockname(server, reinterpret_cast<sockaddr*>(&ss), &len);
  int client = ::socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  std::string out = ::connect(client, reinterpret_cast<sockaddr*>(&ss), len) == 0 ? "OK" : "connect " + err_name(errno);
  ::close(client);
  ::close(server);
  return out;
}

std::string socket_of(int family, int type, int protocol) {
  int fd = ::socket(family, type | SOCK_CLOEXEC, protocol);
  if (fd < 0) return err_name(errno);
  ::close(fd);
  return "OK";
}
std::string socket_netlink(const args_t&) { return socket_of(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE); }
std::string socket_raw(const args_t&) { return socket_of(AF_INET, SOCK_RAW, IPPROTO_ICMP); }
// An unprivileged ICMP echo socket (net.ipv4.ping_group_range), and SCTP.
std::string socket_ping(const args_t&) { return socket_of(AF_INET, SOCK_DGRAM, IPPROTO_ICMP); }
std::string socket_sctp(const args_t&) { return socket_of(AF_INET6, SOCK_STREAM, IPPROTO_SCTP); }
// listen(2) on an unbound TCP socket: the kernel binds a port on every address.
std::string tcp_listen_unbound(const args_t&) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return "socket " + err_name(errno);
  std::string out = ::listen(fd, 1) == 0 ? "OK" : "listen " + err_name(errno);
  ::close(fd);
  return out;
}
std::string socket_raw6(const args_t&) { return socket_of(AF_INET6, SOCK_RAW, IPPROTO_ICMPV6); }
std::string socket_packet(const args_t&) { return socket_of(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL)); }
std::string socket_vsock(const args_t&) { return socket_of(40 /* AF_VSOCK */, SOCK_STREAM, 0); }
std::string socket_alg(const args_t&) { return socket_of(38 /* AF_ALG */, SOCK_SEQPACKET, 0); }
std::string socketpair_inet(const args_t&) {
  int sv[2];
  return rc(::socketpair(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
}

std::string socketpair_unix(const args_t&) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return err_name(errno);
  char buf[4] = {};
  bool ok = ::write(sv[0], "ping", 4) == 4 && ::read(sv[1], buf, 4) == 4 && std::memcmp(buf, "ping", 4) == 0;
  ::close(sv[0]);
  ::close(sv[1]);
  return ok ? "OK" : "no data";
}

socklen_t unix_address(const std::string& name, bool abstract, sockaddr_un& addr) {
  std::memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  std::size_t offset = abstract ? 1 : 0;
  std::size_t n = std::min(name.size(), sizeof addr.sun_path - 1 - offset);
  std::memcpy(addr.sun_path + offset, name.data(), n);
  return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + offset + n + (abstract ? 0 : 1));
}

std::string unix_connect(const std::string& name, bool abstract) {
  sockaddr_un addr;
  socklen_t len = unix_address(name, abstract, addr);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return "socket " + err_name(errno);
  std::string out = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), len) == 0 ? "OK" : err_name(errno);
  ::close(fd);
  return out;
}
std::string named_connect(const args_t& a) { return unix_connect(a[0], false); }
std::string abstract_connect(const args_t& a) { return unix_connect(a[0], true); }

// Bind a socket inside the sandbox (abstract or named) and connect to it: the sandbox's own.
std::string local_connect(const std::string& name, bool abstract) {
  sockaddr_un addr;
  socklen_t len = unix_address(name, abstract, addr);
  int server = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (server < 0) return "socket " + err_name(errno);
  if (::bind(server, reinterpret_cast<sockaddr*>(&addr), len) != 0) return "bind " + err_name(errno);
  if (::listen(server, 1) != 0) return "listen " + err_name(errno);
  std::string out = unix_connect(name, abstract);
  ::close(server);
  if (!abstract) ::unlink(name.c_str());
  return out;
}
std::string abstract_local(const args_t& a) { return local_connect(a[0], true); }
std::string named_local(const args_t& a) { return local_connect(a[0], false); }

std::string unix_socket_of_type(int type) {
  int fd = ::socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
  if (fd < 0) return err_name(errno);
  ::close(fd);
  int sv[2];
  if (::socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, sv) != 0) return "socketpair " + err_name(errno);
  ::close(sv[0]);
  ::close(sv[1]);
  return "OK";
}
std::string socket_unix_dgram(const args_t&) { return unix_socket_of_type(SOCK_DGRAM); }
// socket-unix-type stream|seqpacket|raw|rdm: socket(2) and socketpair(2) of
// that type (the kernel makes an AF_UNIX SOCK_RAW a datagram socket).
std::string socket_unix_type(const args_t& a) {
  const std::pair<const char*, int> types[] = {
      {"stream", SOCK_STREAM}, {"seqpacket", SOCK_SEQPACKET}, {"raw", SOCK_RAW}, {"rdm", SOCK_RDM}};
  for (const auto& [name, type] : types) {
    if (a[0] == name) return unix_socket_of_type(type);
  }
  return "unknown type " + a[0];
}

// The address race: connect(2) N times to ALLOWED while another thread keeps
// rewriting the same sockaddr buffer to FORBIDDEN and back. A supervisor that
// checked the address and then let the kernel re-read it would connect some
// of the attempts to FORBIDDEN. Prints how many connects succeeded (the
// test counts where they arrived).
std::string unix_race(const args_t& a) {
  const int tries = std::atoi(a[2].c_str());
  if (tries <= 0 || tries > 100000) return "bad count";
  sockaddr_un allowed, forbidden;
  socklen_t la = unix_address(a[0], false, allowed), lf = unix_address(a[1], false, forbidden);
  static sockaddr_un shared;
  shared = allowed;
  const socklen_t len = std::max(la, lf);
  std::atomic<bool> stop{false};
  std::thread flipper([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      std::memcpy(static_cast<void*>(&shared), &forbidden, sizeof shared);
      std::memcpy(static_cast<void*>(&shared), &allowed, sizeof shared);
    }
  });
  int connected = 0;
  for (int i = 0; i < tries; ++i) {
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) break;
    if (::connect(fd, reinterpret_cast<sockaddr*>(&shared), len) == 0) ++connected;
    ::close(fd);
  }
  stop = true;
  flipper.join();
  return "OK tries=" + std::to_string(tries) + (connected > 0 ? " some-connected" : " none-connected");
}

// ---- environment and descriptors -------------------------------------------

std::string get_env(const args_t& a) { return std::getenv(a[0].c_str()) == nullptr ? "unset" : "set"; }

// Does the file (an environ or cmdline) contain the text? The text is given
// reversed, so that the probe's own command line (which PID 1's shows too)
// does not contain it; it is never printed.
std::string file_contains(const args_t& a) {
  std::string needle(a[1].rbegin(), a[1].rend());
  int fd = ::open(a[0].c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return err_name(errno);
  std::string text;
  char buf[4096];
  for (int i = 0; i < 256; ++i) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      int err = errno;
      ::close(fd);
      return "read " + err_name(err);
    }
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return text.find(needle) != std::string::npos ? "OK found" : "OK absent";
}

std::string fd_read(const args_t& a) {
  char c;
  return rc(::read(to_int(a[0]), &c, 1));
}
std::string fd_stat(const args_t& a) {
  struct stat st {};
  return rc(::fstat(to_int(a[0]), &st));
}
std::string fd_openat(const args_t& a) {
  int fd = ::openat(to_int(a[0]), a[1].c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return err_name(errno);
  ::close(fd);
  return "OK";
}
std::string fd_list(const args_t&) {
  DIR* d = ::opendir("/proc/self/fd");
  if (d == nullptr) return err_name(errno);
  int own = ::dirfd(d);
  std::vector<int> fds;
  for (int i = 0; i < 100000; ++i) {
    dirent* e = ::readdir(d);
    if (e == nullptr) break;
    if (e->d_name[0] == '.') continue;
    int fd = to_int(e->d_name);
    if (fd != own) fds.push_back(fd);
  }
  ::closedir(d);
  std::sort(fds.begin(), fds.end());
  std::string out = "OK";
  for (std::size_t i = 0; i < fds.size(); ++i) out += (i == 0 ? " " : ",") + std::to_string(fds[i]);
  return out;
}

// Reopens an inherited descriptor through /proc/self/fd ("r" or "w").
std::string fd_reopen(const args_t& a) {
  std::string path = "/proc/self/fd/" + a[0];
  int fd = ::open(path.c_str(), (a[1] == "w" ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
  if (fd < 0) return err_name(errno);
  ::close(fd);
  return "OK";
}
// Metadata changes through a descriptor: no path walk, so no mount or Landlock rule sees them.
std::string fd_chmod(const args_t& a) {
  return rc(::fchmod(to_int(a[0]), static_cast<mode_t>(std::strtol(a[1].c_str(), nullptr, 8))));
}
std::string fd_chown(const args_t& a) { return rc(::fchown(to_int(a[0]), static_cast<uid_t>(-1), ::getgid())); }
std::string fd_utimes(const args_t& a) {
  timespec times[2] = {{0, 0}, {0, 0}};
  return rc(::futimens(to_int(a[0]), times));
}
std::string fd_setxattr(const args_t& a) { return rc(::fsetxattr(to_int(a[0]), "user.cordon-escape", "1", 1, 0)); }
// The same through a copy of the descriptor, and by path (/dev/stdout, /proc/self/fd/N).
std::string dup_chmod(const args_t& a) {
  int copy = ::dup(to_int(a[0]));
  if (copy < 0) return err_name(errno);
  std::string out = rc(::fchmod(copy, static_cast<mode_t>(std::strtol(a[1].c_str(), nullptr, 8))));
  ::close(copy);
  return out;
}
std::string path_utimes(const args_t& a) {
  timespec times[2] = {{0, 0}, {0, 0}};
  return rc(::utimensat(AT_FDCWD, a[0].c_str(), times, 0));
}
std::string path_chown(const args_t& a) { return rc(::chown(a[0].c_str(), static_cast<uid_t>(-1), ::getgid())); }
// The file behind a descriptor, as the command sees it: "OK pipe", "OK tty /dev/pts/0", "OK file", ...
std::string fd_kind(const args_t& a) {
  struct stat st {};
  int fd = to_int(a[0]);
  if (::fstat(fd, &st) != 0) return err_name(errno);
  if (S_ISFIFO(st.st_mode)) return "OK pipe";
  if (S_ISSOCK(st.st_mode)) return "OK socket";
  if (S_ISREG(st.st_mode)) return "OK file";
  if (S_ISDIR(st.st_mode)) return "OK directory";
  if (::isatty(fd)) {
    const char* name = ::ttyname(fd);
    return std::string("OK tty ") + (name != nullptr ? name : err_name(errno));
  }
  if (S_ISCHR(st.st_mode)) return "OK chardev " + std::to_string(major(st.st_rdev)) + ":" + std::to_string(minor(st.st_rdev));
  return "OK other";
}

// ---- System V IPC ------------------------------------------------------------

std::string shm_get(const args_t& a) {
  return rc(::shmget(static_cast<key_t>(std::strtol(a[0].c_str(), nullptr, 0)), 0, 0));
}
std::string shm_create(const args_t&) {
  int id = ::shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
  if (id < 0) return err_name(errno);
  ::shmctl(id, IPC_RMID, nullptr);
  return "OK";
}

// ---- host administration -------------------------------------------------------
// Each is called so that it would do nothing harmful even if it were allowed
// (bad magic numbers, null arguments, the current time).

std::string do_reboot(const args_t&) { return rc(::syscall(SYS_reboot, 0, 0, 0, nullptr)); }
std::string init_module(const args_t&) { return rc(::syscall(SYS_init_module, nullptr, 0, "")); }
std::string finit_module(const args_t&) { return rc(::syscall(SYS_finit_module, -1, "", 0)); }
std::string kexec_load(const args_t&) { return rc(::syscall(SYS_kexec_load, 0, 0, nullptr, 0xdead0000UL)); }
std::string do_acct(const args_t&) { return rc(::acct(nullptr)); }
std::string do_swapoff(const args_t&) { return rc(::swapoff("/cordon-escape-no-such-swap")); }
std::string clock_set(const args_t&) {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  return rc(::clock_settime(CLOCK_REALTIME, &now));
}
std::string do_syslog(const args_t&) {
  char buf[16];
  return rc(::klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, sizeof buf));
}
std::string quota(const args_t&) { return rc(::quotactl(QCMD(Q_SYNC, USRQUOTA), nullptr, 0, nullptr)); }

// ---- resources ---------------------------------------------------------------

// A bounded fork bomb: every process forks as long as the shared count is
// below `cap`, then waits. Prints how many processes were created (or the
// errno that stopped it), then blocks until something kills the tree.
std::string fork_bomb(const args_t& a) {
  long cap = to_int(a[0]);
  auto* count = static_cast<std::atomic<long>*>(
      ::mmap(nullptr, sizeof(std::atomic<long>), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  if (count == MAP_FAILED) return "mmap " + err_name(errno);
  new (count) std::atomic<long>(1);
  auto* first_error = count + 1;  // same page
  new (first_error) std::atomic<long>(0);
  pid_t leader = ::getpid();
  std::fflush(stdout);
  for (long i = 0; i < cap; ++i) {
    if (count->fetch_add(1) >= cap) {
      count->fetch_sub(1);
      break;
    }
    pid_t pid = ::fork();
    if (pid < 0) {
      count->fetch_sub(1);
      long expected = 0;
      first_error->compare_exchange_strong(expected, errno);
      break;
    }
    // parent and child both keep forking
  }
  if (::getpid() != leader) {
    for (int i = 0; i < 6000; ++i) sleep_ms(100);  // at most 10 minutes
    ::_exit(0);
  }
  sleep_ms(1000);  // let the tree settle
  long err = first_error->load();
  std::printf("fork-bomb %s %ld\n", err != 0 ? err_name(static_cast<int>(err)).c_str() : "capped", count->load());
  std::fflush(stdout);
  for (int i = 0; i < 6000; ++i) sleep_ms(100);
  return "not killed";
}

// Forks `n` children that sleep; reports how many started and the errno of the first refusal.
std::string fork_many(const args_t& a) {
  int n = to_int(a[0]);
  std::vector<pid_t> kids;
  int refused = 0, first_err = 0;
  for (int i = 0; i < n; ++i) {
    pid_t pid = ::fork();
    if (pid < 0) {
      if (first_err == 0) first_err = errno;
      ++refused;
      continue;
    }
    if (pid == 0) {
      sleep_ms(5000);
      ::_exit(0);
    }
    kids.push_back(pid);
  }
  for (pid_t k : kids) ::kill(k, SIGKILL);
  for (pid_t k : kids) ::waitpid(k, nullptr, 0);
  return (first_err != 0 ? err_name(first_err) : std::string("OK")) + " spawned=" + std::to_string(kids.size());
}

// Allocates and touches 1 MiB chunks up to `max` MiB; reports the errno at the ceiling.
std::string mem_bomb(const args_t& a) {
  long max_mib = to_int(a[0]);
  long got = 0;
  std::fflush(stdout);
  for (long i = 0; i < max_mib; ++i) {
    void* p = ::mmap(nullptr, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return err_name(errno) + " after " + (got >= 64 ? "64+" : std::to_string(got)) + " MiB";
    std::memset(p, 0x5a, 1 << 20);
    ++got;
  }
  return "OK " + std::to_string(got) + " MiB";
}

// Spins on the CPU for at most `seconds` of wall time.
std::string spin(const args_t& a) {
  long seconds = to_int(a[0]);
  std::fflush(stdout);
  timespec start{}, now{};
  ::clock_gettime(CLOCK_MONOTONIC, &start);
  volatile unsigned long x = 0;
  for (long i = 0; i < 1000000000000L; ++i) {
    x = x + 1;
    if ((i & 0xfffff) == 0) {
      ::clock_gettime(CLOCK_MONOTONIC, &now);
      if (now.tv_sec - start.tv_sec >= seconds) break;
    }
  }
  return "OK";
}

// Starts a daemon (double fork, new session, SIGTERM/SIGHUP ignored) that
// appends a byte to `file` every 50 ms for at most `seconds`.
std::string daemon_start(const args_t& a) {
  std::fflush(stdout);
  pid_t first = ::fork();
  if (first < 0) return "fork " + err_name(errno);
  if (first == 0) {
    ::setsid();
    if (::fork() != 0) ::_exit(0);
    ::signal(SIGTERM, SIG_IGN);
    ::signal(SIGHUP, SIG_IGN);
    ::signal(SIGINT, SIG_IGN);
    int null = ::open("/dev/null", O_RDWR);
    ::dup2(null, 0);
    ::dup2(null, 1);
    ::dup2(null, 2);
    long ticks = to_int(a[1]) * 20L;
    for (long i = 0; i < ticks; ++i) {
      int fd = ::open(a[0].c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
      if (fd >= 0) {
        ssize_t ignored = ::write(fd, ".", 1);
        (void)ignored;
        ::close(fd);
      }
      sleep_ms(50);
    }
    ::_exit(0);
  }
  ::waitpid(first, nullptr, 0);
  return "OK";
}

std::string do_sleep(const args_t& a) {
  sleep_ms(to_int(a[0]));
  return "OK";
}

struct action {
  const char* name;
  std::size_t argc;
  std::string (*fn)(const args_t&);
};

const action kActions[] = {
    {"open-read", 1, open_read},
    {"open-write", 1, open_write},
    {"open-as", 2, open_as},
    {"creat", 1, do_creat},
    {"openat-write", 2, openat_write},
    {"openat2-write", 1, openat2_write},
    {"truncate", 1, do_truncate},
    {"create", 1, create},
    {"write", 2, write_text},
    {"cat", 1, cat},
    {"readlink", 1, read_link},
    {"list", 1, list_dir},
    {"list-pids", 0, list_pids},
    {"stat", 1, stat_path},
    {"statvfs", 1, statvfs_flags},
    {"mode", 1, file_mode},
    {"symlink", 2, do_symlink},
    {"link", 2, do_link},
    {"rename", 2, do_rename},
    {"mkdir", 1, do_mkdir},
    {"rmdir", 1, do_rmdir},
    {"unlink", 1, do_unlink},
    {"chdir", 1, do_chdir},
    {"mkfifo", 1, do_mkfifo},
    {"chmod", 2, do_chmod},
    {"mknod-char", 1, mknod_char},
    {"mknod-block", 1, mknod_block},
    {"mount-tmpfs", 1, mount_tmpfs},
    {"mount-bind", 2, mount_bind},
    {"remount", 1, mount_remount_rw},
    {"umount", 1, do_umount},
    {"pivot-root", 2, pivot_root},
    {"chroot", 1, do_chroot},
    {"fsopen", 0, fsopen},
    {"open-tree", 1, open_tree},
    {"unshare", 1, do_unshare},
    {"clone-newuser", 0, clone_newuser},
    {"clone-newuser-newns", 0, clone_newuser_newns},
    {"clone-newnet", 0, clone_newnet},
    {"clone", 0, clone_plain},
    {"clone3-newuser", 0, clone3_newuser},
    {"thread", 0, thread},
    {"setns", 1, setns_own},
    {"capset-raise", 0, capset_raise},
    {"capget", 0, capget_effective},
    {"setuid", 1, do_setuid},
    {"setgid", 1, do_setgid},
    {"ids", 0, ids},
    {"write-uid-map", 0, write_uid_map},
    {"sethostname", 0, set_hostname},
    {"ptrace-attach", 1, ptrace_attach},
    {"ptrace-seize", 1, ptrace_seize},
    {"ptrace-traceme", 0, ptrace_traceme},
    {"vm-readv", 1, vm_readv},
    {"vm-writev", 1, vm_writev},
    {"kill", 2, do_kill},
    {"pidfd-open", 1, pidfd_open},
    {"pidfd-getfd", 0, pidfd_getfd},
    {"kill-child", 0, kill_child},
    {"io-uring", 0, io_uring},
    {"bpf-prog", 0, bpf_prog},
    {"bpf-map", 0, bpf_map},
    {"perf-event", 0, perf_event},
    {"userfaultfd", 0, userfaultfd},
    {"keyctl", 0, keyctl},
    {"add-key", 0, add_key},
    {"open-by-handle", 1, open_by_handle},
    {"name-to-handle", 1, name_to_handle},
    {"personality-noaslr", 0, personality_set},
    {"personality-query", 0, personality_query},
    {"int80", 0, int80},
    {"x32", 0, x32},
    {"tiocsti", 1, tiocsti},
    {"tiocsti-high", 1, tiocsti_high_bits},
    {"tioclinux", 1, tioclinux},
    {"isatty", 1, is_tty},
    {"read-line", 0, read_line},
    {"tcp-connect", 2, tcp_connect},
    {"udp-send", 2, udp_send},
    {"tcp-local", 1, tcp_local},
    {"tcp-connect-env-port", 2, tcp_connect_env_port},
    {"tcp-listen-unbound", 0, tcp_listen_unbound},
    {"socket-ping", 0, socket_ping},
    {"socket-sctp", 0, socket_sctp},
    {"socket-netlink", 0, socket_netlink},
    {"socket-raw", 0, socket_raw},
    {"socket-raw6", 0, socket_raw6},
    {"socket-packet", 0, socket_packet},
    {"socket-vsock", 0, socket_vsock},
    {"socket-alg", 0, socket_alg},
    {"socketpair-inet", 0, socketpair_inet},
    {"socketpair-unix", 0, socketpair_unix},
    {"unix-connect", 1, named_connect},
    {"abstract-connect", 1, abstract_connect},
    {"abstract-local", 1, abstract_local},
    {"unix-local", 1, named_local},
    {"socket-unix-dgram", 0, socket_unix_dgram},
    {"socket-unix-type", 1, socket_unix_type},
    {"unix-race", 3, unix_race},
    {"getenv", 1, get_env},
    {"contains-reversed", 2, file_contains},
    {"fd-read", 1, fd_read},
    {"fd-stat", 1, fd_stat},
    {"fd-openat", 2, fd_openat},
    {"fd-list", 0, fd_list},
    {"fd-reopen", 2, fd_reopen},
    {"fd-chmod", 2, fd_chmod},
    {"fd-chown", 1, fd_chown},
    {"fd-utimes", 1, fd_utimes},
    {"fd-setxattr", 1, fd_setxattr},
    {"dup-chmod", 2, dup_chmod},
    {"path-utimes", 1, path_utimes},
    {"path-chown", 1, path_chown},
    {"fd-kind", 1, fd_kind},
    {"shm-get", 1, shm_get},
    {"shm-create", 0, shm_create},
    {"reboot", 0, do_reboot},
    {"init-module", 0, init_module},
    {"finit-module", 0, finit_module},
    {"kexec-load", 0, kexec_load},
    {"acct", 0, do_acct},
    {"swapoff", 0, do_swapoff},
    {"clock-settime", 0, clock_set},
    {"syslog", 0, do_syslog},
    {"quotactl", 0, quota},
    {"fork-bomb", 1, fork_bomb},
    {"fork-many", 1, fork_many},
    {"mem-bomb", 1, mem_bomb},
    {"spin", 1, spin},
    {"daemon", 2, daemon_start},
    {"sleep", 1, do_sleep},
};

}  // namespace

int main(int argc, char** argv) {
  int i = 1;
  if (argc < 2) {
    std::fprintf(stderr, "usage: probe ACTION [ARGS...] [+ ACTION [ARGS...]]...\n");
    return 2;
  }
  while (i < argc) {
    std::string name = argv[i++];
    const action* found = nullptr;
    for (const auto& candidate : kActions) {
      if (name == candidate.name) found = &candidate;
    }
    if (found == nullptr) {
      std::fprintf(stderr, "probe: unknown action '%s'\n", name.c_str());
      return 2;
    }
    args_t args;
    while (i < argc && std::strcmp(argv[i], "+") != 0) args.emplace_back(argv[i++]);
    if (i < argc) ++i;  // the "+"
    if (args.size() != found->argc) {
      std::fprintf(stderr, "probe: %s takes %zu arguments\n", found->name, found->argc);
      return 2;
    }
    std::string result = found->fn(args);
    std::printf("%s %s\n", found->name, result.c_str());
    std::fflush(stdout);
  }
  return 0;
}
