// relay.h — the supervisor's side of the command's stdio (stdio_plan.h).
//
// For every slot the plan relays, a pipe: the sandbox gets one end, the
// supervisor keeps the other and copies between it and the caller's
// descriptor on a thread of its own (splice(2) where both sides allow it,
// read/write otherwise). With a private pty, the same thread copies between
// the pty master (sent by PID 1) and the caller's terminal, forwards window
// size changes (SIGWINCH) and puts the terminal back in raw mode after
// SIGCONT. Output bound for a terminal passes the escape sequence filter
// (core/terminal_filter.h). A run whose stdio are all pipes makes no pipe
// and no thread.
//
// For the whole run the supervisor ignores SIGTSTP, SIGTTIN and SIGTTOU: a
// job-control stop aimed at cordon's process group would otherwise stop the
// supervisor alone while the tree (in its own session) runs on. The
// timeout holds even through SIGSTOP, which cannot be ignored: PID 1
// enforces the deadline too (sandbox_init.h).
#pragma once

#include <csignal>
#include <memory>
#include <thread>
#include <vector>

#include "cordon/result.h"
#include "core/terminal_filter.h"
#include "linux/pty.h"
#include "linux/stdio_plan.h"
#include "posix/unique_fd.h"

namespace cordon::linux_impl {

class stdio_relay {
 public:
  stdio_relay() = default;
  stdio_relay(const stdio_relay&) = delete;
  stdio_relay& operator=(const stdio_relay&) = delete;
  ~stdio_relay();

  // Before clone3: makes the pipes (close-on-exec, above descriptor 2) and
  // the pty socket the plan needs, fills `handoff` for PID 1, and, with a
  // private pty, puts the caller's terminal in raw mode. Errors:
  // launch_failed with errno when a pipe or socket cannot be made.
  result<void> prepare(const stdio_plan& plan, stdio_handoff& handoff);

  // After clone3: closes the sandbox's ends here and starts the relay
  // thread, when there is anything to relay.
  void start();

  // The tree is gone: copies what the command left in the pipes and the pty,
  // stops the thread, restores the terminal and the signal dispositions.
  // Idempotent; the destructor calls it.
  void finish();

 private:
  struct channel {
    int from = -1;
    int to = -1;
    unique_fd owned;           // whichever of from/to is this relay's pipe end (the other is the caller's)
    bool input = false;        // caller -> command: stops when the tree is gone
    bool from_terminal = false;  // EIO means "not now" (background), not the end
    bool splice_ok = true;
    bool blocked = false;      // `to` was full: wait until it is writable
    bool paused = false;       // `from` is a terminal that cannot be read now: retry in 100 ms
    bool done = false;
    std::vector<char> pending;  // bytes read but not yet written to a non-blocking `to`
    std::size_t offset = 0;
    // `to` is the caller's terminal: what it is given passes the escape
    // sequence filter (core/terminal_filter.h), so never by splice.
    std::unique_ptr<core::terminal_filter> filter;
  };
  void run() noexcept;
  void step(channel& c) noexcept;
  void filter_for_terminal(channel& c) noexcept;
  void close_channel(channel& c) noexcept;
  void on_signal() noexcept;
  void adopt_master(int master) noexcept;

  std::vector<channel> channels_;
  std::vector<unique_fd> sandbox_ends_;  // closed here by start()
  unique_fd wake_fd_;                    // eventfd: the tree is gone
  unique_fd signal_fd_;                  // SIGWINCH, SIGCONT (private pty only)
  unique_fd pty_receive_fd_;             // PID 1 sends the master here
  unique_fd master_;
  int terminal_fd_ = -1;           // the caller's terminal (its stdin)
  int terminal_out_fd_ = -1;       // where the pty's output goes
  bool utf8_terminal_ = true;      // the caller's locale is UTF-8 (for the filter)
  raw_terminal raw_;
  bool masked_ = false;            // SIGWINCH and SIGCONT blocked by prepare()
  sigset_t unmask_ {};             // the ones prepare() blocked (not blocked before)
  bool shielded_ = false;
  struct sigaction saved_stop_[3] {};
  std::thread thread_;
  bool finished_ = false;
};

}  // namespace cordon::linux_impl
