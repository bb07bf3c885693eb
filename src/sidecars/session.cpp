// session.cpp — the relay loop and shutdown of session.h.
#include "sidecars/session.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "posix/unique_fd.h"
#include "sidecars/host_output.h"

namespace cordon::sidecars {

std::string_view to_string(ending_reason r) noexcept {
  switch (r) {
    case ending_reason::sidecar_exited: return "sidecar_exited";
    case ending_reason::host_closed: return "host_closed";
    case ending_reason::handshake_timeout: return "handshake_timeout";
    case ending_reason::interrupted: return "interrupted";
    case ending_reason::host_output_closed: return "host_output_closed";
  }
  return "sidecar_exited";
}

std::string_view to_string(ending_stage s) noexcept {
  switch (s) {
    case ending_stage::exited: return "exited";
    case ending_stage::exited_after_stdin_closed: return "exited_after_stdin_closed";
    case ending_stage::exited_after_sigterm: return "exited_after_sigterm";
    case ending_stage::killed: return "killed";
  }
  return "killed";
}

namespace {

using steady = std::chrono::steady_clock;

// Host bytes waiting for the sidecar's stdin: reading from the host pauses
// above this, so a sidecar that does not read cannot make cordon buffer
// without bound.
constexpr std::size_t max_pending_to_sidecar = 1u << 20;
// Sidecar frames the host has not taken yet: reading from the sidecar pauses
// above this (the sidecar waits, as it would on a slow host); once cordon got
// a signal its frames are read on and dropped above it.
constexpr std::size_t max_backlog_to_host = 1u << 20;

// Blocks the signals that end a session and restores the mask and SIGPIPE's
// disposition on destruction.
class signal_scope {
 public:
  signal_scope() {
    sigset_t set;
    ::sigemptyset(&set);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaddset(&set, sig);
    ::sigprocmask(SIG_BLOCK, &set, &previous_);
    fd_.reset(::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK));
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    ::sigaction(SIGPIPE, &ignore, &previous_pipe_);
  }
  ~signal_scope() {
    ::sigaction(SIGPIPE, &previous_pipe_, nullptr);
    fd_.reset();
    ::sigprocmask(SIG_SETMASK, &previous_, nullptr);
  }
  signal_scope(const signal_scope&) = delete;
  signal_scope& operator=(const signal_scope&) = delete;
  int fd() const noexcept { return fd_.get(); }

 private:
  sigset_t previous_{};
  struct sigaction previous_pipe_ {};
  unique_fd fd_;
};

std::uint64_t ms_since(steady::time_point t) {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - t).count());
}

// The shutdown's steps; each has a deadline after which the next is taken.
enum class phase { running, stdin_closed, terminated, killed };

class session {
 public:
  session(run_handle& run, const session_settings& settings)
      : run_(run),
        settings_(settings),
        to_host_(settings.proto),
        from_host_(settings.proto),
        sidecar_in_(run.take_stdin()),
        sidecar_out_(run.take_stdout()),
        to_host_out_(settings.host_out),
        started_(steady::now()) {
    ::fcntl(sidecar_in_.get(), F_SETFL, ::fcntl(sidecar_in_.get(), F_GETFL) | O_NONBLOCK);
    if (settings.proto != protocol::raw && settings.handshake_timeout.count() > 0) {
      handshake_deadline_ = started_ + settings.handshake_timeout;
    }
  }

  session_result run() {
    // Every frame the sidecar wrote is delivered, also after it ended, unless
    // cordon got a signal: then a host that does not read is not waited for.
    while (sidecar_out_ || (host_output_open_ && to_host_out_.backlog() > 0 && !signalled_)) {
      step();
    }
    result_.bytes_undelivered += to_host_out_.backlog();
    // The supervisor holds the write end of the sidecar's stdout until it
    // exits, so EOF there means the run is over or ending.
    std::optional<run_report> report;
    if (phase_ == phase::running) {
      // The tree may have closed its stdout and still run: then it is ended as any other.
      report = run_.wait_for(std::chrono::milliseconds(500));
      if (!report) begin_shutdown(ending_reason::sidecar_exited, "the sidecar closed its output and kept running");
    }
    while (!report && !(report = run_.wait_until(next_deadline()))) advance_shutdown();
    result_.run = std::move(*report);
    result_.stage = stage_for(result_.run.outcome ? &*result_.run.outcome : nullptr);
    result_.duration_ms = ms_since(started_);
    return std::move(result_);
  }

 private:
  steady::time_point next_deadline() const {
    return phase_deadline_ ? *phase_deadline_ : steady::now() + std::chrono::hours(24 * 365);
  }

  void step() {
    std::vector<pollfd> fds;
    const bool read_sidecar = to_host_out_.backlog() < max_backlog_to_host || signalled_;
    fds.push_back({sidecar_out_ && read_sidecar ? sidecar_out_.get() : -1, POLLIN, 0});
    fds.push_back({signals_.fd(), POLLIN, 0});
    const bool read_host = host_open_ && pending_.size() < max_pending_to_sidecar && phase_ == phase::running;
    fds.push_back({read_host ? settings_.host_in : -1, POLLIN, 0});
    fds.push_back({sidecar_in_ && !pending_.empty() ? sidecar_in_.get() : -1, POLLOUT, 0});
    fds.push_back({host_output_open_ && to_host_out_.backlog() > 0 ? to_host_out_.poll_fd() : -1, POLLOUT, 0});
    int timeout = -1;
    for (auto d : {phase_deadline_, handshake_done_ ? std::nullopt : handshake_deadline_}) {
      if (!d) continue;
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*d - steady::now()).count() + 1;
      timeout = timeout < 0 ? static_cast<int>(std::max<long long>(left, 0))
                            : std::min(timeout, static_cast<int>(std::max<long long>(left, 0)));
    }
    int ready = ::poll(fds.data(), fds.size(), timeout);
    if (ready < 0 && errno != EINTR) {
      begin_shutdown(ending_reason::interrupted, "poll failed");
    }
    if (ready > 0) {
      if (fds[1].revents & POLLIN) take_signals();
      if (fds[2].revents & (POLLIN | POLLHUP | POLLERR)) read_from_host();
      if (fds[3].revents & (POLLOUT | POLLERR | POLLHUP)) write_to_sidecar();
      if (fds[4].revents & (POLLOUT | POLLERR | POLLHUP)) flush_to_host();
      if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) read_from_sidecar();
    }
    const auto now = steady::now();
    if (!handshake_done_ && handshake_deadline_ && now >= *handshake_deadline_ && phase_ == phase::running) {
      begin_shutdown(ending_reason::handshake_timeout,
                     initialize_id_.is_null() && !initialize_seen_
                         ? "the host sent no initialize request within the handshake timeout"
                         : "the sidecar did not answer initialize within the handshake timeout");
    }
    if (phase_deadline_ && now >= *phase_deadline_) advance_shutdown();
  }

  void take_signals() {
    signalfd_siginfo info{};
    while (::read(signals_.fd(), &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
      signalled_ = true;
      if (result_.cordon_signal == 0) result_.cordon_signal = static_cast<int>(info.ssi_signo);
      if (phase_ == phase::running) {
        begin_shutdown(ending_reason::interrupted, "cordon got signal " + std::to_string(info.ssi_signo));
      } else if (phase_ == phase::stdin_closed) {
        advance_shutdown();  // a second signal: do not wait for the stdin grace
      }
    }
  }

  void read_from_host() {
    char buffer[65536];
    ssize_t n = ::read(settings_.host_in, buffer, sizeof buffer);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (n <= 0) {
      host_open_ = false;
      if (phase_ == phase::running) begin_shutdown(ending_reason::host_closed, "the host closed the sidecar's input");
      return;
    }
    std::string_view bytes(buffer, static_cast<std::size_t>(n));
    pending_.append(bytes);
    result_.bytes_to_sidecar += bytes.size();
    // The host is trusted with its own bytes: they pass unchanged. They are
    // split only to count frames and to learn the initialize request's id.
    std::vector<frame> frames;
    std::vector<discarded> ignored;
    from_host_.feed(bytes, frames, ignored);
    for (const auto& f : frames) {
      ++result_.frames_to_sidecar;
      if (settings_.proto == protocol::raw || !f.message.is_object()) continue;
      auto method = f.message.find("method");
      if (!initialize_seen_ && method != f.message.end() && *method == "initialize" && f.message.contains("id")) {
        initialize_seen_ = true;
        initialize_id_ = f.message["id"];
      }
    }
    write_to_sidecar();
  }

  void write_to_sidecar() {
    if (!sidecar_in_ || pending_.empty()) return;
    ssize_t n = ::write(sidecar_in_.get(), pending_.data(), pending_.size());
    if (n > 0) {
      pending_.erase(0, static_cast<std::size_t>(n));
    } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
      pending_.clear();  // the sidecar closed its stdin (EPIPE): nothing more reaches it
      sidecar_in_.reset();
    }
    if (pending_.empty() && close_when_flushed_) sidecar_in_.reset();
  }

  void read_from_sidecar() {
    char buffer[65536];
    ssize_t n = ::read(sidecar_out_.get(), buffer, sizeof buffer);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
    std::vector<frame> frames;
    std::vector<discarded> junk;
    if (n <= 0) {
      to_host_.finish(junk);
      sidecar_out_.reset();
      if (phase_ == phase::running) result_.reason = ending_reason::sidecar_exited;
    } else {
      to_host_.feed(std::string_view(buffer, static_cast<std::size_t>(n)), frames, junk);
    }
    for (const auto& j : junk) {
      ++result_.discarded_count;
      result_.discarded_bytes += j.bytes;
      if (result_.samples.size() < settings_.max_samples) result_.samples.push_back(j);
    }
    for (const auto& f : frames) {
      ++result_.frames_from_sidecar;
      result_.bytes_from_sidecar += f.bytes.size();
      note_handshake(f.message);
      // Until a signal the backlog stays below the bound plus one read: reading pauses.
      const bool over = signalled_ && to_host_out_.backlog() >= max_backlog_to_host;
      if (!host_output_open_ || over) {
        result_.bytes_undelivered += f.bytes.size();
        continue;
      }
      to_host_out_.queue(f.bytes);
    }
    flush_to_host();
  }

  void flush_to_host() {
    if (!host_output_open_ || to_host_out_.flush()) return;
    host_output_open_ = false;
    if (phase_ == phase::running) begin_shutdown(ending_reason::host_output_closed, "the host stopped reading");
  }

  void note_handshake(const nlohmann::json& message) {
    if (handshake_done_ || !initialize_seen_ || !message.is_object()) return;
    auto id = message.find("id");
    if (id == message.end() || *id != initialize_id_) return;
    if (!message.contains("result") && !message.contains("error")) return;
    handshake_done_ = true;
    result_.handshake_done = true;
    result_.handshake_ms = ms_since(started_);
  }

  void begin_shutdown(ending_reason reason, std::string detail) {
    result_.reason = reason;
    result_.detail = std::move(detail);
    phase_ = phase::stdin_closed;
    // Whatever the host sent before is still delivered, then EOF.
    close_when_flushed_ = true;
    if (pending_.empty() || reason == ending_reason::handshake_timeout) {
      pending_.clear();
      sidecar_in_.reset();
    }
    phase_deadline_ = steady::now() + settings_.stdin_grace;
  }

  void advance_shutdown() {
    switch (phase_) {
      case phase::running:
        begin_shutdown(ending_reason::interrupted, "shutdown");
        return;
      case phase::stdin_closed:
        pending_.clear();
        sidecar_in_.reset();
        // The supervisor forwards SIGTERM to the sandbox's PID 1, which passes it to the tree.
        ::kill(run_.pid(), SIGTERM);
        phase_ = phase::terminated;
        phase_deadline_ = steady::now() + settings_.term_grace;
        return;
      case phase::terminated:
        run_.cancel();
        phase_ = phase::killed;
        phase_deadline_.reset();
        return;
      case phase::killed: return;
    }
  }

  ending_stage stage_for(const run_outcome* outcome) const {
    switch (phase_) {
      case phase::running: return ending_stage::exited;
      case phase::stdin_closed: return ending_stage::exited_after_stdin_closed;
      case phase::terminated:
        // The supervisor kills the tree itself when a forwarded signal is not obeyed.
        return outcome != nullptr && outcome->signal == SIGKILL ? ending_stage::killed : ending_stage::exited_after_sigterm;
      case phase::killed: return ending_stage::killed;
    }
    return ending_stage::killed;
  }

  run_handle& run_;
  const session_settings& settings_;
  signal_scope signals_;
  frame_splitter to_host_, from_host_;
  unique_fd sidecar_in_, sidecar_out_;
  host_output to_host_out_;
  steady::time_point started_;
  std::optional<steady::time_point> handshake_deadline_, phase_deadline_;
  phase phase_ = phase::running;
  bool host_open_ = true, host_output_open_ = true, close_when_flushed_ = false;
  bool handshake_done_ = false, initialize_seen_ = false;
  bool signalled_ = false;  // cordon got SIGINT, SIGTERM or SIGHUP: the host's backlog is given up
  nlohmann::json initialize_id_;
  std::string pending_;
  session_result result_;
};

}  // namespace

session_result run_session(run_handle& run, const session_settings& settings) {
  session s(run, settings);
  return s.run();
}

}  // namespace cordon::sidecars
