// stdio_plan.cpp — classifying the caller's descriptors 0-2 (stdio_plan.h).
#include "linux/stdio_plan.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "linux/pty.h"

namespace cordon::linux_impl {
namespace {

// statfs(2) f_type of the kernel-internal filesystems that hold anonymous
// pipes and sockets (include/uapi/linux/magic.h). A named FIFO lives on the
// host filesystem it was made on, so it is not one of these.
constexpr long kPipefsMagic = 0x50495045;
constexpr long kSockfsMagic = 0x534F434B;

const char* slot_name(int slot) {
  static constexpr const char* names[] = {"standard input", "standard output", "standard error"};
  return names[slot];
}

error refuse(int slot, const char* what) {
  return make_error(error_code::usage_error,
                    std::string(slot_name(slot)) + " (descriptor " + std::to_string(slot) + ") is " + what +
                        ": the command could open files beneath it past the sandbox's view; redirect from or to a "
                        "file, a pipe or /dev/null instead");
}

// cordon is the terminal's foreground job: its own process group, in the
// foreground. Not under `make -j` (several runs would share the terminal and
// one could save another's raw settings as the ones to restore), not in the
// background, not inside a script's process group. A terminal that is not
// our controlling terminal (ENOTTY) has no job control to respect.
bool foreground_job(int fd) {
  pid_t group = ::tcgetpgrp(fd);
  if (group < 0) return true;
  return group == ::getpgrp() && ::getpgrp() == ::getpid();
}

}  // namespace

result<stdio_plan> plan_stdio(bool allow_terminal) {
  stdio_plan plan;
  struct stat st[3] {};
  bool open[3] = {false, false, false};
  for (int slot = 0; slot < 3; ++slot) {
    int flags = ::fcntl(slot, F_GETFL);
    if (flags < 0) continue;  // closed: stays closed
    open[slot] = true;
    if (flags & O_PATH) return refuse(slot, "an O_PATH descriptor");
    struct statfs fs {};
    if (::fstatfs(slot, &fs) == 0 && (fs.f_type == kPipefsMagic || fs.f_type == kSockfsMagic)) continue;
    if (::fstat(slot, &st[slot]) != 0) {
      return make_error(error_code::launch_failed, std::string("fstat of ") + slot_name(slot), {}, errno);
    }
    if (S_ISDIR(st[slot].st_mode)) return refuse(slot, "a directory");
    if (S_ISCHR(st[slot].st_mode) && st[slot].st_rdev == makedev(1, 3)) {
      plan.route[slot] = stdio_route::dev_null;
    } else {
      plan.route[slot] = stdio_route::relay;
    }
  }
  // An interactive run (stdin and stdout on one terminal, cordon its
  // foreground job): a private pty, on every slot on that terminal.
  if (allow_terminal && plan.route[0] == stdio_route::relay && plan.route[1] == stdio_route::relay &&
      S_ISCHR(st[0].st_mode) && st[1].st_rdev == st[0].st_rdev && ::isatty(0) && ::isatty(1) && foreground_job(0)) {
    for (int slot = 0; slot < 3; ++slot) {
      if (plan.route[slot] == stdio_route::relay && st[slot].st_rdev == st[0].st_rdev && ::isatty(slot)) {
        plan.route[slot] = stdio_route::terminal;
      }
    }
  }
  for (int slot = 1; slot < 3; ++slot) {
    if (plan.route[slot] != stdio_route::relay) continue;
    for (int earlier = 1; earlier < slot; ++earlier) {
      if (open[earlier] && plan.route[earlier] == stdio_route::relay && st[earlier].st_dev == st[slot].st_dev &&
          st[earlier].st_ino == st[slot].st_ino) {
        plan.same_as[slot] = earlier;
        break;
      }
    }
  }
  return plan;
}

int install_stdio(const stdio_handoff& handoff, int* master) noexcept {
  *master = -1;
  int slave = -1;
  for (int fd : handoff.supervisor_fd) {
    if (fd >= 0) ::close(fd);
  }
  if (handoff.any_terminal) {
    int err = open_private_pty(handoff.size, master, &slave);
    if (err != 0) return err;
  }
  for (int slot = 0; slot < 3; ++slot) {
    int source = -1;
    bool opened = false;
    if (handoff.child_fd[slot] >= 0) {
      source = handoff.child_fd[slot];
    } else if (handoff.terminal[slot]) {
      source = slave;
    } else if (handoff.dev_null[slot]) {
      // The sandbox's /dev/null is a read-only bind: its mode cannot be changed through it.
      static constexpr int kAccess[] = {O_RDONLY, O_WRONLY, O_WRONLY};
      source = ::open("/dev/null", kAccess[slot] | O_CLOEXEC);
      if (source < 0) return errno;
      opened = true;
    }
    if (source < 0) continue;
    if (::dup2(source, slot) < 0) return errno;
    if (opened) ::close(source);
  }
  for (int slot = 0; slot < 3; ++slot) {
    if (handoff.child_fd[slot] > 2) ::close(handoff.child_fd[slot]);
  }
  if (slave > 2) ::close(slave);
  return 0;
}

}  // namespace cordon::linux_impl
