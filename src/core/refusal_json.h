// refusal_json.h — why a compile was refused, as a refused report's `error`,
// `policy_errors` and `blockers` members (docs/report.md, the `error`, `policy_errors` and `blockers` members).
// Shared by the report writers of every platform (core/report.cpp,
// windows/report.cpp), so a refusal reads the same whichever backend refused.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "cordon/result.h"

namespace cordon::core {

// Input: the refusal. Output: writes `error` {code, message}, `policy_errors`
// [{location, reason}] and `blockers` [{control, required, available, reason}]
// into `report`; a blocker's reason is prefixed with its backend code
// ("root_missing: ...") when it has one (cordon/result.h, blocker::cause).
inline void add_refusal(nlohmann::ordered_json& report, const error& failure) {
  report["error"] = {{"code", std::string(to_string(failure.code))}, {"message", failure.message}};
  nlohmann::ordered_json errors = nlohmann::ordered_json::array();
  for (const auto& e : failure.errors) errors.push_back({{"location", e.location}, {"reason", e.reason}});
  report["policy_errors"] = errors;
  nlohmann::ordered_json blockers = nlohmann::ordered_json::array();
  for (const auto& b : failure.blockers) {
    blockers.push_back({{"control", b.subject_name()},
                        {"required", b.required_name()},
                        {"available", b.available_name()},
                        {"reason", b.cause.empty() ? b.reason : b.cause + ": " + b.reason}});
  }
  report["blockers"] = blockers;
}

}  // namespace cordon::core
