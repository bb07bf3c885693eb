// Unit tests: which addresses the broker treats as non-public
// (is_non_public_address, broker.h) and its pure decisions
// (src/broker/decision.h): the rule decision on the named destination, then
// which resolved addresses may be dialed.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "broker/broker.h"
#include "broker/decision.h"
#include "broker_test_support.h"

namespace cordon::broker {
namespace {

using test::filtered;
using test::rule;

TEST(BrokerAddressClass, Table) {
  struct row {
    const char* address;
    bool non_public;
  };
  const row rows[] = {
      // IPv4 special ranges, edges included
      {"0.0.0.0", true},
      {"0.255.255.255", true},
      {"1.0.0.0", false},
      {"9.255.255.255", false},
      {"10.0.0.0", true},
      {"10.255.255.255", true},
      {"11.0.0.0", false},
      {"100.63.255.255", false},
      {"100.64.0.0", true},
      {"100.127.255.255", true},
      {"100.128.0.0", false},
      {"126.255.255.255", false},
      {"127.0.0.1", true},
      {"127.255.255.254", true},
      {"128.0.0.0", false},
      {"169.253.255.255", false},
      {"169.254.169.254", true},  // cloud metadata
      {"169.255.0.0", false},
      {"172.15.255.255", false},
      {"172.16.0.0", true},
      {"172.31.255.255", true},
      {"172.32.0.0", false},
      {"192.0.0.0", true},
      {"192.0.0.255", true},
      {"192.0.1.0", false},
      {"192.0.2.1", false},     // documentation: public
      {"198.51.100.7", false},  // documentation: public
      {"203.0.113.7", false},   // documentation: public
      {"192.167.255.255", false},
      {"192.168.0.0", true},
      {"192.168.255.255", true},
      {"192.169.0.0", false},
      {"223.255.255.255", false},
      {"224.0.0.1", true},
      {"239.255.255.255", true},
      {"240.0.0.1", true},
      {"255.255.255.255", true},
      {"8.8.8.8", false},
      {"93.184.216.34", false},
      // IPv6
      {"::", true},
      {"::1", true},
      {"[::1]", true},
      {"2001:db8::1", false},  // documentation: public
      {"2606:4700::1111", false},
      {"fc00::1", true},
      {"fd12:3456::1", true},
      {"fbff:ffff::1", false},
      {"fe80::1", true},
      {"febf::1", true},
      {"fec0::1", true},
      {"feff::1", true},
      {"ff02::1", true},
      {"ff0e::1", true},
      // IPv4-mapped and IPv4-compatible: the embedded address decides
      {"::ffff:127.0.0.1", true},
      {"::ffff:7f00:1", true},
      {"::ffff:10.1.2.3", true},
      {"::ffff:8.8.8.8", false},
      {"::127.0.0.1", true},
      {"::10.0.0.1", true},
      {"::8.8.8.8", false},
      {"::2", true},  // ::0.0.0.2, in 0/8
      // NAT64: the well-known prefix embeds the IPv4 address; local-use is local
      {"64:ff9b::127.0.0.1", true},
      {"64:ff9b::a00:1", true},
      {"64:ff9b::8.8.8.8", false},
      {"64:ff9b:1::8.8.8.8", true},
      // Not an address: fail closed
      {"", true},
      {"localhost", true},
      {"example.com", true},
      {"127.1", true},
      {"010.0.0.1", true},
      {"1.2.3.4.5", true},
      {"fe80::1%eth0", true},
      {"[8.8.8.8]", true},  // brackets are for IPv6 only
      {"[2001:db8::1]", false},
      {"2001:db8::1::2", true},
  };
  for (const auto& r : rows) {
    EXPECT_EQ(is_non_public_address(r.address), r.non_public) << r.address;
  }
}

TEST(BrokerDecision, DecideName) {
  const auto policy = filtered({rule("**.example.com", rule_action::allow), rule("evil.example.com", rule_action::deny),
                                rule("10.0.0.1", rule_action::allow, 22)});
  auto d = decide_name(policy, "WWW.Example.COM.", 443);
  ASSERT_TRUE(d.decision);
  EXPECT_EQ(d.host, "www.example.com");
  EXPECT_EQ(d.decision->action, rule_action::allow);
  EXPECT_EQ(d.decision->rule, 0u);
  EXPECT_FALSE(d.ip_literal);
  EXPECT_TRUE(d.reason.empty());

  d = decide_name(policy, "[::ffff:10.0.0.1]", 22);
  ASSERT_TRUE(d.decision);
  EXPECT_EQ(d.host, "10.0.0.1");
  EXPECT_TRUE(d.ip_literal);
  EXPECT_EQ(d.decision->rule, 2u);

  d = decide_name(policy, "other.org", 443);
  ASSERT_TRUE(d.decision);
  EXPECT_EQ(d.decision->action, rule_action::deny);
  EXPECT_FALSE(d.decision->rule);
  EXPECT_EQ(d.reason, "denied by the default action");

  d = decide_name(policy, "a\x1b[2J.example.com", 443);
  EXPECT_FALSE(d.decision);
  EXPECT_EQ(d.host, "a\\x1b[2J.example.com");  // printable in the evidence
  EXPECT_EQ(d.reason.rfind("invalid destination: ", 0), 0u) << d.reason;

  d = decide_name(policy, "www.example.com", 0);
  EXPECT_FALSE(d.decision);
  EXPECT_EQ(d.reason.rfind("invalid destination: ", 0), 0u) << d.reason;
}

TEST(BrokerDecision, DenyOfAnIpv4AddressCoversItsNat64Form) {
  const auto policy = filtered({rule("198.51.100.2", rule_action::deny), rule("*", rule_action::allow)});
  for (const char* host : {"[64:ff9b::198.51.100.2]", "[64:ff9b::c633:6402]", "64:ff9b::c633:6402"}) {
    SCOPED_TRACE(host);
    auto d = decide_name(policy, host, 80);
    ASSERT_TRUE(d.decision);
    EXPECT_EQ(d.decision->action, rule_action::deny);
    EXPECT_EQ(d.decision->rule, 0u);
    EXPECT_EQ(d.reason, "NAT64 address of 198.51.100.2, denied by rule 0");
  }
  // Another embedded address, and one outside the /96, stay allowed by `*`.
  for (const char* host : {"[64:ff9b::198.51.100.3]", "[64:ff9b:0:1::c633:6402]"}) {
    SCOPED_TRACE(host);
    auto d = decide_name(policy, host, 80);
    ASSERT_TRUE(d.decision);
    EXPECT_EQ(d.decision->action, rule_action::allow);
    EXPECT_EQ(d.decision->rule, 1u);
  }
  // The default action alone does not override an explicit allow of the form.
  const auto explicit_allow = filtered({rule("64:ff9b::c633:6402", rule_action::allow)});
  auto d = decide_name(explicit_allow, "[64:ff9b::c633:6402]", 80);
  ASSERT_TRUE(d.decision);
  EXPECT_EQ(d.decision->action, rule_action::allow);
}

TEST(BrokerDecision, PublicAddressesAreKept) {
  const auto policy = filtered({rule("api.example.com", rule_action::allow)});
  const auto c = choose_addresses(policy, "api.example.com", 443, {"203.0.113.7", "2001:db8::7", "203.0.113.7"});
  EXPECT_EQ(c.usable, (std::vector<std::string>{"203.0.113.7", "2001:db8::7"}));  // in order, no duplicates
  EXPECT_TRUE(c.reason.empty());
}

TEST(BrokerDecision, NonPublicNeedsAnIpRuleThatDecidesIt) {
  const std::vector<std::string> loopback = {"127.0.0.1"};
  // A name rule does not open the address it resolves to.
  auto c = choose_addresses(filtered({rule("db.example.com", rule_action::allow)}), "db.example.com", 5432, loopback);
  EXPECT_TRUE(c.usable.empty());
  EXPECT_EQ(c.reason, "resolves to non-public address 127.0.0.1; only an IP rule can allow it");
  // Neither does `*`, nor a default allow.
  c = choose_addresses(filtered({rule("*", rule_action::allow)}), "db.example.com", 5432, loopback);
  EXPECT_TRUE(c.usable.empty());
  c = choose_addresses(filtered({}, rule_action::allow), "db.example.com", 5432, loopback);
  EXPECT_TRUE(c.usable.empty());
  // An IP rule for that address does, on its port only.
  const auto ip_rule =
      filtered({rule("db.example.com", rule_action::allow), rule("127.0.0.1", rule_action::allow, 5432)});
  c = choose_addresses(ip_rule, "db.example.com", 5432, loopback);
  EXPECT_EQ(c.usable, loopback);
  c = choose_addresses(ip_rule, "db.example.com", 22, loopback);
  EXPECT_TRUE(c.usable.empty());
  // ... unless a broader rule decides the address first.
  c = choose_addresses(filtered({rule("*", rule_action::allow), rule("127.0.0.1", rule_action::allow)}), "x.example",
                       80, loopback);
  EXPECT_TRUE(c.usable.empty());
  // An IP rule that denies never opens it.
  c = choose_addresses(filtered({rule("127.0.0.1", rule_action::deny)}, rule_action::allow), "x.example", 80, loopback);
  EXPECT_TRUE(c.usable.empty());
  // Spelling does not matter: the mapped form is the IPv4 address.
  c = choose_addresses(filtered({rule("::ffff:127.0.0.1", rule_action::allow)}), "x.example", 80, {"127.0.0.1"});
  EXPECT_EQ(c.usable, loopback);
  c = choose_addresses(filtered({rule("[0:0::1]", rule_action::allow)}), "x.example", 80, {"::1"});
  EXPECT_EQ(c.usable, (std::vector<std::string>{"::1"}));
}

TEST(BrokerDecision, MixedAnswersKeepThePublicOnes) {
  // DNS rebinding: one public and one private answer; only the public one is dialed.
  const auto c = choose_addresses(filtered({rule("x.example", rule_action::allow)}), "x.example", 443,
                                  {"10.0.0.5", "203.0.113.9", "::ffff:192.168.1.1", "fe80::1%2", "junk"});
  EXPECT_EQ(c.usable, (std::vector<std::string>{"203.0.113.9"}));
}

TEST(BrokerDecision, IpLiteralReason) {
  const auto c = choose_addresses(filtered({rule("*", rule_action::allow)}), "10.0.0.1", 443, {"10.0.0.1"});
  EXPECT_TRUE(c.usable.empty());
  EXPECT_EQ(c.reason, "non-public address 10.0.0.1; only an IP rule can allow it");
  const auto none = choose_addresses(filtered({rule("*", rule_action::allow)}), "x.example", 443, {"junk"});
  EXPECT_TRUE(none.usable.empty());
  EXPECT_EQ(none.reason, "no usable address for x.example");
}

TEST(BrokerDecision, Printable) {
  EXPECT_EQ(printable("ok.example"), "ok.example");
  EXPECT_EQ(printable(std::string("a\0\n\\\xff", 5)), "a\\x00\\x0a\\x5c\\xff");
  EXPECT_EQ(printable(std::string(400, 'a'), 10), "aaaaaaaaaa...");
}

}  // namespace
// The host's own interface addresses are the host, public or not: a service
// listening on 0.0.0.0 answers on each of them.
TEST(BrokerDecision, TheHostsOwnAddressesNeedAnIpRule) {
  const std::vector<std::string> own = {"127.0.0.1", "203.0.113.2", "2001:db8::2"};
  auto c = choose_addresses(filtered({rule("*", rule_action::allow)}), "203.0.113.2", 80, {"203.0.113.2"}, own);
  EXPECT_TRUE(c.usable.empty());
  EXPECT_EQ(c.reason, "this host's own address 203.0.113.2; only an IP rule can allow it");
  c = choose_addresses(filtered({rule("**.example.com", rule_action::allow)}), "me.example.com", 443,
                       {"2001:db8::2", "203.0.113.9"}, own);
  EXPECT_EQ(c.usable, std::vector<std::string>{"203.0.113.9"});  // the other answer is still fine
  c = choose_addresses(filtered({rule("**.example.com", rule_action::allow)}), "me.example.com", 443,
                       {"2001:db8::2"}, own);
  EXPECT_EQ(c.reason, "resolves to this host's own address 2001:db8::2; only an IP rule can allow it");
  c = choose_addresses(filtered({rule("203.0.113.2", rule_action::allow, 80)}), "203.0.113.2", 80, {"203.0.113.2"},
                       own);
  EXPECT_EQ(c.usable, std::vector<std::string>{"203.0.113.2"});
  EXPECT_TRUE(opened_by_ip_rule(filtered({rule("203.0.113.2", rule_action::allow, 80)}), "203.0.113.2", 80));
  EXPECT_FALSE(opened_by_ip_rule(filtered({rule("*", rule_action::allow)}), "203.0.113.2", 80));
}

}  // namespace cordon::broker
