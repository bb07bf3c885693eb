// live_table.cpp — the terminal table of live_table.h.
#include "gates/live_table.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace cordon::gates {
namespace {

std::string state_of(const gate_state& g) {
  if (g.phase == gate_phase::running) return "running";
  if (g.phase == gate_phase::pending) return "pending";
  return std::string(to_string(g.outcome));
}

const char* color_of(const gate_state& g) {
  if (g.phase == gate_phase::running) return "\033[36m";
  if (g.phase == gate_phase::pending) return "";
  switch (g.outcome) {
    case gate_outcome::passed: return "\033[32m";
    case gate_outcome::failed:
    case gate_outcome::timed_out:
    case gate_outcome::refused: return "\033[31m";
    default: return "\033[33m";
  }
}

std::string elapsed_of(const gate_state& g, std::uint64_t now_ms) {
  if (g.phase == gate_phase::pending || !g.launched) return "-";
  std::uint64_t ms = g.phase == gate_phase::running ? now_ms - std::min(now_ms, g.started_ms) : g.duration_ms;
  char text[32];
  std::snprintf(text, sizeof text, "%.1fs", static_cast<double>(ms) / 1000.0);
  return text;
}

std::string below_of(const gate_state& g) {
  if (!g.launched || g.phase != gate_phase::finished) return "";
  if (g.below_enforced.empty()) return "none";
  std::string out;
  for (const auto& b : g.below_enforced) out += (out.empty() ? "" : ",") + b;
  return out;
}

// Pads to `w` columns (the texts are ASCII: gate names are [A-Za-z0-9._-]).
std::string pad(const std::string& s, std::size_t w) { return s.size() >= w ? s : s + std::string(w - s.size(), ' '); }

}  // namespace

std::string render_gate_table(const std::vector<gate_state>& gates, std::uint64_t now_ms, bool color, std::size_t width) {
  struct row {
    std::string name, state, elapsed, below;
    const char* color;
  };
  std::vector<row> rows;
  std::size_t w_name = 4, w_state = 5, w_elapsed = 7;
  for (const auto& g : gates) {
    rows.push_back({g.spec->name, state_of(g), elapsed_of(g, now_ms), below_of(g), color_of(g)});
    w_name = std::max(w_name, rows.back().name.size());
    w_state = std::max(w_state, rows.back().state.size());
    w_elapsed = std::max(w_elapsed, rows.back().elapsed.size());
  }
  // Cut to the width before colour is added, so that escape codes never count as columns.
  auto cut = [width](std::string s) {
    if (width > 0 && s.size() >= width) s.resize(width - 1);
    return s;
  };
  std::string out = cut(pad("GATE", w_name) + "  " + pad("STATE", w_state) + "  " + pad("ELAPSED", w_elapsed) +
                        "  BELOW ENFORCED") + "\n";
  for (const auto& r : rows) {
    std::string line = cut(pad(r.name, w_name) + "  " + pad(r.state, w_state) + "  " + pad(r.elapsed, w_elapsed) +
                           "  " + r.below);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    const std::size_t at = w_name + 2;
    if (color && *r.color != '\0' && line.size() > at) {
      std::size_t end = std::min(line.size(), at + r.state.size());
      line = line.substr(0, at) + r.color + line.substr(at, end - at) + "\033[0m" + line.substr(end);
    }
    out += line + "\n";
  }
  return out;
}

void live_table::draw(const std::vector<gate_state>& gates, std::uint64_t now_ms) {
  std::string text = render_gate_table(gates, now_ms, color_, width_);
  std::string frame;
  if (drawn_lines_ > 0) frame = "\033[" + std::to_string(drawn_lines_) + "A\r";
  frame += "\033[J" + text;
  drawn_lines_ = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
  out_ << frame << std::flush;
}

std::size_t terminal_width(int fd) noexcept {
  winsize ws{};
  if (::isatty(fd) != 1 || ::ioctl(fd, TIOCGWINSZ, &ws) != 0) return 0;
  return ws.ws_col;
}

}  // namespace cordon::gates
