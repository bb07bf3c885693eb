// capture.cpp — a run's output gathered with a cap, its stdin fed, its
// deadline kept (include/cordon/capture.h).
#include "cordon/capture.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <array>
#include <vector>

#include "posix/poll_timeout.h"
#include "posix/unique_fd.h"

namespace cordon {

capped_buffer::capped_buffer(std::uint64_t cap) : head_cap_(cap / 2), tail_cap_(cap - cap / 2) {}

void capped_buffer::append(std::string_view bytes) {
  total_ += bytes.size();
  if (head_.size() < head_cap_) {
    const std::size_t take = std::min<std::uint64_t>(head_cap_ - head_.size(), bytes.size());
    head_.append(bytes.substr(0, take));
    bytes.remove_prefix(take);
  }
  if (tail_cap_ == 0 || bytes.empty()) return;
  if (bytes.size() >= tail_cap_) {  // the chunk alone fills the tail
    ring_.assign(bytes.substr(bytes.size() - tail_cap_));
    ring_start_ = 0;
    return;
  }
  if (ring_.size() < tail_cap_) {
    const std::size_t room = tail_cap_ - ring_.size();
    const std::size_t take = std::min(room, bytes.size());
    ring_.append(bytes.substr(0, take));
    bytes.remove_prefix(take);
  }
  while (!bytes.empty()) {  // the ring is full: overwrite the oldest bytes
    const std::size_t n = std::min(bytes.size(), ring_.size() - ring_start_);
    ring_.replace(ring_start_, n, bytes.data(), n);
    ring_start_ = (ring_start_ + n) % ring_.size();
    bytes.remove_prefix(n);
  }
}

captured_output capped_buffer::take() {
  captured_output out;
  out.total_bytes = total_;
  out.data = std::move(head_);
  out.dropped_at = out.data.size();
  out.data.append(ring_, ring_start_, std::string::npos);
  out.data.append(ring_, 0, ring_start_);
  out.dropped_bytes = total_ - out.data.size();
  head_.clear();
  ring_.clear();
  ring_start_ = 0;
  return out;
}

namespace {

constexpr std::size_t chunk_size = 64 * 1024;
// After the run's report has arrived, or after the tree was killed, the pipes
// reach end of file as soon as its last process is gone; a descriptor passed
// out of the sandbox (SCM_RIGHTS to a host process) could keep one open, so
// the drain is bounded.
constexpr std::chrono::seconds drain_limit{5};

// Writes as much of `data` from `offset` as the pipe takes now. Returns false
// when the reader is gone (EPIPE) or the write failed otherwise.
bool feed(int fd, const std::string& data, std::size_t& offset) {
  sigset_t pipe_only, old;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_only, &old);
  ssize_t n = ::write(fd, data.data() + offset, data.size() - offset);
  const int saved = errno;
  if (n < 0 && saved == EPIPE) {
    const timespec zero{0, 0};
    while (sigtimedwait(&pipe_only, nullptr, &zero) == SIGPIPE) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (n > 0) offset += static_cast<std::size_t>(n);
  return n >= 0 || saved == EAGAIN || saved == EINTR;
}

struct stream_reader {
  unique_fd fd;
  int stream = 0;
  capped_buffer kept;
  // Reads one chunk; false at end of file or on an error.
  bool read_once(std::array<char, chunk_size>& buffer, const capture_options& options) {
    ssize_t n = ::read(fd.get(), buffer.data(), buffer.size());
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
    if (n <= 0) return false;
    const std::string_view bytes(buffer.data(), static_cast<std::size_t>(n));
    if (options.on_output) options.on_output(stream, bytes);
    kept.append(bytes);
    return true;
  }
};

}  // namespace

captured_run capture_run(run_handle& handle, const capture_options& options) {
  captured_run out;
  unique_fd in(handle.take_stdin());
  std::size_t fed = 0;
  if (in && options.stdin_data.empty()) in.reset();
  if (in) ::fcntl(in.get(), F_SETFL, ::fcntl(in.get(), F_GETFL) | O_NONBLOCK);
  std::array<stream_reader, 2> readers{stream_reader{unique_fd(handle.take_stdout()), 1, capped_buffer(options.max_output)},
                                       stream_reader{unique_fd(handle.take_stderr()), 2, capped_buffer(options.max_output)}};
  std::array<char, chunk_size> buffer{};
  std::optional<run_report> report;
  std::optional<std::chrono::steady_clock::time_point> drain_until;
  for (;;) {
    const bool pipes_open = readers[0].fd || readers[1].fd;
    if (report && !pipes_open) break;
    auto now = std::chrono::steady_clock::now();
    if (!out.timed_out && options.deadline && now >= *options.deadline) {
      handle.cancel();
      out.timed_out = true;
      in.reset();
    }
    if ((report || out.timed_out) && !drain_until) drain_until = now + drain_limit;
    if (drain_until && now >= *drain_until) break;
    std::vector<pollfd> fds;
    std::vector<int> who;  // 0 stdin, 1 stdout, 2 stderr, 3 completion
    if (in) fds.push_back({in.get(), POLLOUT, 0}), who.push_back(0);
    for (int i = 0; i < 2; ++i) {
      if (readers[i].fd) fds.push_back({readers[i].fd.get(), POLLIN, 0}), who.push_back(i + 1);
    }
    if (!report) fds.push_back({handle.completion_fd(), POLLIN, 0}), who.push_back(3);
    std::optional<std::chrono::steady_clock::time_point> until = drain_until;
    if (!out.timed_out && options.deadline && (!until || *options.deadline < *until)) until = options.deadline;
    const int timeout = until ? poll_timeout_until(*until, now) : -1;
    if (::poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR) break;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      if (who[i] == 0) {
        if (!feed(in.get(), options.stdin_data, fed) || fed == options.stdin_data.size()) in.reset();
      } else if (who[i] == 3) {
        report = handle.wait_for(std::chrono::milliseconds(0));
      } else if (!readers[who[i] - 1].read_once(buffer, options)) {
        readers[who[i] - 1].fd.reset();
      }
    }
  }
  out.report = report ? std::move(*report) : handle.wait();
  if (out.report.outcome && out.report.outcome->timed_out) out.timed_out = true;
  out.stdout_data = readers[0].kept.take();
  out.stderr_data = readers[1].kept.take();
  return out;
}

int exit_code_for(const captured_run& run) noexcept {
  return run.timed_out ? exit_timeout : exit_code_for(run.report);
}

}  // namespace cordon
