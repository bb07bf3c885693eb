// src/core/strict_json.cpp — see strict_json.h.
#include "core/strict_json.h"

#include <algorithm>
#include <set>
#include <utility>

#include "core/json_pointer.h"

namespace cordon::detail {
namespace {

using json = nlohmann::ordered_json;

// nlohmann's DOM parser silently keeps the last of duplicated keys and loses
// the position of number-overflow errors, so the document is built by this
// SAX handler instead, which records both.
class strict_builder final : public nlohmann::json_sax<json> {
 public:
  json root;
  std::vector<policy_error> duplicates;  // one per duplicated key, document order
  bool failed = false;
  std::size_t error_position = 0;         // bytes read when the parser gave up
  std::string error_message;

  bool null() override { return add(json(nullptr)); }
  bool boolean(bool v) override { return add(json(v)); }
  bool number_integer(number_integer_t v) override { return add(json(v)); }
  bool number_unsigned(number_unsigned_t v) override { return add(json(v)); }
  bool number_float(number_float_t v, const string_t&) override { return add(json(v)); }
  bool string(string_t& v) override { return add(json(std::move(v))); }
  bool binary(binary_t& v) override { return add(json::binary(std::move(v))); }

  bool start_object(std::size_t) override { return open(json::object(), true); }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(json::array(), false); }
  bool end_array() override { return close(); }

  bool key(string_t& k) override {
    frame& top = stack_.back();
    top.key = k;
    if (!top.keys.insert(k).second) {
      duplicates.push_back({pointer(), "duplicate key \"" + k + "\""});
    }
    return true;
  }

  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception& ex) override {
    failed = true;
    error_position = position;
    error_message = strip_prefix(ex.what());
    return false;
  }

 private:
  struct frame {
    json* node;
    bool object;
    std::set<std::string> keys;
    std::string key;
  };
  std::vector<frame> stack_;

  // JSON pointer of the element currently being built.
  std::string pointer() const {
    std::string out;
    for (const frame& f : stack_) {
      if (f.object) {
        out = pointer_join(out, f.key);
      } else {
        out = pointer_join(out, f.node->size() - 1);
      }
    }
    return out;
  }

  json* insert(json&& value) {
    if (stack_.empty()) {
      root = std::move(value);
      return &root;
    }
    frame& top = stack_.back();
    if (top.object) {
      json& slot = (*top.node)[top.key];  // a duplicate overwrites; it is reported anyway
      slot = std::move(value);
      return &slot;
    }
    top.node->push_back(std::move(value));
    return &top.node->back();
  }

  bool add(json&& value) {
    insert(std::move(value));
    return true;
  }

  bool open(json&& container, bool object) {
    // Children are only added to the innermost container, so pointers to
    // the outer ones stay valid while it is open.
    json* node = insert(std::move(container));
    stack_.push_back(frame{node, object, {}, {}});
    return true;
  }

  bool close() {
    stack_.pop_back();
    return true;
  }

  // "[json.exception.parse_error.101] parse error at line 1, column 2: syntax
  // error ..." -> "syntax error ..."; our own location replaces theirs.
  static std::string strip_prefix(std::string_view what) {
    if (const auto bracket = what.find("] "); bracket != std::string_view::npos) {
      what.remove_prefix(bracket + 2);
    }
    if (what.starts_with("parse error")) {
      if (const auto colon = what.find(": "); colon != std::string_view::npos) {
        what.remove_prefix(colon + 2);
      }
    }
    return std::string(what);
  }
};

// "line L, column C" (1-based, columns in bytes) of the last byte read.
std::string line_column(std::string_view text, std::size_t bytes_read) {
  const std::size_t offset = std::min(bytes_read == 0 ? 0 : bytes_read - 1, text.size());
  std::size_t line = 1;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(offset - line_start + 1);
}

}  // namespace

strict_json parse_strict_json(std::string_view text) {
  strict_builder builder;
  strict_json out;
  // sax_parse reports syntax errors through the handler, never by throwing.
  const bool parsed = json::sax_parse(text, &builder);
  if (!parsed || builder.failed) {
    out.syntax_error = builder.error_message;
    out.syntax_location = line_column(text, builder.error_position);
    return out;
  }
  out.syntax_ok = true;
  out.root = std::move(builder.root);
  out.duplicates = std::move(builder.duplicates);
  return out;
}

}  // namespace cordon::detail
