// controls_json.h — a plan's enforcement contract as the report's `controls`
// object (docs/report.md, the `controls` member): one member per control with its
// level, and its mechanism and detail when they are not empty. Shared by the
// report writers of every platform (core/report.cpp, windows/report.cpp).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "cordon/enforcement.h"

namespace cordon::core {

// Input: every control's status. Output: {"<control>": {"level", "mechanism"?, "detail"?}}.
inline nlohmann::json controls_json(const enforcement_contract& contract) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [which, status] : contract) {
    nlohmann::json c = {{"level", std::string(to_string(status.level))}};
    if (!status.mechanism.empty()) c["mechanism"] = status.mechanism;
    if (!status.detail.empty()) c["detail"] = status.detail;
    out[std::string(to_string(which))] = c;
  }
  return out;
}

}  // namespace cordon::core
