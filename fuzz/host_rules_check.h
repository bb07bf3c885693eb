// fuzz/host_rules_check.h — the properties cordon_fuzz_host_rules checks on
// one input, shared with tests/unit/core/fuzz_regressions_test.cpp, which replays
// fuzz/regressions/host_rules/* and the host-rule table through them.
//
// Input, as lines:
//   line 1   the destination host
//   line 2   the destination port in decimal, optionally prefixed by '+'
//            for default_action allow
//   line 3+  one rule each: 'A' or 'D' (allow/deny), optionally ":PORT",
//            a space, the host pattern. Other lines are skipped.
// Properties:
//  - an invalid destination, pattern or port is an error, never a decision;
//  - a decision names a rule whose port and pattern match, no earlier rule
//    matches, and without a rule the action is the default;
//  - the decision does not change with upper case or one trailing dot on a
//    DNS name, or brackets around an IPv6 literal;
//  - a validated policy decides like the raw one (validation only normalizes).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/host_rules.h"
#include "cordon/validation.h"

namespace cordon::fuzz {

inline std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> out;
  for (;;) {
    const auto nl = text.find('\n');
    out.push_back(text.substr(0, nl));
    if (nl == std::string_view::npos) return out;
    text.remove_prefix(nl + 1);
  }
}

// Decimal digits to a number, saturating at about 10^7; -1 for anything else.
inline long long decimal(std::string_view s) {
  if (s.empty()) return -1;
  long long v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return -1;
    v = v > 1000000 ? v : v * 10 + (c - '0');
  }
  return v;
}

inline std::string describe(const result<rule_decision>& r) {
  if (!r) return std::string(to_string(r.error_value().code));
  return std::string(r->action == rule_action::allow ? "allow" : "deny") + "/" +
         (r->rule ? std::to_string(*r->rule) : std::string("default"));
}

inline bool rule_matches(const network_rule& rule, std::string_view host, int port) {
  if (rule.port && *rule.port != port) return false;
  auto m = host_pattern_matches(rule.host, host);
  return m && *m;
}

// The first violated property, described; "" when all hold.
inline std::string check_host_rules_input(std::string_view text) {
  const auto lines = split_lines(text);
  if (lines.size() < 2) return {};
  const std::string host(lines[0]);
  std::string_view port_text = lines[1];
  network_policy net;
  net.mode = network_mode::filtered;
  if (port_text.starts_with('+')) {
    net.default_action = rule_action::allow;
    port_text.remove_prefix(1);
  }
  const int port = static_cast<int>(decimal(port_text));
  for (std::size_t i = 2; i < lines.size() && net.rules.size() < 64; ++i) {
    const std::string_view line = lines[i];
    const auto space = line.find(' ');
    if (line.empty() || (line[0] != 'A' && line[0] != 'D') || space == std::string_view::npos) continue;
    network_rule rule;
    rule.action = line[0] == 'A' ? rule_action::allow : rule_action::deny;
    if (line.size() > 1 && line[1] == ':') rule.port = static_cast<int>(decimal(line.substr(2, space - 2)));
    rule.host = std::string(line.substr(space + 1));
    net.rules.push_back(std::move(rule));
  }

  const auto raw = match_host_rules(net, host, port);
  const bool destination_ok = normalize_destination_host(host).has_value() && port >= 1 && port <= 65535;
  bool rules_ok = true;
  for (const auto& rule : net.rules) {
    rules_ok = rules_ok && host_pattern_matches(rule.host, "example.com").has_value() &&
               (!rule.port || (*rule.port >= 1 && *rule.port <= 65535));
  }
  if (static_cast<bool>(raw) != (destination_ok && rules_ok)) {
    return "error or decision does not follow the validity of the inputs: " + host + " -> " + describe(raw);
  }
  if (!raw) return {};

  const std::size_t decided = raw->rule.value_or(net.rules.size());
  for (std::size_t i = 0; i < decided; ++i) {
    if (rule_matches(net.rules[i], host, port)) return "an earlier rule matches: " + host + " rule " + std::to_string(i);
  }
  if (raw->rule) {
    if (!rule_matches(net.rules[decided], host, port)) return "the deciding rule does not match: " + host;
    if (net.rules[decided].action != raw->action) return "the action differs from the deciding rule: " + host;
  } else if (raw->action != net.default_action) {
    return "no rule matched but the action is not the default: " + host;
  }

  const std::string normal = normalize_destination_host(host).value();
  std::vector<std::string> variants = {normal};
  if (normal.find(':') != std::string::npos) {
    variants.push_back("[" + normal + "]");
  } else if (normal.find_first_not_of("0123456789.") != std::string::npos) {
    std::string upper = normal;
    for (char& c : upper) c = (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
    variants.push_back(upper);
    variants.push_back(normal + ".");
  }
  for (const auto& v : variants) {
    if (describe(match_host_rules(net, v, port)) != describe(raw)) {
      return "a spelling variant decides differently: " + host + " vs " + v;
    }
  }

  sandbox_policy p;
  p.network = net;
  const validation_result validated = validate_sandbox_policy(p);
  if (validated.ok()) {
    const auto normalized = match_host_rules(validated.policy.network, host, port);
    if (!normalized || normalized->action != raw->action || normalized->rule.has_value() != raw->rule.has_value()) {
      return "the validated policy decides differently: " + host + ": " + describe(raw) + " vs " + describe(normalized);
    }
  }
  return {};
}

}  // namespace cordon::fuzz
