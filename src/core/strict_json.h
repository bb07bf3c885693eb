// src/core/strict_json.h — JSON parsing that refuses what nlohmann's DOM
// parser would silently accept or lose: duplicated keys (it keeps the last)
// and the position of number-overflow errors.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "cordon/policy_json.h"

namespace cordon::detail {

struct strict_json {
  nlohmann::ordered_json root;          // the document; meaningful when syntax_ok
  bool syntax_ok = false;
  std::string syntax_error;             // e.g. "syntax error while parsing value - ..."
  std::string syntax_location;          // "line L, column C" (1-based, column in bytes)
  std::vector<policy_error> duplicates; // one per duplicated key, document order
};

// Parses `text` as one JSON document (no comments, nothing after it).
strict_json parse_strict_json(std::string_view text);

}  // namespace cordon::detail
