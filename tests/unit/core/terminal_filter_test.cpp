// The terminal output filter (src/core/terminal_filter.h): what draws passes
// unchanged, what makes the terminal write the clipboard, answer, program
// keys or pass bytes beyond it is removed, C1 controls never pass, and the
// result does not depend on how the stream is cut.
#include "core/terminal_filter.h"

#include "../../../fuzz/terminal_filter_check.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace cordon::core {
namespace {

// The whole stream, then its end.
std::string filtered(const std::string& in, bool utf8 = true) { return fuzz::filter_in_pieces(in, utf8, in.size() + 1); }

// The same stream fed one byte at a time.
std::string filtered_bytewise(const std::string& in, bool utf8 = true) { return fuzz::filter_in_pieces(in, utf8, 1); }

TEST(TerminalFilter, TextAndDrawingPassUnchanged) {
  for (const std::string& s : {
           std::string("plain text\r\n\ttabs and a bell\a"),
           std::string("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),                // é, €, an emoji
           std::string("\x1b[1;31mred\x1b[0m \x1b[38;5;208mx\x1b[m"),              // SGR
           std::string("\x1b[?1049h\x1b[2J\x1b[H\x1b[10;20H\x1b[?25l\x1b[?1049l"),  // alternate screen, cursor
           std::string("\x1b[6n\x1b[c\x1b[>c\x1b[8;24;80t"),                         // cursor report, DA, resize
           std::string("\x1b" "7\x1b" "8\x1b(B\x1b)0\x1b=\x1b>\x1b" "c"),           // ESC sequences
           std::string("\x1b]0;a title\a\x1b]2;another\x1b\\"),                      // titles, BEL and ST
           std::string("\x1b]8;;https://example.org/\x1b\\link\x1b]8;;\x1b\\"),      // hyperlink
           std::string("\x1b]4;1;rgb:ff/00/00\a\x1b]10;?\a\x1b]104\a\x1b]133;A\a"),  // colours, marks
           std::string("\x1bP0;0;0q#0;2;0;0;0~-\x1b\\"),                             // sixel
           std::string("\x1bP=1s\x1b\\text\x1bP=2s\x1b\\"),                          // synchronized output
       }) {
    EXPECT_EQ(filtered(s), s);
    EXPECT_EQ(filtered_bytewise(s), s);
  }
}

TEST(TerminalFilter, ClipboardAndFileTransferAreRemoved) {
  EXPECT_EQ(filtered("a\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaAo=\ab"), "ab");
  EXPECT_EQ(filtered("a\x1b]52;c;Y3VybA==\x1b\\b"), "ab");
  EXPECT_EQ(filtered("a\x1b]52;c;?\ab"), "ab");                          // a clipboard read
  EXPECT_EQ(filtered("a\x1b]50;?\ab"), "ab");                            // a font query
  EXPECT_EQ(filtered("a\x1b]1337;File=name=eA==:AAAA\ab"), "ab");        // iTerm2 file transfer
  EXPECT_EQ(filtered("a\x1b]5522;type=write\ab"), "ab");                 // kitty clipboard
  EXPECT_EQ(filtered("a\x1b]l;old title\x1b\\b"), "ab");                 // no number
  EXPECT_EQ(filtered("a\x1b_Ga=T,t=f;L2hvbWUvdS8uc3NoL2lkX3JzYQ==\x1b\\b"), "ab");  // kitty graphics from a file
  EXPECT_EQ(filtered("a\x1b^privacy\x1b\\b\x1bXsos\x1b\\c"), "abc");
}

TEST(TerminalFilter, SequencesThatMakeTheTerminalAnswerOrForwardAreRemoved) {
  EXPECT_EQ(filtered("\x1b]2;rm -rf ~\a\x1b[21t\x1b[20t"), "\x1b]2;rm -rf ~\a");  // title set stays, reports go
  EXPECT_EQ(filtered("a\x1bP$qm\x1b\\b"), "ab");                                 // DECRQSS
  EXPECT_EQ(filtered("a\x1bP+q544e\x1b\\b"), "ab");                              // XTGETTCAP
  EXPECT_EQ(filtered("a\x1bP0;1|17/6563686f\x1b\\b"), "ab");                     // DECUDK: F6 types "echo"
  EXPECT_EQ(filtered("a\x1bPtmux;\x1b\x1b]52;c;eA==\a\x1b\\b"), "ab");           // tmux passthrough
  EXPECT_EQ(filtered("a\x1b[5ib\x1b[4i"), "ab");                                 // printer controller
}

TEST(TerminalFilter, C1ControlsNeverPass) {
  // U+009D (OSC) and U+009B (CSI) in UTF-8, their overlong forms, raw bytes.
  EXPECT_EQ(filtered("a\xc2\x9d" "52;c;eA==\xc2\x9c" "b"), "a52;c;eA==b");
  EXPECT_EQ(filtered("a\xc2\x9b" "21tb"), "a21tb");
  EXPECT_EQ(filtered("a\xe0\x82\x9d" "b\xc1\x9d" "c"), "abc");
  EXPECT_EQ(filtered("a\x9d" "b\x9b" "c"), "abc");
  EXPECT_EQ(filtered("a\xed\xa0\x80" "b"), "ab");  // a surrogate is no character either
  // An 8-bit terminal: 0x80-0x9F are C1, 0xA0-0xFF are characters.
  EXPECT_EQ(filtered("caf\xe9 \x9d" "52;c;eA==\x9c", false), "caf\xe9 52;c;eA==");
  EXPECT_EQ(filtered("\xc3\xa9", false), "\xc3\xa9");
}

TEST(TerminalFilter, AnAbandonedStringIsClosedForTheTerminal) {
  // ESC ends a passed string and starts a sequence of its own: the terminal
  // gets ST first, so both parsers agree where the string ended.
  EXPECT_EQ(filtered("\x1b]0;title\x1b[1mbold"), "\x1b]0;title\x1b\\\x1b[1mbold");
  EXPECT_EQ(filtered("\x1b]0;title\x18rest"), "\x1b]0;title\x1b\\rest");
  // A removed string ended by ESC: what follows is read afresh.
  EXPECT_EQ(filtered("\x1b]52;c;eA==\x1b[1mbold"), "\x1b[1mbold");
  // CAN aborts a CSI; an ESC inside one starts over.
  EXPECT_EQ(filtered("\x1b[1;3\x18x\x1b[1\x1b[2mz"), "\x18x\x1b[2mz");
}

// A stream that ends inside a passed string closes it (the shell's prompt
// would otherwise become part of a title); one that ends inside an
// undecided sequence drops it.
TEST(TerminalFilter, TheEndClosesAnOpenString) {
  EXPECT_EQ(filtered("a\x1b]0;half a title"), "a\x1b]0;half a title\x1b\\");
  EXPECT_EQ(filtered("a\x1b]0;half\x1b"), "a\x1b]0;half\x1b\\");
  EXPECT_EQ(filtered("a\x1b]0"), "a");
  EXPECT_EQ(filtered("a\x1b[1;3"), "a");
  EXPECT_EQ(filtered("a\x1b]52;c;eA"), "a");
  EXPECT_EQ(filtered("a\xe2\x82"), "a");
  // Regression (cordon_fuzz_terminal_filter): an open string, then bytes that
  // broke a character; filtering that output again changed it.
  const std::string once = filtered(std::string("_\0x;\xf3\x1b]0\xc3\x1b", 10));
  EXPECT_EQ(once, std::string("_\0x;\x1b]0\x1b\\", 9));
  EXPECT_EQ(filtered(once), once);
}

TEST(TerminalFilter, LongSequencesAreBounded) {
  const std::string params(terminal_filter::kMaxHeld + 10, '1');
  const std::string out = filtered("\x1b[" + params + "m");
  EXPECT_EQ(out.find('\x1b'), std::string::npos) << "an overlong CSI never reaches the terminal";
  EXPECT_EQ(filtered("\x1bP" + params + "$q\x1b\\x"), "x");
  // A passed string is streamed, however long.
  const std::string title(100000, 't');
  EXPECT_EQ(filtered("\x1b]2;" + title + "\a"), "\x1b]2;" + title + "\a");
}

// Random streams of the bytes that matter: the output never holds a removed
// sequence or a C1 control, filtering it again changes nothing, and cutting
// the input anywhere gives the same output.
TEST(TerminalFilter, RandomStreamsKeepTheInvariants) {
  const std::vector<std::string> pieces = {
      "\x1b", "[", "]", "P", "_", "\\", "\a", "\x18", "52", "21", "0", ";", "t", "q", "$", "c", "m", "i",
      "a", "\xc2", "\x9d", "\x9c", "\xe0", "\x82", "\xc3\xa9", "tmux", "=1s", "2", "\x7f", "\n", "?", "8"};
  std::mt19937 random(12345);
  for (int round = 0; round < 3000; ++round) {
    std::string in;
    const int length = static_cast<int>(random() % 40);
    for (int i = 0; i < length; ++i) in += pieces[random() % pieces.size()];
    const std::string out = filtered(in);
    SCOPED_TRACE(::testing::PrintToString(in));
    EXPECT_EQ(filtered_bytewise(in), out);
    EXPECT_EQ(filtered(out), out);
    EXPECT_EQ(out.find("\x1b]52"), std::string::npos);
    EXPECT_EQ(out.find("\x1b[21t"), std::string::npos);
    EXPECT_EQ(out.find("\x1bP$q"), std::string::npos);
    EXPECT_EQ(out.find("\x1bPtmux"), std::string::npos);
    EXPECT_EQ(out.find("\x1b_"), std::string::npos);
    EXPECT_EQ(out.find("\xc2\x9d"), std::string::npos);
    EXPECT_EQ(out.find("\xc2\x9c"), std::string::npos);
  }
}

TEST(TerminalFilter, LocaleNamesUtf8) {
  EXPECT_TRUE(locale_is_utf8(nullptr, nullptr, "en_US.UTF-8"));
  EXPECT_TRUE(locale_is_utf8("C.utf8", "POSIX", "fr_FR.ISO-8859-1"));
  EXPECT_FALSE(locale_is_utf8("", "de_DE.ISO-8859-1", "en_US.UTF-8"));  // LC_CTYPE before LANG
  EXPECT_FALSE(locale_is_utf8(nullptr, nullptr, nullptr));              // the C locale
}

}  // namespace
}  // namespace cordon::core
