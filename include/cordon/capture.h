// cordon/capture.h — a started run's output gathered into the host with a
// cap, its stdin fed from a buffer, and a wall-clock deadline (docs/library.md,
// "Capturing output").
//
// An agent host calls a tool and wants its output as a value; a command that
// prints without end (`yes`) must not fill the host's memory. capture_run()
// reads the run's stdout and stderr pipes until both end, keeping for each
// stream at most `max_output` bytes: the first half (the head) and the last
// half (the tail, a ring), and counting what fell between them. Whatever the
// command writes, the host holds at most 2 x max_output bytes of output plus
// one 64 KiB read buffer. At the deadline the tree is killed (run_handle::
// cancel) and the result says timed_out: the exit status is 124
// (exit_timeout), whichever way the run was started (start_run, a prepared
// sandbox, a pool).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "cordon/run.h"

namespace cordon {

// One stream as the host kept it.
struct captured_output {
  // The kept bytes, unchanged (not necessarily UTF-8): the head, then the
  // tail. When dropped_bytes > 0 the gap lies at offset `dropped_at`.
  std::string data;
  std::uint64_t total_bytes = 0;    // what the command wrote to the stream
  std::uint64_t dropped_bytes = 0;  // total_bytes - data.size()
  std::uint64_t dropped_at = 0;     // where in `data` the dropped bytes were
  bool truncated() const noexcept { return dropped_bytes > 0; }
};

// A buffer that keeps the first cap/2 and the last cap - cap/2 bytes of what
// is appended (cap 0: nothing at all, everything is counted as dropped).
class capped_buffer {
 public:
  explicit capped_buffer(std::uint64_t cap);
  void append(std::string_view bytes);
  std::uint64_t total() const noexcept { return total_; }
  // The head and the tail in order, with the count of what fell between.
  captured_output take();

 private:
  std::uint64_t head_cap_, tail_cap_;
  std::string head_;
  std::string ring_;           // the tail, circular once full
  std::size_t ring_start_ = 0;  // the oldest byte of a full ring
  std::uint64_t total_ = 0;
};

// The cap when the caller gives none: 1 MiB per stream.
inline constexpr std::uint64_t default_max_output = 1024 * 1024;

struct capture_options {
  std::string stdin_data;       // written to the run's stdin pipe, which is then closed
  std::uint64_t max_output = default_max_output;  // bytes kept per stream
  // Killed at this time (nullopt: no host deadline; the policy's own
  // process.timeout_ms still applies in the sandbox).
  std::optional<std::chrono::steady_clock::time_point> deadline;
  // Called on the capturing thread for every chunk read, before the cap
  // (stream 1 stdout, 2 stderr): a host that streams output to its user.
  std::function<void(int stream, std::string_view bytes)> on_output;
};

struct captured_run {
  run_report report;
  captured_output stdout_data, stderr_data;
  bool timed_out = false;  // the deadline (or the policy's timeout) ended it
};

// Feeds, reads and waits for a run started with stdio_spec::pipe() on the
// streams it should capture (a stream not piped is left alone), until the
// run has ended and both output pipes are at end of file, or the deadline
// has passed. Never fails: a write to a stdin the command closed is
// abandoned (EPIPE does not kill the host: MSG_NOSIGNAL is not available for
// pipes, so SIGPIPE is blocked on this thread while writing).
captured_run capture_run(run_handle& handle, const capture_options& options);

// The run's report with what the host kept of its output (docs/report.md,
// "output"): {"output": {"max_output": N, "stdout": {"bytes", "kept",
// "dropped"}, "stderr": {...}}}, and, when the host's deadline ended the run,
// "outcome": "timed_out" and "timeout_fired": true (the supervisor saw a
// cancellation). An empty report (the run never started) stays empty; a
// report that is not JSON is returned unchanged.
std::string report_with_output(const std::string& report_json, const captured_run& run, std::uint64_t max_output);

// The exit status of a captured run: exit_timeout when it timed out, else
// exit_code_for(report).
int exit_code_for(const captured_run& run) noexcept;

}  // namespace cordon
