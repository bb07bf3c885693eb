// fuzz/policy_check.h — the properties cordon_fuzz_policy checks on one
// input, shared with tests/unit/core/fuzz_regressions_test.cpp, which replays
// fuzz/regressions/policy/* and the seed corpus through the same checks.
//
// Input: any bytes, read as policy JSON. Beyond "no crash, no sanitizer
// report" (the fuzzer's part), it checks:
//  - a rejection names a location (a JSON pointer or "line L, column C");
//  - a valid policy's normal form survives a JSON round trip, its JSON text
//    is stable, and validating it again changes nothing;
//  - every rule of a valid filtered policy matches a destination built from
//    its own pattern, and that destination is decided by that rule or an
//    earlier one (the validator and the matcher share one host grammar).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "cordon/host_rules.h"
#include "cordon/policy_json.h"
#include "cordon/validation.h"

namespace cordon::fuzz {

// A destination the pattern matches, or "" when it matches none (a
// one-label wildcard below a 252-character name).
inline std::string example_destination(const std::string& pattern) {
  if (pattern == "*") return "example.com";
  if (pattern.starts_with("**.")) return pattern.substr(3);
  if (pattern.starts_with("*.")) return pattern.size() > 253 ? std::string() : "x" + pattern.substr(1);
  return pattern;
}

// The first violated property, described; "" when all hold.
inline std::string check_policy_input(std::string_view text) {
  auto parsed = sandbox_policy_from_json(text);
  if (!parsed) {
    const auto& e = parsed.error_value();
    if (e.code == error_code::parse_error && !e.location.starts_with("line ")) {
      return "a parse error without line and column: " + e.describe();
    }
    if (e.code == error_code::invalid_policy && !e.location.empty() && e.location.front() != '/') {
      return "a structural error whose location is not a JSON pointer: " + e.describe();
    }
    if (e.code != error_code::parse_error && e.code != error_code::invalid_policy) {
      return "an unexpected error code: " + e.describe();
    }
    return {};
  }
  const validation_result first = validate_sandbox_policy(*parsed);
  if (!first.ok()) {
    for (const auto& e : first.errors) {
      if (e.location.empty() || e.location.front() != '/') return "a validation error without a pointer: " + e.reason;
    }
    return {};
  }
  const validation_result second = validate_sandbox_policy(first.policy);
  if (!second.ok() || !(second.policy == first.policy)) {
    return "validation is not idempotent:\n" + sandbox_policy_to_json(first.policy);
  }
  const std::string json = sandbox_policy_to_json(first.policy);
  auto back = sandbox_policy_from_json(json);
  if (!back || !(*back == first.policy)) return "the normal form does not survive a JSON round trip:\n" + json;
  if (sandbox_policy_to_json(*back) != json) return "the JSON text is not stable:\n" + json;

  const network_policy& net = first.policy.network;
  if (net.mode != network_mode::filtered) return {};
  for (std::size_t i = 0; i < net.rules.size(); ++i) {
    const auto& rule = net.rules[i];
    const std::string dest = example_destination(rule.host);
    if (dest.empty()) continue;
    auto decided = match_host_rules(net, dest, rule.port.value_or(80));
    if (!decided) return "rule " + rule.host + ": its example destination is refused: " + decided.error_value().describe();
    if (!decided->rule || *decided->rule > i) return "rule " + rule.host + " does not match " + dest;
    if (net.rules[*decided->rule].action != decided->action) return "the decision differs from its rule: " + rule.host;
  }
  return {};
}

}  // namespace cordon::fuzz
