// shell_lexer.h — the first pass of the shell splitter (shell_split.cpp;
// docs/governance.md, "Shell commands"): the text as words and operators,
// stopping at the first construct it cannot read with certainty. Quotes,
// backslashes, $'...', here-documents; the scripts of $(...), backticks,
// <(...) and >(...) are handed to the parser, each with a doubt.
#pragma once

#include <cctype>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/governance/shell_split.h"

namespace cordon::governance::detail {

struct shell_token {
  bool is_word = false;
  shell_word word;
  bool quoted = false;  // some part of the word was quoted (here-doc delimiters)
  std::string op;       // operator when !is_word; "\n" for a newline
};

inline bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
inline bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
inline bool is_operator_char(char c) { return c == '|' || c == '&' || c == ';' || c == '<' || c == '>' || c == '(' || c == ')'; }
inline bool is_blank(char c) { return c == ' ' || c == '\t'; }

struct shell_lexed {
  std::vector<shell_token> tokens;          // up to the end or the first doubt
  std::vector<std::string> substitutions;   // the scripts of $(...), `...`, <(...), >(...), in order
  std::vector<std::string> notes;           // one doubt per substitution (its output is expanded at run time)
};

// Lexes `text`. Its first doubt is appended to `uncertain` (which may hold
// an enclosing line's doubts already) and ends the tokens.
shell_lexed lex_shell(std::string_view text, std::vector<std::string>& uncertain);

}  // namespace cordon::governance::detail
