// src/core/json_pointer.h — small helpers shared by the policy reader and the
// validator, so that both report the same locations for the same field.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace cordon::detail {

// One reference token of a JSON pointer (RFC 6901): "~" -> "~0", "/" -> "~1".
inline std::string pointer_token(std::string_view key) {
  std::string out;
  out.reserve(key.size());
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

inline std::string pointer_join(std::string_view base, std::string_view key) {
  std::string out(base);
  out += '/';
  out += pointer_token(key);
  return out;
}

inline std::string pointer_join(std::string_view base, std::size_t index) {
  std::string out(base);
  out += '/';
  out += std::to_string(index);
  return out;
}

// Policies are JSON documents, so every string in one must be valid UTF-8;
// otherwise it could not be written back out unchanged.
inline bool is_valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t len = 0;
    unsigned min = 0;
    unsigned cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0U) == 0xC0U) {
      len = 2;
      min = 0x80;
      cp = c & 0x1FU;
    } else if ((c & 0xF0U) == 0xE0U) {
      len = 3;
      min = 0x800;
      cp = c & 0x0FU;
    } else if ((c & 0xF8U) == 0xF0U) {
      len = 4;
      min = 0x10000;
      cp = c & 0x07U;
    } else {
      return false;
    }
    if (i + len > s.size()) return false;
    for (std::size_t k = 1; k < len; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0U) != 0x80U) return false;
      cp = (cp << 6U) | (cc & 0x3FU);
    }
    // Overlong forms, UTF-16 surrogates and values past U+10FFFF are invalid.
    if (cp < min || cp > 0x10FFFFU || (cp >= 0xD800U && cp <= 0xDFFFU)) return false;
    i += len;
  }
  return true;
}

}  // namespace cordon::detail
