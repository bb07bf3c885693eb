// session.h — relaying one confined sidecar's protocol between the host and
// the sandbox, and ending it as its protocol expects (docs/sidecars.md).
//
// The host's bytes go to the sidecar's stdin unchanged. The sidecar's stdout
// is cut into frames (framing.h); only whole frames reach the host, and what
// is not a frame is discarded and counted. For mcp and lsp the host's
// `initialize` request must be answered within the handshake timeout.
//
// Shutdown, whatever starts it (the host closed its end, the handshake timed
// out, cordon got SIGINT/SIGTERM/SIGHUP, the host stopped reading): close the
// sidecar's stdin and keep relaying its output for `stdin_grace`; then
// SIGTERM to the tree (the run API's supervisor forwards it to the
// sandbox's PID 1, which passes it to every process) and `term_grace`; then
// SIGKILL of the whole tree (run_handle::cancel). The sandbox's PID
// namespace dies with its PID 1, so no process of the tree outlives the
// session.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cordon/run.h"
#include "sidecars/framing.h"

namespace cordon::sidecars {

// Why the session ended: the first cause seen.
enum class ending_reason {
  sidecar_exited,      // the tree ended (or closed its output) on its own
  host_closed,         // the host closed cordon's stdin (the protocol's "goodbye")
  handshake_timeout,   // initialize was not answered in time
  interrupted,         // cordon got SIGINT, SIGTERM or SIGHUP
  host_output_closed,  // the host stopped reading cordon's stdout
};
std::string_view to_string(ending_reason r) noexcept;

// How far the shutdown had to go before the tree was gone.
enum class ending_stage {
  exited,                     // it was gone before cordon did anything
  exited_after_stdin_closed,  // it exited after its stdin was closed
  exited_after_sigterm,       // after SIGTERM (by exiting, or killed by the signal)
  killed,                     // SIGKILL of the whole tree
};
std::string_view to_string(ending_stage s) noexcept;

struct session_settings {
  protocol proto = protocol::mcp;
  // mcp/lsp: the host's initialize must be answered this long after the
  // launch; zero: no deadline. Ignored for raw.
  std::chrono::milliseconds handshake_timeout{30'000};
  std::chrono::milliseconds stdin_grace{2'000};
  // Below the supervisor's own 2 s grace after a forwarded signal, so that
  // the SIGKILL is this session's decision (docs/sidecars.md).
  std::chrono::milliseconds term_grace{1'000};
  int host_in = 0;   // read: the host's protocol bytes
  int host_out = 1;  // written: the sidecar's frames
  std::size_t max_samples = 8;  // discarded stretches kept as samples
};

struct session_result {
  ending_reason reason = ending_reason::sidecar_exited;
  ending_stage stage = ending_stage::exited;
  std::string detail;  // one line
  int cordon_signal = 0;  // interrupted: the signal cordon got
  run_report run;
  bool handshake_done = false;
  std::optional<std::uint64_t> handshake_ms;  // from the launch to the initialize answer
  std::uint64_t frames_to_sidecar = 0, frames_from_sidecar = 0;
  std::uint64_t bytes_to_sidecar = 0, bytes_from_sidecar = 0;
  // Frame bytes the host never took: it stopped reading, or the session was
  // ending with more than the backlog bound (1 MiB) waiting for it.
  std::uint64_t bytes_undelivered = 0;
  std::uint64_t discarded_count = 0, discarded_bytes = 0;
  std::vector<discarded> samples;  // the first max_samples discarded stretches
  std::uint64_t duration_ms = 0;
};

// Relays until the tree is gone, then returns. `run` must have been started
// with stdin and stdout pipes (the session takes both). SIGINT, SIGTERM and
// SIGHUP are blocked while it runs and taken through a signalfd; SIGPIPE is
// ignored (a closed host output is an ending, not a crash); both are restored
// before it returns. Never throws for I/O: every failure is an ending.
session_result run_session(run_handle& run, const session_settings& settings);

}  // namespace cordon::sidecars
