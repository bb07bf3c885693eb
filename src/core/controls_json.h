// controls_json.h — a plan's enforcement contract as the report's `controls`
// object (docs/report.md, the `controls` member): one member per control with its
// level, and its mechanism and detail when they are not empty. Shared by the
// report writers of every platform (core/report.cpp, windows/report.cpp).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "cordon/enforcement.h"

namespace cordon::core {

// Input: every control's status. Output: {"<control>": {"level", "mechanism"?, "detail"?}},
// in the contract's order (ordered_json: the summary and readers list controls in that order).
inline nlohmann::ordered_json controls_json(const enforcement_contract& contract) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const auto& [which, status] : contract) {
    nlohmann::ordered_json c = {{"level", std::string(to_string(status.level))}};
    if (!status.mechanism.empty()) c["mechanism"] = status.mechanism;
    if (!status.detail.empty()) c["detail"] = status.detail;
    out[std::string(to_string(which))] = c;
  }
  return out;
}

}  // namespace cordon::core
