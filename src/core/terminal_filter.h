// terminal_filter.h — what of a sandboxed command's output may reach the
// caller's terminal (docs/linux-backend.md, "Standard descriptors and terminals").
//
// A terminal is more than a display: some escape sequences make it write
// the clipboard (OSC 52), answer with text the command chose (a window title
// set, then reported with CSI 21 t; DECRQSS; XTGETTCAP), define what a key
// sends (DECUDK), pass bytes through a multiplexer to the terminal beyond it
// (tmux's DCS passthrough) or read files of the host (kitty's graphics
// protocol, an APC). Answers the terminal sends after the command ended
// are read by the caller's shell. The filter passes text and the sequences
// a program needs to draw (CSI, SGR, cursor and mode changes, titles,
// colours, hyperlinks, sixel images) and removes the rest, keeping the
// terminal's parser in step with its own:
//  - what it emits is plain text, C0 controls, or a complete sequence it
//    accepted; an unfinished sequence is held until it ends (at most
//    kMaxHeld bytes; a longer CSI is removed);
//  - C1 controls never pass: not the two-byte UTF-8 forms (U+0080-U+009F),
//    not overlong forms of them, and, when the terminal is not UTF-8, not
//    the raw bytes 0x80-0x9F (they are C1 controls there);
//  - a string it passes (OSC, DCS) that the command abandons (CAN, SUB, or
//    ESC not followed by '\') is closed with ST, as the terminal would end it.
// Sources: ECMA-48 (control functions), xterm's ctlseqs, RFC 3629 (UTF-8).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace cordon::core {

class terminal_filter {
 public:
  static constexpr std::size_t kMaxHeld = 256;

  // `utf8`: the terminal decodes UTF-8 (locale_is_utf8 of the caller's
  // environment). Otherwise every byte is a character and 0x80-0x9F are C1.
  explicit terminal_filter(bool utf8) : utf8_(utf8) {}

  // Appends to `out` what of `in` may reach the terminal. Bytes of an
  // unfinished character or sequence are held for the next call; a stream
  // that ends inside one simply drops them.
  void feed(std::string_view in, std::string& out);

  // The stream ended: a held sequence or character is dropped, and a string
  // being passed is closed with ST, so the terminal does not read what comes
  // after the command (its shell's prompt) as part of it.
  void finish(std::string& out);

  // Sequences and C1 controls removed so far.
  std::size_t removed() const noexcept { return removed_; }

 private:
  enum class state {
    ground,
    escape,         // after ESC
    csi,            // ESC [ ... collecting, held
    osc_number,     // ESC ] digits, held until ';' or the end decides
    dcs_head,       // ESC P params/intermediates, held until the final byte decides
    string_pass,    // inside an accepted OSC or DCS string: streamed
    string_drop,    // inside a removed string
    string_escape,  // ESC seen inside a string
  };
  void character(std::string_view c, std::string& out);  // one decoded character
  void ascii(char b, std::string& out);
  void begin_string(bool pass, bool osc, std::string& out);
  void end_string(std::string& out);
  bool interrupts(char b, std::string& out);
  void abandon_held();
  void decide_osc(std::string& out);
  void decide_dcs(char final_byte, std::string& out);
  void decide_csi(char final_byte, std::string& out);

  bool utf8_;
  state state_ = state::ground;
  bool string_passes_ = false;  // string_escape: was the string being passed?
  bool string_is_osc_ = false;  // BEL ends an OSC, not a DCS
  std::string held_;            // the sequence so far (states csi, osc_number, dcs_head)
  std::string partial_;         // an unfinished UTF-8 character
  std::size_t expected_ = 0;    // its total length
  std::size_t removed_ = 0;
};

// True when the environment's locale (LC_ALL, else LC_CTYPE, else LANG, as
// setlocale(3) reads them) names the UTF-8 codeset.
bool locale_is_utf8(const char* lc_all, const char* lc_ctype, const char* lang);

}  // namespace cordon::core
