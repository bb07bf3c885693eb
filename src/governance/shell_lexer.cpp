// shell_lexer.cpp — the splitter's lexer (shell_lexer.h).
#include "governance/shell_lexer.h"

#include <algorithm>
#include <array>

namespace cordon::governance::detail {
namespace {

using token = shell_token;

struct pending_heredoc {
  std::string delimiter;
  bool quoted = false;
  bool strip_tabs = false;
};

class lexer {
 public:
  // `uncertain` may hold doubts of an enclosing line already (a nested
  // script is lexed after them): this lexer stops at its own first doubt.
  lexer(std::string_view text, std::vector<std::string>& uncertain)
      : s_(text), uncertain_(uncertain), start_(uncertain.size()) {}

  // All tokens up to the end or the first uncertainty.
  std::vector<token> run() {
    std::vector<token> out;
    while (clear()) {
      while (pos_ < s_.size() && is_blank(s_[pos_])) ++pos_;
      if (pos_ >= s_.size()) break;
      char c = s_[pos_];
      if (c == '\\' && pos_ + 1 < s_.size() && s_[pos_ + 1] == '\n') {
        pos_ += 2;
        continue;
      }
      if (c == '#') {
        while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
        continue;
      }
      if (c == '\n') {
        ++pos_;
        out.push_back(op_token("\n"));
        read_heredoc_bodies();
        continue;
      }
      if ((c == '<' || c == '>') && pos_ + 1 < s_.size() && s_[pos_ + 1] == '(') {
        token t;
        if (!read_process_substitution(t)) break;
        out.push_back(std::move(t));
        continue;
      }
      if (is_operator_char(c)) {
        auto op = read_operator();
        if (op.empty()) break;
        out.push_back(op_token(op));
        if (op == "<<" || op == "<<-") {
          if (!read_heredoc_delimiter(op == "<<-")) break;
          out.push_back(std::move(delimiter_));  // the parser takes it as the redirection's target
        }
        continue;
      }
      token t;
      if (!read_word(t)) break;
      // "2>" and "2>&1": a number right before a redirection is its descriptor.
      if (pos_ < s_.size() && (s_[pos_] == '<' || s_[pos_] == '>') && !t.quoted && !t.word.text.empty() &&
          std::all_of(t.word.text.begin(), t.word.text.end(), [](char d) { return std::isdigit(static_cast<unsigned char>(d)); })) {
        continue;
      }
      out.push_back(std::move(t));
    }
    if (clear() && !heredocs_.empty()) doubt("here-document without its body");
    return out;
  }

  // The scripts of the command substitutions read (`$(...)`, backticks), in
  // order: the splitter reads them as command lines of their own. Each is a
  // doubt too (its output is expanded at run time), kept in `notes` so that
  // the lexer goes on past it.
  const std::vector<std::string>& substitutions() const { return substitutions_; }
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  static token op_token(std::string op) {
    token t;
    t.op = std::move(op);
    return t;
  }

  bool clear() const { return uncertain_.size() == start_; }
  void doubt(std::string why) {
    if (clear()) uncertain_.push_back(std::move(why));
  }

  std::string read_operator() {
    static constexpr std::array<std::string_view, 16> kKnown = {"&&", "||", "|&", ";;&", ";;", ";&", "&>>", "&>",
                                                                ">>", ">|", ">&", "<<<", "<<-", "<<", "<&", "<>"};
    for (auto op : kKnown) {
      if (s_.substr(pos_, op.size()) == op) {
        if (op == "<>") {
          doubt("unsupported operator \"" + std::string(op) + "\"");
          return {};
        }
        pos_ += op.size();
        return std::string(op);
      }
    }
    return std::string(1, s_[pos_++]);  // | & ; < > ( )
  }

  // $... outside single quotes: a dynamic part, or a doubt. `in_double_quotes`:
  // there a `$` before the closing `"` is a plain `$`; outside, `$"..."` is
  // bash's locale quoting, which this splitter does not read.
  bool read_dollar(token& t, bool in_double_quotes) {
    std::size_t next = pos_ + 1;
    if (next >= s_.size() || is_blank(s_[next]) || s_[next] == '\n' || (in_double_quotes && s_[next] == '"')) {
      t.word.text += '$';
      ++pos_;
      return true;
    }
    char n = s_[next];
    if (n == '(') {
      if (next + 1 < s_.size() && s_[next + 1] == '(') {
        doubt("arithmetic expansion $((...))");
        return false;
      }
      auto close = matching_paren(next + 1);
      if (close == std::string_view::npos) {
        doubt("unclosed command substitution $(...)");
        return false;
      }
      substitution(std::string(s_.substr(next + 1, close - next - 1)), "command substitution $(...)");
      t.word.dynamic = true;
      t.word.text += std::string(s_.substr(pos_, close + 1 - pos_));
      pos_ = close + 1;
      return true;
    }
    if (n == '\'' && !in_double_quotes) {
      pos_ = next + 1;
      t.quoted = true;
      return read_ansi_c(t);
    }
    if (n == '\'' || n == '"') {
      doubt("$\"...\" quoting");
      return false;
    }
    t.word.dynamic = true;
    if (n == '{') {
      auto close = s_.find('}', next);
      if (close == std::string_view::npos) {
        doubt("unclosed ${");
        return false;
      }
      auto inner = s_.substr(next, close - next);
      if (inner.find_first_of("$`") != std::string_view::npos) {
        doubt("expansion inside ${...}");
        return false;
      }
      t.word.text += std::string(s_.substr(pos_, close + 1 - pos_));
      pos_ = close + 1;
      return true;
    }
    std::size_t end = next;
    if (is_name_start(n)) {
      while (end < s_.size() && is_name_char(s_[end])) ++end;
    } else {
      ++end;  // $1 $@ $* $# $? $$ $! $- $0
    }
    t.word.text += std::string(s_.substr(pos_, end - pos_));
    pos_ = end;
    return true;
  }

  bool read_word(token& t) {
    t.is_word = true;
    bool first = true;
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (is_blank(c) || c == '\n' || is_operator_char(c)) break;
      if (c == '\'') {
        auto close = s_.find('\'', pos_ + 1);
        if (close == std::string_view::npos) {
          doubt("unclosed single quote");
          return false;
        }
        t.word.text += std::string(s_.substr(pos_ + 1, close - pos_ - 1));
        t.quoted = true;
        pos_ = close + 1;
      } else if (c == '"') {
        t.quoted = true;
        ++pos_;
        if (!read_double_quoted(t)) return false;
      } else if (c == '\\') {
        if (pos_ + 1 >= s_.size()) {
          ++pos_;
          break;
        }
        if (s_[pos_ + 1] != '\n') t.word.text += s_[pos_ + 1];
        t.quoted = true;
        pos_ += 2;
      } else if (c == '$') {
        if (!read_dollar(t, false)) return false;
      } else if (c == '`') {
        if (!read_backticks(t)) return false;
      } else {
        // Globs, brace expansion and a leading tilde expand at run time.
        if (c == '*' || c == '?' || (c == '[' && bracket_closes()) || (c == '~' && first) ||
            (c == '{' && s_.substr(pos_, s_.find_first_of(" \t\n;&|", pos_) - pos_).find_first_of(",.") != std::string_view::npos)) {
          t.word.dynamic = true;
        }
        t.word.text += c;
        ++pos_;
      }
      first = false;
    }
    return true;
  }

  bool read_double_quoted(token& t) {
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (c == '\\' && pos_ + 1 < s_.size()) {
        char n = s_[pos_ + 1];
        if (n == '$' || n == '`' || n == '"' || n == '\\') {
          t.word.text += n;
        } else if (n != '\n') {
          t.word.text += c;
          t.word.text += n;
        }
        pos_ += 2;
      } else if (c == '`') {
        if (!read_backticks(t)) return false;
      } else if (c == '$') {
        if (!read_dollar(t, true)) return false;
      } else {
        t.word.text += c;
        ++pos_;
      }
    }
    doubt("unclosed double quote");
    return false;
  }

  // $'...' (bash's ANSI-C quoting), from after the opening quote: the
  // escapes \a \b \e \E \f \n \r \t \v \\ \' \" \? \NNN (octal) and \xHH
  // are decoded; \u, \U, \c and a NUL (bash ends the word there) are doubts.
  bool read_ansi_c(token& t) {
    static constexpr std::string_view kFrom = "abeEfnrtv\\'\"?", kTo = "\a\b\x1b\x1b\f\n\r\t\v\\'\"?";
    auto digits = [&](std::size_t at, std::size_t most, int base) {
      std::size_t n = 0;
      int value = 0;
      for (; n < most && at + n < s_.size(); ++n) {
        char d = static_cast<char>(std::tolower(static_cast<unsigned char>(s_[at + n])));
        int v = d >= '0' && d <= '9' ? d - '0' : (base == 16 && d >= 'a' && d <= 'f' ? d - 'a' + 10 : base);
        if (v >= base) break;
        value = value * base + v;
      }
      return std::pair{n, value};
    };
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (c == '\'') {
        ++pos_;
        return true;
      }
      if (c != '\\' || pos_ + 1 >= s_.size()) {
        t.word.text += c;
        ++pos_;
        continue;
      }
      char e = s_[pos_ + 1];
      std::size_t known = kFrom.find(e);
      auto [count, value] = e == 'x' ? digits(pos_ + 2, 2, 16) : digits(pos_ + 1, 3, 8);
      if (known != std::string_view::npos) {
        t.word.text += kTo[known];
        pos_ += 2;
      } else if ((e == 'x' || std::isdigit(static_cast<unsigned char>(e))) && count > 0 && value != 0) {
        t.word.text += static_cast<char>(value & 0xff);
        pos_ += (e == 'x' ? 2 : 1) + count;
      } else {
        doubt("$'...' with the escape \\" + std::string(1, e));
        return false;
      }
    }
    doubt("unclosed $'...'");
    return false;
  }

  // A "[" is a bracket glob only when a "]" closes it in the same word
  // ("[ -f x ]" runs the command "[").
  bool bracket_closes() const {
    for (std::size_t i = pos_ + 1; i < s_.size() && !is_blank(s_[i]) && s_[i] != '\n' && !is_operator_char(s_[i]); ++i) {
      if (s_[i] == ']') return true;
    }
    return false;
  }

  void substitution(std::string script, std::string why) {
    substitutions_.push_back(std::move(script));
    notes_.push_back(std::move(why));
  }

  // The index of the ")" that closes a "$(" whose script starts at `from`
  // (quotes, backslashes and nested parentheses skipped), or npos.
  std::size_t matching_paren(std::size_t from) const {
    int depth = 1;
    for (std::size_t i = from; i < s_.size(); ++i) {
      char c = s_[i];
      if (c == '\\') {
        ++i;
      } else if (c == '\'' || c == '`') {
        i = s_.find(c, i + 1);
        if (i == std::string_view::npos) return i;
      } else if (c == '"') {
        for (++i; i < s_.size() && s_[i] != '"'; ++i) {
          if (s_[i] == '\\') ++i;
        }
        if (i >= s_.size()) return std::string_view::npos;
      } else if (c == '(') {
        ++depth;
      } else if (c == ')' && --depth == 0) {
        return i;
      }
    }
    return std::string_view::npos;
  }

  // <(...) or >(...): a file name (a pipe to or from the script, which runs
  // at the same time): a run-time word, and the script is read.
  bool read_process_substitution(token& t) {
    auto close = matching_paren(pos_ + 2);
    if (close == std::string_view::npos) {
      doubt("unclosed process substitution");
      return false;
    }
    substitution(std::string(s_.substr(pos_ + 2, close - pos_ - 2)), "process substitution <(...) or >(...)");
    t.is_word = true;
    t.word = {std::string(s_.substr(pos_, close + 1 - pos_)), true};
    pos_ = close + 1;
    return true;
  }

  // `...`: the script up to the next unescaped backtick, with \`, \$ and
  // \\ unescaped as the shell does.
  bool read_backticks(token& t) {
    std::string script;
    for (std::size_t i = pos_ + 1; i < s_.size(); ++i) {
      char c = s_[i];
      if (c == '\\' && i + 1 < s_.size() && (s_[i + 1] == '`' || s_[i + 1] == '$' || s_[i + 1] == '\\')) {
        script += s_[++i];
      } else if (c == '`') {
        substitution(std::move(script), "command substitution with backticks");
        t.word.dynamic = true;
        t.word.text += std::string(s_.substr(pos_, i + 1 - pos_));
        pos_ = i + 1;
        return true;
      } else {
        script += c;
      }
    }
    doubt("unclosed backtick command substitution");
    return false;
  }

  bool read_heredoc_delimiter(bool strip_tabs) {
    while (pos_ < s_.size() && is_blank(s_[pos_])) ++pos_;
    token t;
    if (pos_ >= s_.size() || is_operator_char(s_[pos_]) || s_[pos_] == '\n' || !read_word(t) || t.word.text.empty()) {
      doubt("here-document without a delimiter");
      return false;
    }
    if (t.word.dynamic && !t.quoted) {
      doubt("here-document delimiter with an expansion");
      return false;
    }
    heredocs_.push_back({t.word.text, t.quoted, strip_tabs});
    delimiter_ = std::move(t);
    return true;
  }

  void read_heredoc_bodies() {
    for (const auto& doc : heredocs_) {
      bool found = false;
      while (pos_ < s_.size()) {
        auto eol = s_.find('\n', pos_);
        auto line = s_.substr(pos_, (eol == std::string_view::npos ? s_.size() : eol) - pos_);
        pos_ = eol == std::string_view::npos ? s_.size() : eol + 1;
        if (doc.strip_tabs) {
          while (!line.empty() && line.front() == '\t') line.remove_prefix(1);
        }
        if (line == doc.delimiter) {
          found = true;
          break;
        }
        if (!doc.quoted && line.find_first_of("$`\\") != std::string_view::npos) {
          doubt("here-document with expansions (unquoted delimiter \"" + doc.delimiter + "\")");
          return;
        }
      }
      if (!found) {
        doubt("here-document \"" + doc.delimiter + "\" is not terminated");
        return;
      }
    }
    heredocs_.clear();
  }

  std::string_view s_;
  std::size_t pos_ = 0;
  std::vector<std::string>& uncertain_;
  std::size_t start_;  // doubts before this lexer ran
  std::vector<pending_heredoc> heredocs_;
  token delimiter_;
  std::vector<std::string> substitutions_;
  std::vector<std::string> notes_;
};

}  // namespace

shell_lexed lex_shell(std::string_view text, std::vector<std::string>& uncertain) {
  lexer lex(text, uncertain);
  shell_lexed out;
  out.tokens = lex.run();
  out.substitutions = lex.substitutions();
  out.notes = lex.notes();
  return out;
}

}  // namespace cordon::governance::detail
