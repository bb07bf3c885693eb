// fuzz/terminal_filter_check.h — the properties cordon_fuzz_terminal_filter
// checks on one input, shared with tests/unit/core/fuzz_regressions_test.cpp.
//
// Input: the first byte picks the terminal (odd: UTF-8, even: 8-bit) and
// where the stream is cut; the rest is what a command writes.
// Properties (src/core/terminal_filter.h):
//  - the output holds no removed sequence: no OSC 52, 50, 1337 or 5522, no
//    CSI 20 t / 21 t, no DECRQSS, XTGETTCAP or tmux passthrough, no APC, PM
//    or SOS, and (UTF-8) no U+0080-U+009F, (8-bit) no byte 0x80-0x9F;
//  - filtering the output again changes nothing (each stream is finished:
//    a string left open is closed);
//  - the output does not depend on where the input was cut.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "core/terminal_filter.h"

namespace cordon::fuzz {

// The whole stream through one filter, fed `piece` bytes at a time, then finished.
inline std::string filter_in_pieces(std::string_view in, bool utf8, std::size_t piece) {
  core::terminal_filter f(utf8);
  std::string out;
  for (std::size_t at = 0; at < in.size(); at += piece) f.feed(in.substr(at, piece), out);
  f.finish(out);
  return out;
}

// Empty when every property holds, else what failed.
inline std::string check_terminal_filter_input(std::string_view data) {
  if (data.empty()) return "";
  const auto control = static_cast<unsigned char>(data[0]);
  const bool utf8 = (control & 1) != 0;
  const std::size_t piece = 1 + (control >> 1) % 7;
  const std::string_view in = data.substr(1);
  const std::string whole = filter_in_pieces(in, utf8, in.size() + 1);
  if (filter_in_pieces(in, utf8, piece) != whole) return "the output depends on where the input is cut";
  if (filter_in_pieces(whole, utf8, whole.size() + 1) != whole) return "filtering the output again changes it";
  for (const char* removed : {"\x1b]52", "\x1b]50", "\x1b]1337", "\x1b]5522", "\x1b[20t", "\x1b[21t", "\x1bP$q",
                              "\x1bP+q", "\x1bPtmux", "\x1b_", "\x1b^", "\x1bX"}) {
    if (whole.find(removed) != std::string::npos) return std::string("a removed sequence passed: ") + (removed + 1);
  }
  for (std::size_t i = 0; i < whole.size(); ++i) {
    const auto b = static_cast<unsigned char>(whole[i]);
    const auto next = i + 1 < whole.size() ? static_cast<unsigned char>(whole[i + 1]) : 0;
    if (utf8 && b == 0xc2 && next >= 0x80 && next <= 0x9f) return "a C1 control passed (UTF-8)";
    if (!utf8 && b >= 0x80 && b <= 0x9f) return "a C1 control passed (8-bit)";
  }
  return "";
}

}  // namespace cordon::fuzz
