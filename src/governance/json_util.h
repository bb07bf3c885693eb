// json_util.h — the JSON helpers governance shares: canonical form, digests,
// strict object reading (unknown keys are errors: a typo must never grant).
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "cordon/result.h"

namespace cordon::governance::detail {

using json = nlohmann::json;  // std::map objects: dump() sorts keys

// Canonical form: sorted keys, no whitespace, strings as UTF-8. Throws
// nlohmann::json::type_error for invalid UTF-8 (callers validate first).
std::string canonical(const json& value);

// Parses one JSON document; parse_error with "line L, column C" on failure.
// Duplicated keys are an error (nlohmann keeps the last one silently).
result<json> parse_document(std::string_view text);

// error_code::invalid_policy at `location` unless `object` is an object whose
// keys are all in `allowed`.
result<void> check_keys(const json& object, std::initializer_list<std::string_view> allowed,
                        const std::string& location);

// Typed field access with a JSON-pointer location in every error.
result<std::string> get_string(const json& object, std::string_view key, const std::string& location,
                               bool required);
result<std::vector<std::string>> get_strings(const json& object, std::string_view key,
                                             const std::string& location);

// True when `s` is valid UTF-8 without NUL bytes.
bool valid_text(std::string_view s) noexcept;

error invalid(const std::string& location, std::string message);

}  // namespace cordon::governance::detail
