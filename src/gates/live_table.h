// live_table.h — the live table of `cordon gate run` on a terminal
// (docs/gates.md, "Output and exit status"): one row per gate with its state, elapsed time
// and the controls its sandbox held below `enforced`, redrawn in place as
// gates start and finish and, while any runs, twice a second.
//
// Only a terminal gets it; anything else (a pipe, a CI log, TERM=dumb) gets
// the plain lines, one per state change. NO_COLOR turns colour off in both;
// the table still redraws (cursor movement is not colour).
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "gates/runner.h"

namespace cordon::gates {

// The table as text, one '\n'-terminated line per row after a header; each
// line cut to `width` columns (0: no limit) so that a redraw moves the cursor
// over exactly the lines it wrote. `now_ms` (since the run started) gives
// running gates their elapsed time.
std::string render_gate_table(const std::vector<gate_state>& gates, std::uint64_t now_ms, bool color, std::size_t width);

class live_table {
 public:
  live_table(std::ostream& out, bool color, std::size_t width) : out_(out), color_(color), width_(width) {}
  // Replaces the table last drawn (cursor up over its lines, clear to the end of the screen).
  void draw(const std::vector<gate_state>& gates, std::uint64_t now_ms);

 private:
  std::ostream& out_;
  bool color_;
  std::size_t width_;
  std::size_t drawn_lines_ = 0;
};

// The width of the terminal on `fd`, or 0 when it is not one (or says 0).
std::size_t terminal_width(int fd) noexcept;

}  // namespace cordon::gates
