// terminal_filter.cpp — a streaming filter of escape sequences for the
// caller's terminal (terminal_filter.h).
#include "core/terminal_filter.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace cordon::core {
namespace {

constexpr char kEsc = '\x1b';
constexpr char kBel = '\x07';
constexpr char kCan = '\x18';
constexpr char kSub = '\x1a';
constexpr char kDel = '\x7f';
constexpr const char* kSt = "\x1b\\";

bool in(char b, char low, char high) { return b >= low && b <= high; }
bool parameter_byte(char b) { return in(b, 0x30, 0x3f); }
bool intermediate_byte(char b) { return in(b, 0x20, 0x2f); }
bool final_byte(char b) { return in(b, 0x40, 0x7e); }
bool c0(char b) { return in(b, 0x00, 0x1f); }

// OSC numbers a program needs to draw: titles (0-2), palette (4, 104),
// working directory (7), hyperlinks (8), dynamic colours (10-19, 110-119),
// shell integration marks (133). Everything else (52 clipboard, 50 font,
// 1337 and 5522 file and clipboard transfer, notifications) is removed.
bool osc_allowed(long number) {
  return number == 0 || number == 1 || number == 2 || number == 4 || number == 7 || number == 8 ||
         (number >= 10 && number <= 19) || number == 104 || (number >= 110 && number <= 119) || number == 133;
}

// Length of the UTF-8 character a lead byte starts (RFC 3629), 0 when the
// byte cannot start one (continuation bytes, C0, C1, F5-FF).
std::size_t utf8_length(unsigned char lead) {
  if (lead >= 0xc2 && lead <= 0xdf) return 2;
  if (lead >= 0xe0 && lead <= 0xef) return 3;
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  return 0;
}

// Whether `b` may follow `partial` (a lead and maybe continuations): the
// ranges of RFC 3629's table, which exclude overlong forms and surrogates.
bool continues(const std::string& partial, unsigned char b) {
  if (b < 0x80 || b > 0xbf) return false;
  if (partial.size() != 1) return true;
  const auto lead = static_cast<unsigned char>(partial[0]);
  if (lead == 0xe0) return b >= 0xa0;
  if (lead == 0xed) return b <= 0x9f;
  if (lead == 0xf0) return b >= 0x90;
  if (lead == 0xf4) return b <= 0x8f;
  return true;
}

}  // namespace

bool locale_is_utf8(const char* lc_all, const char* lc_ctype, const char* lang) {
  const char* locale = lc_all && *lc_all ? lc_all : lc_ctype && *lc_ctype ? lc_ctype : lang && *lang ? lang : "";
  std::string lower(locale);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  return lower.find("utf-8") != std::string::npos || lower.find("utf8") != std::string::npos;
}

void terminal_filter::feed(std::string_view input, std::string& out) {
  for (std::size_t i = 0; i < input.size(); ++i) {
    const auto b = static_cast<unsigned char>(input[i]);
    if (!utf8_) {
      if (b >= 0x80 && b <= 0x9f) {
        ++removed_;  // a C1 control in an 8-bit terminal
      } else {
        character(input.substr(i, 1), out);
      }
      continue;
    }
    if (expected_ != 0) {
      if (!continues(partial_, b)) {  // the character is broken: drop it, read `b` afresh
        ++removed_;
        partial_.clear();
        expected_ = 0;
        --i;
        continue;
      }
      partial_ += static_cast<char>(b);
      if (partial_.size() < expected_) continue;
      const bool c1 = static_cast<unsigned char>(partial_[0]) == 0xc2 && static_cast<unsigned char>(partial_[1]) < 0xa0;
      if (c1) {
        ++removed_;  // U+0080-U+009F: a C1 control
      } else {
        character(partial_, out);
      }
      partial_.clear();
      expected_ = 0;
      continue;
    }
    if (b < 0x80) {
      character(input.substr(i, 1), out);
    } else if (const std::size_t length = utf8_length(b); length != 0) {
      partial_.assign(1, static_cast<char>(b));
      expected_ = length;
    } else {
      ++removed_;  // no character starts here
    }
  }
}

void terminal_filter::finish(std::string& out) {
  if (state_ == state::string_pass || (state_ == state::string_escape && string_passes_)) out += kSt;
  if (!held_.empty() || !partial_.empty()) ++removed_;
  held_.clear();
  partial_.clear();
  expected_ = 0;
  string_passes_ = false;
  state_ = state::ground;
}

void terminal_filter::character(std::string_view c, std::string& out) {
  if (c.size() == 1 && static_cast<unsigned char>(c[0]) < 0x80) {
    ascii(c[0], out);
    return;
  }
  // A character beyond ASCII: text, or a malformed sequence.
  switch (state_) {
    case state::ground: out.append(c); return;
    case state::string_pass: out.append(c); return;
    case state::string_drop: return;
    case state::osc_number:
      begin_string(false, true, out);
      return;
    case state::string_escape:
      end_string(out);
      [[fallthrough]];
    case state::escape:
    case state::csi:
    case state::dcs_head:
      abandon_held();
      out.append(c);
      return;
  }
}

void terminal_filter::ascii(char b, std::string& out) {
  switch (state_) {
    case state::ground:
      if (b == kEsc) {
        held_.assign(1, kEsc);
        state_ = state::escape;
      } else {
        out += b;
      }
      return;

    case state::escape:
      if (held_.size() == 1 && (b == '[' || b == ']' || b == 'P')) {
        held_ += b;
        state_ = b == '[' ? state::csi : b == ']' ? state::osc_number : state::dcs_head;
      } else if (held_.size() == 1 && b == '\\') {
        abandon_held();  // ST with no string to end: nothing for the terminal
      } else if (held_.size() == 1 && (b == '_' || b == '^' || b == 'X')) {
        held_.clear();
        begin_string(false, false, out);  // APC, PM, SOS: removed
      } else if (b == kEsc) {
        ++removed_;  // the first ESC is abandoned, as the terminal abandons it
        held_.assign(1, kEsc);
      } else if (b == kCan || b == kSub) {
        abandon_held();
        out += b;
      } else if (c0(b)) {
        out += b;  // executed in the middle of the sequence, like the terminal does
      } else if (intermediate_byte(b)) {
        held_ += b;
        if (held_.size() > kMaxHeld) abandon_held();
      } else if (b != kDel) {  // a final byte (0x30-0x7e): a complete escape sequence
        out += held_;
        out += b;
        held_.clear();
        state_ = state::ground;
      }
      return;

    case state::csi:
      if (parameter_byte(b) || intermediate_byte(b)) {
        held_ += b;
        if (held_.size() > kMaxHeld) abandon_held();
      } else if (final_byte(b)) {
        decide_csi(b, out);
      } else if (!interrupts(b, out) && c0(b)) {
        out += b;  // executed in the middle of the sequence
      }
      return;

    case state::osc_number:
      if (in(b, '0', '9') && held_.size() < 12) {
        held_ += b;
      } else if (b == ';' || b == kBel || b == kEsc) {
        decide_osc(out);
        if (b == ';') {
          if (state_ == state::string_pass) out += ';';
        } else {
          ascii(b, out);  // the string's end, or the start of ST
        }
      } else if (b == kCan || b == kSub) {
        abandon_held();
        out += b;
      } else {
        begin_string(false, true, out);  // no number: not one we know
      }
      return;

    case state::dcs_head:
      if (parameter_byte(b) || intermediate_byte(b)) {
        held_ += b;
        if (held_.size() > kMaxHeld) begin_string(false, false, out);
      } else if (final_byte(b)) {
        decide_dcs(b, out);
      } else {
        interrupts(b, out);  // other C0 and DEL: ignored in a DCS header
      }
      return;

    case state::string_pass:
    case state::string_drop:
      if (b == kEsc) {
        string_passes_ = state_ == state::string_pass;
        state_ = state::string_escape;
      } else if ((b == kBel && string_is_osc_) || b == kCan || b == kSub) {
        if (state_ == state::string_pass) out += b == kBel ? std::string(1, kBel) : std::string(kSt);
        state_ = state::ground;
      } else if (!c0(b) && state_ == state::string_pass) {
        out += b;
      }
      return;

    case state::string_escape:
      end_string(out);
      if (b != '\\') {  // ESC ended the string and starts a sequence of its own
        held_.assign(1, kEsc);
        state_ = state::escape;
        ascii(b, out);
      }
      return;
  }
}

void terminal_filter::begin_string(bool pass, bool osc, std::string& out) {
  if (pass) {
    out += held_;
  } else {
    ++removed_;
  }
  held_.clear();
  string_is_osc_ = osc;
  state_ = pass ? state::string_pass : state::string_drop;
}

// The string is over (ST, or ESC starting something else): a passed one is
// closed with ST for the terminal.
void terminal_filter::end_string(std::string& out) {
  if (string_passes_) out += kSt;
  string_passes_ = false;
  state_ = state::ground;
}

// ESC, CAN or SUB in a held CSI or DCS header: the sequence is abandoned, as
// the terminal abandons it; ESC starts the next one. True when `b` was one.
bool terminal_filter::interrupts(char b, std::string& out) {
  if (b != kEsc && b != kCan && b != kSub) return false;
  abandon_held();
  if (b == kEsc) {
    held_.assign(1, kEsc);
    state_ = state::escape;
  } else {
    out += b;
  }
  return true;
}

void terminal_filter::abandon_held() {
  if (!held_.empty()) ++removed_;
  held_.clear();
  state_ = state::ground;
}

void terminal_filter::decide_osc(std::string& out) {
  const std::string digits = held_.substr(2);
  const bool known = !digits.empty() && digits.size() <= 6 && osc_allowed(std::stol(digits));
  begin_string(known, true, out);
}

// Sixel images (DCS P1;P2;P3 q) and synchronized output (DCS = 1 s, = 2 s)
// pass. DECRQSS ($q) and XTGETTCAP (+q) make the terminal answer, DECUDK (|)
// programs keys, tmux's passthrough (tmux;) reaches the terminal beyond it.
void terminal_filter::decide_dcs(char final, std::string& out) {
  const std::string head = held_.substr(2);
  const bool digits_only = head.find_first_not_of("0123456789;") == std::string::npos;
  const bool sixel = final == 'q' && digits_only;
  const bool synchronized = final == 's' && (head == "=1" || head == "=2");
  held_ += final;
  begin_string(sixel || synchronized, false, out);
}

// Every CSI passes but the title and icon label reports (CSI 20 t, CSI 21 t:
// the terminal answers with text the command set) and media copy (CSI i:
// xterm's printer-controller mode hands what follows to a printer command).
void terminal_filter::decide_csi(char final, std::string& out) {
  const std::string params = held_.substr(2);
  const bool report = final == 't' && (params == "20" || params == "21" || params.rfind("20;", 0) == 0 ||
                                       params.rfind("21;", 0) == 0);
  if (report || final == 'i') {
    abandon_held();
    return;
  }
  out += held_;
  out += final;
  held_.clear();
  state_ = state::ground;
}

}  // namespace cordon::core
