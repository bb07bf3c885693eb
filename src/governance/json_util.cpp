// json_util.cpp — canonical JSON and strict reading for governance documents.
#include "governance/json_util.h"

#include <algorithm>

#include "core/strict_json.h"

namespace cordon::governance::detail {

std::string canonical(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::strict);
}

result<json> parse_document(std::string_view text) {
  auto parsed = cordon::detail::parse_strict_json(text);
  if (!parsed.syntax_ok) {
    return make_error(error_code::parse_error, parsed.syntax_error, parsed.syntax_location);
  }
  if (!parsed.duplicates.empty()) {
    return make_error(error_code::invalid_policy, parsed.duplicates.front().reason,
                      parsed.duplicates.front().location);
  }
  // Re-parse into the sorted DOM; the strict pass above already proved the text sound.
  return json::parse(parsed.root.dump());
}

error invalid(const std::string& location, std::string message) {
  return make_error(error_code::invalid_policy, std::move(message), location);
}

result<void> check_keys(const json& object, std::initializer_list<std::string_view> allowed,
                        const std::string& location) {
  if (!object.is_object()) return invalid(location, "expected an object");
  for (const auto& [key, value] : object.items()) {
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      return invalid(location + "/" + key, "unknown field \"" + key + "\"");
    }
  }
  return ok;
}

result<std::string> get_string(const json& object, std::string_view key, const std::string& location,
                               bool required) {
  auto it = object.find(std::string(key));
  std::string where = location + "/" + std::string(key);
  if (it == object.end()) {
    if (required) return invalid(where, "required field is missing");
    return std::string();
  }
  if (!it->is_string()) return invalid(where, "expected a string");
  return it->get<std::string>();
}

result<std::vector<std::string>> get_strings(const json& object, std::string_view key,
                                             const std::string& location) {
  std::vector<std::string> out;
  auto it = object.find(std::string(key));
  if (it == object.end()) return out;
  std::string where = location + "/" + std::string(key);
  if (!it->is_array()) return invalid(where, "expected an array of strings");
  for (std::size_t i = 0; i < it->size(); ++i) {
    if (!(*it)[i].is_string()) return invalid(where + "/" + std::to_string(i), "expected a string");
    out.push_back((*it)[i].get<std::string>());
  }
  return out;
}

bool valid_text(std::string_view s) noexcept {
  // Well-formed UTF-8 (RFC 3629, Unicode table 3-7): no overlong forms, no
  // surrogates, nothing past U+10FFFF; so that a strict dump never throws.
  auto byte = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  std::size_t i = 0;
  while (i < s.size()) {
    unsigned char c = byte(i);
    if (c == 0) return false;
    std::size_t length = 0;
    unsigned char low = 0x80, high = 0xBF;  // the range of the second byte
    if (c < 0x80) length = 1;
    else if (c >= 0xC2 && c <= 0xDF) length = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
      length = 3;
      if (c == 0xE0) low = 0xA0;
      if (c == 0xED) high = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      length = 4;
      if (c == 0xF0) low = 0x90;
      if (c == 0xF4) high = 0x8F;
    } else {
      return false;
    }
    if (i + length > s.size()) return false;
    for (std::size_t k = 1; k < length; ++k) {
      unsigned char b = byte(i + k);
      if (k == 1 ? (b < low || b > high) : (b >> 6) != 0x2) return false;
    }
    i += length;
  }
  return true;
}

}  // namespace cordon::governance::detail
