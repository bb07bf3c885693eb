// sbpl_reader.cpp — a small recursive-descent reader for SBPL text.
#include "macos/sbpl_reader.h"

#include <cctype>

namespace cordon::macos_impl {

std::string_view sbpl_node::head() const noexcept {
  if (type != kind::list || items.empty() || items.front().type != kind::symbol) return {};
  return items.front().text;
}

namespace {

class reader {
 public:
  explicit reader(std::string_view text) : text_(text) {}

  result<std::vector<sbpl_node>> all() {
    std::vector<sbpl_node> forms;
    while (true) {
      skip_space();
      if (at_end()) return forms;
      if (peek() == ')') return fail("unexpected ')' with no open form");
      auto form = next();
      if (!form) return std::move(form).error_value();
      forms.push_back(std::move(*form));
    }
  }

 private:
  bool at_end() const noexcept { return pos_ >= text_.size(); }
  char peek() const noexcept { return text_[pos_]; }
  void advance() {
    if (text_[pos_] == '\n') {
      ++line_;
      column_ = 1;
    } else {
      ++column_;
    }
    ++pos_;
  }
  error fail(const std::string& why) const {
    return make_error(error_code::parse_error, why,
                      "line " + std::to_string(line_) + ", column " + std::to_string(column_));
  }

  void skip_space() {
    while (!at_end()) {
      const char c = peek();
      if (c == ';') {
        while (!at_end() && peek() != '\n') advance();
      } else if (std::isspace(static_cast<unsigned char>(c))) {
        advance();
      } else {
        return;
      }
    }
  }

  result<sbpl_node> next() {
    sbpl_node node;
    node.line = line_;
    node.column = column_;
    const char c = peek();
    if (c == '(') return list(std::move(node));
    if (c == '"') {
      node.type = sbpl_node::kind::string;
      return quoted(std::move(node), true);
    }
    if (c == '#') {
      advance();
      if (at_end() || peek() != '"') return fail("unknown '#' form (only #\"...\" raw strings)");
      node.type = sbpl_node::kind::raw_string;
      return quoted(std::move(node), false);
    }
    return atom(std::move(node));
  }

  result<sbpl_node> list(sbpl_node node) {
    const int open_line = line_, open_column = column_;
    advance();  // '('
    node.type = sbpl_node::kind::list;
    while (true) {
      skip_space();
      if (at_end()) {
        return make_error(error_code::parse_error, "form opened here is never closed",
                          "line " + std::to_string(open_line) + ", column " + std::to_string(open_column));
      }
      if (peek() == ')') {
        advance();
        return node;
      }
      auto item = next();
      if (!item) return std::move(item).error_value();
      node.items.push_back(std::move(*item));
    }
  }

  // An ordinary string unescapes \" and \\ (and \n, \t); a raw string keeps
  // every backslash and ends at the first '"'.
  result<sbpl_node> quoted(sbpl_node node, bool escapes) {
    advance();  // opening quote
    while (true) {
      if (at_end()) {
        return make_error(error_code::parse_error, "string is never terminated",
                          "line " + std::to_string(node.line) + ", column " + std::to_string(node.column));
      }
      char c = peek();
      advance();
      if (c == '"') return node;
      if (escapes && c == '\\') {
        if (at_end()) continue;
        c = peek();
        advance();
        if (c == 'n') c = '\n';
        if (c == 't') c = '\t';
      }
      node.text.push_back(c);
    }
  }

  result<sbpl_node> atom(sbpl_node node) {
    while (!at_end()) {
      const char c = peek();
      if (std::isspace(static_cast<unsigned char>(c)) || c == '(' || c == ')' || c == '"' || c == ';') break;
      node.text.push_back(c);
      advance();
    }
    if (node.text.empty()) return fail("empty symbol");
    bool numeric = true;
    for (std::size_t i = 0; i < node.text.size(); ++i) {
      const char c = node.text[i];
      if (!(std::isdigit(static_cast<unsigned char>(c)) || (i == 0 && c == '-' && node.text.size() > 1))) {
        numeric = false;
      }
    }
    node.type = numeric ? sbpl_node::kind::number : sbpl_node::kind::symbol;
    return node;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  int line_ = 1;
  int column_ = 1;
};

}  // namespace

result<std::vector<sbpl_node>> read_sbpl(std::string_view text) { return reader(text).all(); }

}  // namespace cordon::macos_impl
