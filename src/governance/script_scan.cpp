// script_scan.cpp — does a sed script or an awk program run a command?
// (program_commands.h). Both readers lean to "yes": what they cannot follow
// counts as running a command, which makes the request need approval.
#include <cctype>
#include <cstring>

#include "governance/program_commands.h"

namespace cordon::governance::detail {
namespace {

// GNU sed's grammar, as far as the position of commands goes
// (info sed, "sed scripts"): [address[,address]][!]command, separated by
// newlines or ";"; s and y carry delimited parts; a, i, c, r, R, w, W, and
// "#" take the rest of the line; labels end at ";" or a newline.
class sed_reader {
 public:
  explicit sed_reader(const std::string& s) : s_(s) {}

  bool runs_commands() {
    for (;;) {
      while (i_ < s_.size() && (std::isspace(static_cast<unsigned char>(s_[i_])) || s_[i_] == ';')) ++i_;
      if (i_ >= s_.size()) return false;
      if (!address()) return true;
      if (i_ < s_.size() && s_[i_] == ',') {
        ++i_;
        if (!address()) return true;
      }
      blanks();
      while (i_ < s_.size() && s_[i_] == '!') {
        ++i_;
        blanks();
      }
      if (i_ >= s_.size()) return true;  // an address without a command: not sed
      if (!command(s_[i_++])) return true;
    }
  }

 private:
  void blanks() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t')) ++i_;
  }
  void to_line_end() {
    while (i_ < s_.size() && s_[i_] != '\n') i_ += s_[i_] == '\\' ? 2 : 1;
  }
  void label() {
    while (i_ < s_.size() && s_[i_] != ';' && s_[i_] != '\n' && s_[i_] != '}') ++i_;
  }
  bool digits() {
    std::size_t start = i_;
    while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
    return i_ > start;
  }
  // Up to the next unescaped `d`; false at the end of the script.
  bool delimited(char d) {
    while (i_ < s_.size()) {
      if (s_[i_] == '\\') {
        i_ += 2;
        continue;
      }
      if (s_[i_++] == d) return true;
    }
    return false;
  }
  bool address() {
    if (i_ >= s_.size()) return true;
    char c = s_[i_];
    if (c == '$') {
      ++i_;
    } else if (c == '+' || c == '~') {
      ++i_;
      if (!digits()) return false;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      digits();
      if (i_ < s_.size() && s_[i_] == '~') {
        ++i_;
        if (!digits()) return false;
      }
    } else if (c == '/' || c == '\\') {
      ++i_;
      char d = c == '/' ? '/' : (i_ < s_.size() ? s_[i_++] : '/');
      if (!delimited(d)) return false;
      while (i_ < s_.size() && (s_[i_] == 'I' || s_[i_] == 'M')) ++i_;
    }
    return true;
  }
  // One command; false when it runs a command or cannot be read.
  bool command(char c) {
    switch (c) {
      case '{': case '}': case '=': case 'd': case 'D': case 'g': case 'G': case 'h': case 'H': case 'n': case 'N':
      case 'p': case 'P': case 'x': case 'z': case 'F':
        return true;
      case '#': case 'a': case 'i': case 'c': case 'r': case 'R': case 'w': case 'W':
        to_line_end();
        return true;
      case ':': case 'b': case 't': case 'T': case 'v':
        label();
        return true;
      case 'q': case 'Q': case 'l': case 'L':
        blanks();
        digits();
        return true;
      case 'y': {
        if (i_ >= s_.size()) return false;
        char d = s_[i_++];
        return d != '\\' && d != '\n' && delimited(d) && delimited(d);
      }
      case 's': return substitute();
      default: return false;  // e, and anything this reader does not know
    }
  }
  bool substitute() {
    if (i_ >= s_.size()) return false;
    char d = s_[i_++];
    if (d == '\\' || d == '\n' || !delimited(d) || !delimited(d)) return false;
    while (i_ < s_.size() && s_[i_] != ';' && s_[i_] != '\n' && s_[i_] != '}') {
      char f = s_[i_];
      if (f == 'w') {  // the rest of the line is a file name
        to_line_end();
        return true;
      }
      if (f == 'e' || !(std::isdigit(static_cast<unsigned char>(f)) || std::strchr("gpiImM \t", f))) return false;
      ++i_;
    }
    return true;
  }

  const std::string& s_;
  std::size_t i_ = 0;
};

}  // namespace

bool sed_script_runs_commands(const std::string& script) { return sed_reader(script).runs_commands(); }

// awk: skips comments, string literals and regular expression literals (a
// "/" where an operand may start); then `system(`, any `|` but `||` (output
// to a command, a command's output into getline, gawk's `|&`) and `@` (gawk's
// @load, @include) count.
bool awk_program_runs_commands(const std::string& p) {
  char prev = '\n';  // the last significant character
  for (std::size_t i = 0; i < p.size(); ++i) {
    char c = p[i];
    if (c == '#') {
      while (i < p.size() && p[i] != '\n') ++i;
      prev = '\n';
    } else if (c == '"' || (c == '/' && std::strchr("\n(,{};~!&|=?:", prev))) {
      for (++i; i < p.size() && p[i] != c; ++i) {
        if (p[i] == '\\') ++i;
      }
      if (i >= p.size()) return true;  // unterminated: not readable
      prev = c;
    } else if (c == '|') {
      if (i + 1 < p.size() && p[i + 1] == '|') {
        ++i;
        prev = '|';
      } else {
        return true;
      }
    } else if (c == '@') {
      return true;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      std::size_t start = i;
      while (i + 1 < p.size() && (std::isalnum(static_cast<unsigned char>(p[i + 1])) || p[i + 1] == '_')) ++i;
      if (p.compare(start, i + 1 - start, "system") == 0) {
        std::size_t k = i + 1;
        while (k < p.size() && std::isspace(static_cast<unsigned char>(p[k]))) ++k;
        if (k < p.size() && p[k] == '(') return true;
      }
      prev = 'a';
    } else if (!std::isspace(static_cast<unsigned char>(c)) || c == '\n') {
      prev = c;
    }
  }
  return false;
}

}  // namespace cordon::governance::detail
