// apple_shim.cpp — the Linux side of the macOS launcher's platform shim
// (apple_shim.h says what each stand-in does and why it exists).
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "libproc.h"
#include "posix/unique_fd.h"
#include "sys/event.h"
#include "sys/sysctl.h"

// The shim's own confstr name; apple_shim.h is not included here, so that
// ::confstr below is the C library's.
namespace {
constexpr int darwin_user_temp_dir = 65537;

// One registration of a queue: the descriptor epoll watches and the event
// kevent() hands back when it is ready.
struct registration {
  cordon::unique_fd fd;
  struct kevent event {};
};

// Registrations by queue descriptor, then by the watched descriptor. A queue
// number the kernel hands out again belonged to a queue that was closed: its
// leftovers (a timer that never fired) are dropped in kqueue().
std::mutex registry_mutex;
std::map<int, std::map<int, registration>> registry;

int add(int kq, const struct kevent& change) {
  if ((change.flags & EV_ADD) == 0) {
    errno = EINVAL;
    return -1;
  }
  cordon::unique_fd fd;
  if (change.filter == EVFILT_PROC && change.fflags == NOTE_EXIT) {
    fd.reset(static_cast<int>(::syscall(SYS_pidfd_open, static_cast<pid_t>(change.ident), 0)));
    if (!fd) return -1;  // ESRCH: no such process
  } else if (change.filter == EVFILT_TIMER) {
    fd.reset(::timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC));
    if (!fd) return -1;
    itimerspec when{};
    when.it_value.tv_sec = static_cast<time_t>(change.data / 1000);
    when.it_value.tv_nsec = static_cast<long>(change.data % 1000) * 1000000L;
    if (when.it_value.tv_sec == 0 && when.it_value.tv_nsec == 0) when.it_value.tv_nsec = 1;  // 0 would disarm
    if (::timerfd_settime(fd.get(), 0, &when, nullptr) != 0) return -1;
  } else {
    errno = EINVAL;
    return -1;
  }
  epoll_event watch{};
  watch.events = EPOLLIN;
  watch.data.fd = fd.get();
  if (::epoll_ctl(kq, EPOLL_CTL_ADD, fd.get(), &watch) != 0) return -1;
  const int key = fd.get();
  registry[kq][key] = registration{std::move(fd), change};
  return 0;
}

}  // namespace

extern "C" std::size_t cordon_apple_shim_confstr(int name, char* buffer, std::size_t length) {
  if (name != darwin_user_temp_dir) return ::confstr(name, buffer, length);
  const char* tmpdir = std::getenv("TMPDIR");
  std::string value = tmpdir != nullptr && tmpdir[0] == '/' ? tmpdir : "/tmp";
  if (value.back() != '/') value += '/';  // Apple's value ends in a slash
  if (buffer != nullptr && length > 0) {
    const std::size_t n = value.size() < length - 1 ? value.size() : length - 1;
    std::memcpy(buffer, value.data(), n);
    buffer[n] = '\0';
  }
  return value.size() + 1;
}

extern "C" int proc_pidinfo(int pid, int flavor, std::uint64_t, void* buffer, int buffersize) {
  if (pid != ::getpid() || flavor != PROC_PIDLISTFDS || buffer == nullptr || buffersize < 0) {
    errno = EINVAL;
    return 0;
  }
  const cordon::unique_fd dir(::open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir) return 0;
  auto* out = static_cast<proc_fdinfo*>(buffer);
  const int capacity = buffersize / static_cast<int>(sizeof(proc_fdinfo));
  int count = 0;
  alignas(8) char entries[4096];
  for (;;) {
    const long got = ::syscall(SYS_getdents64, dir.get(), entries, sizeof(entries));
    if (got < 0) return 0;
    if (got == 0) break;
    for (long at = 0; at < got;) {
      // struct linux_dirent64: d_ino (8), d_off (8), d_reclen (2), d_type (1), d_name.
      unsigned short reclen = 0;
      std::memcpy(&reclen, entries + at + 16, sizeof(reclen));
      const char* name = entries + at + 19;
      at += reclen;
      if (name[0] < '0' || name[0] > '9') continue;  // "." and ".."
      const int fd = std::atoi(name);
      if (fd == dir.get()) continue;
      if (count == capacity) return count * static_cast<int>(sizeof(proc_fdinfo));  // full: the caller sees it
      out[count++] = proc_fdinfo{fd, 0};
    }
  }
  return count * static_cast<int>(sizeof(proc_fdinfo));
}

extern "C" int sysctlbyname(const char*, void*, std::size_t*, void*, std::size_t) {
  errno = ENOENT;
  return -1;
}

extern "C" int kqueue() {
  const int kq = ::epoll_create1(EPOLL_CLOEXEC);
  if (kq < 0) return -1;
  const std::lock_guard lock(registry_mutex);
  registry.erase(kq);  // a closed queue's leftovers
  return kq;
}

extern "C" int kevent(int kq, const struct kevent* changes, int nchanges, struct kevent* events, int nevents,
                      const struct timespec* timeout) {
  {
    const std::lock_guard lock(registry_mutex);
    for (int i = 0; i < nchanges; ++i) {
      if (add(kq, changes[i]) != 0) return -1;
    }
  }
  if (nevents <= 0) return 0;
  const int wait_ms = timeout == nullptr ? -1
                                         : static_cast<int>(timeout->tv_sec * 1000 + timeout->tv_nsec / 1000000);
  epoll_event ready{};
  const int n = ::epoll_wait(kq, &ready, 1, wait_ms);
  if (n <= 0) return n;
  const std::lock_guard lock(registry_mutex);
  auto& queue = registry[kq];
  const auto found = queue.find(ready.data.fd);
  if (found == queue.end()) {
    errno = EBADF;
    return -1;
  }
  events[0] = found->second.event;
  ::epoll_ctl(kq, EPOLL_CTL_DEL, found->first, nullptr);
  queue.erase(found);  // one-shot: closes the pidfd or timerfd
  return 1;
}
