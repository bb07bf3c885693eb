// sbpl_reader.h — reads SBPL text into s-expression trees.
//
// The subset cordon writes and checks (docs/macos-backend.md, "The profile
// language"): lists, symbols, numbers, ordinary strings "..." (backslash escapes
// for quote and backslash), raw strings #"..." (backslashes kept, for regexes), and `;`
// comments to the end of the line. It is a reader, not an evaluator: nothing
// is bound or run.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cordon/result.h"

namespace cordon::macos_impl {

struct sbpl_node {
  enum class kind { list, symbol, string, raw_string, number };
  kind type = kind::list;
  std::string text;              // atom text (string contents unescaped)
  std::vector<sbpl_node> items;  // list members
  int line = 0;                  // 1-based position of the first character
  int column = 0;

  bool is_list() const noexcept { return type == kind::list; }
  bool is_symbol(std::string_view name) const noexcept { return type == kind::symbol && text == name; }
  bool is_string() const noexcept { return type == kind::string || type == kind::raw_string; }
  // The list's first member when it is a symbol, else empty.
  std::string_view head() const noexcept;
};

// Every top-level form of `text`, in order. Errors (error_code::parse_error,
// location "line L, column C"): an unclosed "(", an unexpected ")", an
// unterminated string, an unknown "#" form, an empty symbol.
result<std::vector<sbpl_node>> read_sbpl(std::string_view text);

}  // namespace cordon::macos_impl
