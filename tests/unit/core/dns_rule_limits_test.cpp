// dns_rule_limits_test.cpp — a wildcard rule's DNS limits, dns_types and
// dns_queries_per_minute (cordon/policy.h; docs/network.md, "DNS inside the
// sandbox"): where validation accepts and refuses them, and
// their JSON spelling.
#include <gtest/gtest.h>

#include "cordon/policy_json.h"
#include "cordon/validation.h"

namespace cordon {
namespace {

sandbox_policy with_rule(network_rule r) {
  sandbox_policy p;
  p.network.mode = network_mode::filtered;
  p.network.rules = {std::move(r)};
  return p;
}

network_rule wildcard() {
  network_rule r;
  r.host = "*.example.test";
  r.action = rule_action::allow;
  return r;
}

std::vector<std::string> locations(const sandbox_policy& p) {
  std::vector<std::string> out;
  for (const auto& e : validate_sandbox_policy(p).errors) out.push_back(e.location);
  return out;
}

TEST(DnsRuleLimits, AWildcardAllowRuleTakesThem) {
  network_rule r = wildcard();
  r.dns_types = {"A", "AAAA", "HTTPS"};
  r.dns_queries_per_minute = 120;
  EXPECT_TRUE(validate_sandbox_policy(with_rule(r)).ok());
  r.host = "*";
  EXPECT_TRUE(validate_sandbox_policy(with_rule(r)).ok());
  r.host = "**.example.test";
  EXPECT_TRUE(validate_sandbox_policy(with_rule(r)).ok());
}

TEST(DnsRuleLimits, RefusedWhereTheyCannotApply) {
  network_rule r = wildcard();
  r.host = "api.example.test";  // one name: nothing of the command's own to ask
  r.dns_types = {"A"};
  EXPECT_EQ(locations(with_rule(r)), std::vector<std::string>{"/network/rules/0/dns_types"});
  r.host = "203.0.113.7";
  EXPECT_EQ(locations(with_rule(r)), std::vector<std::string>{"/network/rules/0/dns_types"});
  r = wildcard();
  r.action = rule_action::deny;  // a denied name is answered NXDOMAIN
  r.dns_queries_per_minute = 10;
  EXPECT_EQ(locations(with_rule(r)), std::vector<std::string>{"/network/rules/0/dns_queries_per_minute"});
}

TEST(DnsRuleLimits, UnknownTypesAndRatesOutOfRangeAreRefused) {
  network_rule r = wildcard();
  r.dns_types = {"A", "a", "NULL"};
  EXPECT_EQ(locations(with_rule(r)),
            (std::vector<std::string>{"/network/rules/0/dns_types/1", "/network/rules/0/dns_types/2"}));
  r = wildcard();
  r.dns_queries_per_minute = 0;
  EXPECT_EQ(locations(with_rule(r)), std::vector<std::string>{"/network/rules/0/dns_queries_per_minute"});
  r.dns_queries_per_minute = 1000001;
  EXPECT_EQ(locations(with_rule(r)), std::vector<std::string>{"/network/rules/0/dns_queries_per_minute"});
}

TEST(DnsRuleLimits, JsonSpellingRoundTrips) {
  const auto parsed = sandbox_policy_from_json(R"({"schema_version": 1, "network": {"mode": "filtered",
    "rules": [{"host": "*.example.test", "action": "allow", "dns_types": ["A", "AAAA"],
               "dns_queries_per_minute": 60}]}})");
  ASSERT_TRUE(parsed) << parsed.error_value().describe();
  ASSERT_EQ(parsed->network.rules.size(), 1u);
  EXPECT_EQ(parsed->network.rules[0].dns_types, (std::vector<std::string>{"A", "AAAA"}));
  EXPECT_EQ(parsed->network.rules[0].dns_queries_per_minute, 60u);
  const auto again = sandbox_policy_from_json(sandbox_policy_to_json(*parsed));
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, *parsed);
  const auto negative = sandbox_policy_from_json(R"({"schema_version": 1, "network": {"mode": "filtered",
    "rules": [{"host": "*.example.test", "action": "allow", "dns_queries_per_minute": -1}]}})");
  ASSERT_FALSE(negative);
  EXPECT_EQ(negative.error_value().location, "/network/rules/0/dns_queries_per_minute");
}

}  // namespace
}  // namespace cordon
