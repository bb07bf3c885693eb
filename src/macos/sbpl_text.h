// sbpl_text.h — writing SBPL: a small expression tree and its rendering.
//
// The generator builds rules as trees and renders them here, so quoting and
// layout live in one place (short forms on one line, longer ones one member
// per line, two spaces per level).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace cordon::macos_impl {

struct sbpl_expr {
  std::string atom;              // a symbol or an already-quoted string when `members` is empty
  std::vector<sbpl_expr> members;
  bool is_list = false;

  static sbpl_expr symbol(std::string name) { return {std::move(name), {}, false}; }
  static sbpl_expr list(std::vector<sbpl_expr> members) { return {{}, std::move(members), true}; }
};

// "(head a b ...)" with `head` a symbol.
sbpl_expr sbpl_form(std::string_view head, std::vector<sbpl_expr> args);

// An ordinary string: "..." with '"' and '\' escaped.
sbpl_expr sbpl_string(std::string_view text);

// A raw string #"..." for regexes (backslashes kept). The caller guarantees
// `text` has no '"' (regex_is_writable()).
sbpl_expr sbpl_raw_string(std::string_view text);

// (param "KEY")
sbpl_expr sbpl_param(std::string_view key);

// `text` with every ERE metacharacter escaped by a backslash, so that a regex
// matches it literally (a path inside a regex).
std::string regex_quote(std::string_view text);

// `regex` with every ASCII letter outside a bracket expression and not
// escaped by a backslash written as a case class ("git" -> "[gG][iI][tT]"),
// so that it matches whatever case a path is spelled in (APFS, the default
// macOS file system, is case-insensitive: ".GIT/hooks" is ".git/hooks").
std::string regex_case_fold(std::string_view regex);

// False when `text` cannot appear in a raw string (it contains '"' or a newline).
bool regex_is_writable(std::string_view text);

// The expression as text; forms longer than a line are broken one member per
// line, indented by `indent` spaces plus two per level.
std::string render_sbpl(const sbpl_expr& expr, int indent = 0);

}  // namespace cordon::macos_impl
