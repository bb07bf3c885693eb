// relay.cpp — pipes and the pty master between the command and the caller's
// descriptors (relay.h).
//
// References: splice(2) (one side must be a pipe; EINVAL otherwise, so the
// master/terminal pair and some devices fall back to read/write),
// signalfd(2) (a signal is read only if every thread blocks it: it is
// blocked before the broker's thread exists), eventfd(2).
#include "linux/relay.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>
#include <string_view>

#include "linux/violations.h"  // receive_descriptor

namespace cordon::linux_impl {
namespace {

constexpr std::size_t kChunk = 1 << 16;
constexpr int kPausedRetryMs = 100;
// After the tree is gone every writer is closed, so each pipe reaches EOF at
// once; this only bounds a relay whose writer somehow survived.
constexpr int kDrainQuietMs = 1000;
constexpr int kStopSignals[3] = {SIGTSTP, SIGTTIN, SIGTTOU};

// A pipe end on descriptor 0-2 (the caller closed one) would be clobbered
// when PID 1 moves its ends onto 0-2.
unique_fd above_stdio(unique_fd fd) {
  if (fd.get() > 2) return fd;
  return unique_fd(::fcntl(fd.get(), F_DUPFD_CLOEXEC, 3));  // `fd` closes on return
}

void set_nonblocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

}  // namespace

result<void> stdio_relay::prepare(const stdio_plan& plan, stdio_handoff& handoff) {
  // Never stopped alone by job control (relay.h).
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  for (int i = 0; i < 3; ++i) ::sigaction(kStopSignals[i], &ignore, &saved_stop_[i]);
  shielded_ = true;
  if (plan.all_inherited()) return ok;
  utf8_terminal_ = core::locale_is_utf8(std::getenv("LC_ALL"), std::getenv("LC_CTYPE"), std::getenv("LANG"));

  for (int slot = 0; slot < 3; ++slot) {
    switch (plan.route[slot]) {
      case stdio_route::inherit: break;
      case stdio_route::dev_null: handoff.dev_null[slot] = true; break;
      case stdio_route::terminal:
        handoff.terminal[slot] = true;
        handoff.any_terminal = true;
        break;
      case stdio_route::relay: {
        if (plan.same_as[slot] != slot) {
          handoff.child_fd[slot] = handoff.child_fd[plan.same_as[slot]];
          break;
        }
        int ends[2];
        if (::pipe2(ends, O_CLOEXEC) != 0) {
          return make_error(error_code::launch_failed, "pipe2 for a relayed standard descriptor", {}, errno);
        }
        unique_fd read_end = above_stdio(unique_fd(ends[0]));
        unique_fd write_end = above_stdio(unique_fd(ends[1]));
        if (!read_end || !write_end) {
          return make_error(error_code::launch_failed, "moving a relay pipe above descriptor 2", {}, errno);
        }
        channel c;
        unique_fd sandbox_end;
        if (slot == 0) {
          c.from = 0;
          c.to = write_end.get();
          c.owned = std::move(write_end);
          c.input = true;
          c.from_terminal = ::isatty(0) == 1;
          sandbox_end = std::move(read_end);
        } else {
          c.from = read_end.get();
          c.owned = std::move(read_end);
          c.to = slot;
          if (::isatty(slot) == 1) filter_for_terminal(c);
          sandbox_end = std::move(write_end);
        }
        set_nonblocking(c.owned.get());
        handoff.child_fd[slot] = sandbox_end.get();
        sandbox_ends_.push_back(std::move(sandbox_end));
        channels_.push_back(std::move(c));
        break;
      }
    }
  }
  if (handoff.any_terminal) {
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) {
      return make_error(error_code::launch_failed, "socketpair for the pty master", {}, errno);
    }
    pty_receive_fd_.reset(pair[0]);
    handoff.pty_send_fd = pair[1];
    sandbox_ends_.emplace_back(pair[1]);
    terminal_fd_ = 0;
    terminal_out_fd_ = handoff.terminal[1] ? 1 : handoff.terminal[2] ? 2 : 0;
    ::ioctl(terminal_fd_, TIOCGWINSZ, &handoff.size);
    sigset_t wanted, previous;
    ::sigemptyset(&wanted);
    ::sigaddset(&wanted, SIGWINCH);
    ::sigaddset(&wanted, SIGCONT);
    ::pthread_sigmask(SIG_BLOCK, &wanted, &previous);
    masked_ = true;
    for (int sig : {SIGWINCH, SIGCONT}) {
      if (::sigismember(&previous, sig)) ::sigdelset(&wanted, sig);  // was blocked already: leave it so
    }
    unmask_ = wanted;
    ::sigemptyset(&wanted);
    ::sigaddset(&wanted, SIGWINCH);
    ::sigaddset(&wanted, SIGCONT);
    signal_fd_.reset(::signalfd(-1, &wanted, SFD_CLOEXEC | SFD_NONBLOCK));
    raw_.engage(terminal_fd_);
  }
  if (!channels_.empty() || handoff.any_terminal) {
    wake_fd_.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!wake_fd_) return make_error(error_code::launch_failed, "eventfd for the stdio relay", {}, errno);
  }
  std::size_t n = 0;
  for (const auto& c : channels_) handoff.supervisor_fd[n++] = c.owned.get();
  for (const unique_fd* fd : {&pty_receive_fd_, &signal_fd_, &wake_fd_}) {
    if (*fd) handoff.supervisor_fd[n++] = fd->get();
  }
  return ok;
}

void stdio_relay::start() {
  // The sandbox holds its own copies now (each end is listed once: slots
  // sharing a pipe share its end).
  sandbox_ends_.clear();
  if (wake_fd_) thread_ = std::thread([this] { run(); });
}

void stdio_relay::filter_for_terminal(channel& c) noexcept {
  c.filter = std::make_unique<core::terminal_filter>(utf8_terminal_);
  c.splice_ok = false;
}

void stdio_relay::close_channel(channel& c) noexcept {
  if (c.filter && c.to >= 0) {  // a string the command left open is closed for the terminal
    std::string tail;
    c.filter->finish(tail);
    if (!tail.empty()) {
      ssize_t ignored = ::write(c.to, tail.data(), tail.size());
      (void)ignored;
    }
  }
  c.owned.reset();
  c.from = c.to = -1;
  c.pending.clear();
  c.done = true;
}

void stdio_relay::adopt_master(int master) noexcept {
  set_nonblocking(master);
  master_.reset(master);
  channel in;
  in.from = terminal_fd_;
  in.to = master;
  in.input = true;
  in.from_terminal = true;
  channel out;
  out.from = master;
  out.to = terminal_out_fd_;
  filter_for_terminal(out);
  channels_.push_back(std::move(in));
  channels_.push_back(std::move(out));
}

void stdio_relay::on_signal() noexcept {
  signalfd_siginfo info{};
  while (::read(signal_fd_.get(), &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
    if (info.ssi_signo == SIGCONT) raw_.reapply();
    struct winsize size {};
    if (master_ && ::ioctl(terminal_fd_, TIOCGWINSZ, &size) == 0) ::ioctl(master_.get(), TIOCSWINSZ, &size);
  }
}

void stdio_relay::step(channel& c) noexcept {
  if (!c.pending.empty()) {
    ssize_t n = ::write(c.to, c.pending.data() + c.offset, c.pending.size() - c.offset);
    if (n > 0) {
      c.offset += static_cast<std::size_t>(n);
      if (c.offset == c.pending.size()) {
        c.pending.clear();
        c.offset = 0;
      }
    } else if (errno != EAGAIN && errno != EINTR) {
      close_channel(c);
    }
    return;
  }
  c.blocked = false;
  if (c.splice_ok) {
    ssize_t n = ::splice(c.from, nullptr, c.to, nullptr, kChunk, SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
    if (n > 0) return;
    if (n == 0) {
      close_channel(c);
      return;
    }
    if (errno == EAGAIN) {
      c.blocked = c.input;  // into a full pipe; out of an empty one is a spurious wake-up
      return;
    }
    if (errno == EINTR) return;
    if (errno != EINVAL && errno != ENOSYS) {
      if (errno == EIO && c.from_terminal) {
        c.paused = true;
      } else {
        close_channel(c);
      }
      return;
    }
    c.splice_ok = false;  // neither side takes splice: copy
  }
  char buffer[kChunk];
  ssize_t n = ::read(c.from, buffer, sizeof buffer);
  if (n == 0) {
    close_channel(c);
    return;
  }
  if (n < 0) {
    if (errno == EAGAIN || errno == EINTR) return;
    // A background process reading its terminal gets EIO (SIGTTIN is
    // ignored): wait until it is in the foreground again.
    if (errno == EIO && c.from_terminal) {
      c.paused = true;
      return;
    }
    close_channel(c);
    return;
  }
  std::string_view chunk(buffer, static_cast<std::size_t>(n));
  std::string cleaned;
  if (c.filter) {
    c.filter->feed(chunk, cleaned);
    chunk = cleaned;
  }
  std::size_t done = 0;
  while (done < chunk.size()) {
    ssize_t w = ::write(c.to, chunk.data() + done, chunk.size() - done);
    if (w > 0) {
      done += static_cast<std::size_t>(w);
    } else if (w < 0 && errno == EINTR) {
      continue;
    } else if (w < 0 && errno == EAGAIN) {
      // A non-blocking pipe or master: finish later.
      c.pending.assign(chunk.begin() + static_cast<std::ptrdiff_t>(done), chunk.end());
      c.offset = 0;
      return;
    } else {
      close_channel(c);  // the reader is gone (EPIPE) or the caller's file failed
      return;
    }
  }
}

void stdio_relay::run() noexcept {
  // A closed reader must end one channel, not the supervisor.
  sigset_t pipe_signal;
  ::sigemptyset(&pipe_signal);
  ::sigaddset(&pipe_signal, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);
  bool stopping = false;
  std::vector<pollfd> fds;
  std::vector<std::size_t> owner;  // index into channels_, or a marker below
  constexpr std::size_t kWake = ~std::size_t{0}, kSignal = kWake - 1, kPty = kWake - 2;
  while (true) {
    fds.clear();
    owner.clear();
    if (!stopping) {
      fds.push_back({wake_fd_.get(), POLLIN, 0});
      owner.push_back(kWake);
    }
    if (signal_fd_ && !stopping) {
      fds.push_back({signal_fd_.get(), POLLIN, 0});
      owner.push_back(kSignal);
    }
    if (pty_receive_fd_) {
      fds.push_back({pty_receive_fd_.get(), POLLIN, 0});
      owner.push_back(kPty);
    }
    bool paused = false, active = false;
    for (std::size_t i = 0; i < channels_.size(); ++i) {
      channel& c = channels_[i];
      if (c.done) continue;
      if (stopping && c.input) {
        close_channel(c);
        continue;
      }
      active = true;
      if (c.paused) {
        paused = true;
        continue;
      }
      bool out = !c.pending.empty() || c.blocked;
      fds.push_back({out ? c.to : c.from, static_cast<short>(out ? POLLOUT : POLLIN), 0});
      owner.push_back(i);
    }
    if (stopping && !active && !pty_receive_fd_) break;
    int timeout = stopping ? kDrainQuietMs : paused ? kPausedRetryMs : -1;
    int ready = ::poll(fds.data(), fds.size(), timeout);
    if (ready < 0 && errno != EINTR) break;
    if (ready == 0 && stopping) break;
    for (auto& c : channels_) c.paused = false;
    // Channels first: adopting the master below may grow channels_.
    for (std::size_t k = 0; k < fds.size(); ++k) {
      if (fds[k].revents == 0 || owner[k] >= channels_.size()) continue;
      channel& c = channels_[owner[k]];
      if (!c.done) step(c);
    }
    for (std::size_t k = 0; k < fds.size(); ++k) {
      if (fds[k].revents == 0) continue;
      if (owner[k] == kWake) {
        stopping = true;
      } else if (owner[k] == kSignal) {
        on_signal();
      } else if (owner[k] == kPty) {
        int master = receive_descriptor(pty_receive_fd_.get());
        pty_receive_fd_.reset();
        if (master >= 0) adopt_master(master);
      }
    }
  }
}

void stdio_relay::finish() {
  if (finished_) return;
  finished_ = true;
  if (thread_.joinable()) {
    std::uint64_t one = 1;
    ssize_t ignored = ::write(wake_fd_.get(), &one, sizeof one);
    (void)ignored;
    thread_.join();
  }
  for (auto& c : channels_) {
    if (!c.done) close_channel(c);
  }
  sandbox_ends_.clear();  // start() never ran
  for (unique_fd* fd : {&wake_fd_, &pty_receive_fd_, &master_}) fd->reset();
  raw_.restore();
  if (masked_) {
    signalfd_siginfo drained{};
    while (::read(signal_fd_.get(), &drained, sizeof drained) > 0) {
    }
    ::pthread_sigmask(SIG_UNBLOCK, &unmask_, nullptr);
  }
  signal_fd_.reset();
  if (shielded_) {
    for (int i = 0; i < 3; ++i) ::sigaction(kStopSignals[i], &saved_stop_[i], nullptr);
  }
}

stdio_relay::~stdio_relay() { finish(); }

}  // namespace cordon::linux_impl
