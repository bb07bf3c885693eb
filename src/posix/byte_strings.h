// byte_strings.h — argv and environment entries in the helper protocol's
// JSON lines (run API -> cordon-supervisor), passed as bytes, unchanged: an
// entry that is UTF-8 text is a JSON string, any other is an array of its
// byte values, so that a file name that is not UTF-8 reaches the command as
// it was given (issue 34: JSON text alone would replace such a byte by
// U+FFFD and make two names one). A NUL cannot be in a C string; the run
// API refuses one before it gets here.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace cordon::posix {

inline nlohmann::json byte_strings_json(const std::vector<std::string>& items) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& item : items) {
    try {
      (void)nlohmann::json(item).dump();  // throws for text that is not UTF-8
      out.push_back(item);
    } catch (const nlohmann::json::type_error&) {
      nlohmann::json bytes = nlohmann::json::array();
      for (unsigned char c : item) bytes.push_back(static_cast<std::uint8_t>(c));
      out.push_back(std::move(bytes));
    }
  }
  return out;
}

// The inverse; throws nlohmann::json::exception for anything else (the
// helper's caller treats that as a malformed request).
inline std::vector<std::string> byte_strings_from_json(const nlohmann::json& items) {
  std::vector<std::string> out;
  for (const auto& item : items) {
    if (item.is_string()) {
      out.push_back(item.get<std::string>());
      continue;
    }
    std::string bytes;
    for (const auto& b : item) bytes.push_back(static_cast<char>(b.get<std::uint8_t>()));
    out.push_back(std::move(bytes));
  }
  return out;
}

}  // namespace cordon::posix
