// forwarded_signals.h — the signals the supervisor forwards to the tree,
// taken through a signalfd for one run.
#pragma once

#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "posix/unique_fd.h"

namespace cordon::linux_impl {

// Forwarded signals (SIGINT, SIGTERM, SIGHUP, SIGQUIT) are blocked in this
// thread and taken through a signalfd, never by their default action, until
// restore() (at the latest the destructor) puts the caller's mask back.
class forwarded_signals {
 public:
  forwarded_signals() {
    ::sigemptyset(&forwarded_);
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) ::sigaddset(&forwarded_, sig);
    ::sigprocmask(SIG_BLOCK, &forwarded_, &previous_);
    fd_.reset(::signalfd(-1, &forwarded_, SFD_CLOEXEC | SFD_NONBLOCK));
  }
  forwarded_signals(const forwarded_signals&) = delete;
  forwarded_signals& operator=(const forwarded_signals&) = delete;
  ~forwarded_signals() { restore(false); }

  int fd() const noexcept { return fd_.get(); }
  // `discard_pending`: drop forwarded signals still pending (the run is over
  // and they were forwarded) before unblocking them.
  void restore(bool discard_pending) noexcept {
    if (!blocked_) return;
    if (discard_pending) {
      signalfd_siginfo drained{};
      while (::read(fd_.get(), &drained, sizeof drained) > 0) {
      }
    }
    ::sigprocmask(SIG_SETMASK, &previous_, nullptr);
    blocked_ = false;
  }

 private:
  sigset_t forwarded_{}, previous_{};
  unique_fd fd_;
  bool blocked_ = true;
};

}  // namespace cordon::linux_impl
