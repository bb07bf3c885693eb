// Unit tests: the network rule matcher (cordon/host_rules.h).
//
// The main table is tests/corpus/host_rules.json, data that the network
// broker can replay: each scenario is a policy's network section, each case a
// destination and the expected decision.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "cordon/host_rules.h"
#include "cordon/policy_json.h"
#include "cordon/validation.h"
#include "source_dir.h"

namespace cordon {
namespace {

using nlohmann::json;

std::string describe(const rule_decision& d) {
  return std::string(d.action == rule_action::allow ? "allow" : "deny") + " by " +
         (d.rule ? "rule " + std::to_string(*d.rule) : std::string("default"));
}

std::string describe(const result<rule_decision>& r) {
  return r ? describe(*r) : r.error_value().describe();
}

TEST(HostRules, TableFromTheCorpus) {
  bool ok = false;
  const std::string text = test::read_text(test::source_dir() + "/tests/corpus/host_rules.json", &ok);
  ASSERT_TRUE(ok) << "tests/corpus/host_rules.json not found under " << test::source_dir();
  const json table = json::parse(text);
  std::size_t cases = 0;
  for (const auto& scenario : table.at("scenarios")) {
    const std::string name = scenario.at("name");
    SCOPED_TRACE(name);
    const json doc = {{"schema_version", 1}, {"network", scenario.at("network")}};
    auto parsed = sandbox_policy_from_json(doc.dump());
    ASSERT_TRUE(parsed) << parsed.error_value().describe();
    validation_result validated = validate_sandbox_policy(*parsed);
    ASSERT_TRUE(validated.ok()) << validated.errors.at(0).location << ": " << validated.errors.at(0).reason;
    // The table's rules never contain duplicates, so indices agree before and after validation.
    ASSERT_EQ(validated.policy.network.rules.size(), parsed->network.rules.size());

    for (const auto& c : scenario.at("cases")) {
      ++cases;
      const std::string host = c.at("host");
      const int port = c.at("port");
      SCOPED_TRACE("host \"" + host + "\" port " + std::to_string(port));
      const auto got = match_host_rules(validated.policy.network, host, port);
      // The matcher normalizes patterns itself: the raw (unvalidated) rules decide the same.
      const auto raw = match_host_rules(parsed->network, host, port);
      EXPECT_EQ(describe(raw), describe(got));
      if (c.contains("error")) {
        ASSERT_FALSE(got) << describe(got);
        EXPECT_EQ(to_string(got.error_value().code), c.at("error").get<std::string>());
        EXPECT_TRUE(got.error_value().location.empty());
        continue;
      }
      ASSERT_TRUE(got) << got.error_value().describe();
      rule_decision want;
      want.action = c.at("action") == "allow" ? rule_action::allow : rule_action::deny;
      if (c.at("rule").is_number()) want.rule = c.at("rule").get<std::size_t>();
      EXPECT_EQ(describe(*got), describe(want));
      EXPECT_EQ(*got, want);
      // A deciding rule's action is the decision.
      if (got->rule) {
        EXPECT_EQ(validated.policy.network.rules.at(*got->rule).action, got->action);
      }
    }
  }
  EXPECT_EQ(cases, table.at("case_count").get<std::size_t>());
  EXPECT_GE(cases, 60u);
}

TEST(HostRules, NormalizeDestinationHost) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"Example.COM.", "example.com"},     {"[2001:DB8:0::1]", "2001:db8::1"},
      {"2001:db8::1", "2001:db8::1"},      {"::ffff:10.0.0.1", "10.0.0.1"},
      {"[::FFFF:A00:1]", "10.0.0.1"},      {"10.0.0.1", "10.0.0.1"},
      {"xn--bcher-kva.example", "xn--bcher-kva.example"},
  };
  for (const auto& [in, want] : cases) {
    auto got = normalize_destination_host(in);
    ASSERT_TRUE(got) << in << ": " << got.error_value().describe();
    EXPECT_EQ(*got, want) << in;
  }
  auto wildcard = normalize_destination_host("*.example.com");
  ASSERT_FALSE(wildcard);
  EXPECT_EQ(wildcard.error_value().code, error_code::invalid_destination);
  EXPECT_NE(wildcard.error_value().message.find("wildcard"), std::string::npos);
  // Control bytes are never echoed into a message.
  auto control = normalize_destination_host("a\x1b[2Jb.com");
  ASSERT_FALSE(control);
  EXPECT_EQ(control.error_value().message.find('\x1b'), std::string::npos) << control.error_value().message;
}

TEST(HostRules, SinglePatterns) {
  struct c {
    const char* pattern;
    const char* host;
    bool matches;
  };
  const c cases[] = {
      {"*", "a.b.c", true},           {"*", "[::1]", true},
      {"*.a.b", "x.a.b", true},       {"*.a.b", "a.b", false},
      {"*.a.b", "y.x.a.b", false},    {"**.a.b", "a.b", true},
      {"**.a.b", "y.x.a.b", true},    {"**.a.b", "xa.b", false},
      {"A.B.", "a.b", true},          {"::ffff:1.2.3.4", "1.2.3.4", true},
      {"1.2.3.4", "[::ffff:102:304]", true},
  };
  for (const auto& t : cases) {
    auto got = host_pattern_matches(t.pattern, t.host);
    ASSERT_TRUE(got) << t.pattern << " " << t.host << ": " << got.error_value().describe();
    EXPECT_EQ(*got, t.matches) << t.pattern << " vs " << t.host;
  }
  auto bad = host_pattern_matches("a.*.com", "a.b.com");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error_value().code, error_code::invalid_policy);
}

TEST(HostRules, AnInvalidPolicyDecidesNothing) {
  network_policy net;
  net.mode = network_mode::filtered;
  net.default_action = rule_action::allow;
  net.rules = {{"ok.example", std::nullopt, rule_action::allow}, {"https://evil.example", std::nullopt, rule_action::deny}};
  // Even a destination the first rule would decide gets no decision.
  auto r = match_host_rules(net, "ok.example", 443);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error_value().code, error_code::invalid_policy);
  EXPECT_EQ(r.error_value().location, "/network/rules/1/host");

  net.rules = {{"ok.example", 0, rule_action::deny}};
  r = match_host_rules(net, "ok.example", 443);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error_value().location, "/network/rules/0/port");

  // Outside filtered mode rules are not looked at (validation forbids them there).
  net.mode = network_mode::denied;
  r = match_host_rules(net, "ok.example", 443);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->action, rule_action::deny);
}

}  // namespace
}  // namespace cordon
