// Unit tests: the broker's DNS pieces (src/broker/dns_message.h,
// dns_cache.h) and which names the sandbox may resolve (decide_resolution).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "broker/decision.h"
#include "broker/dns_cache.h"
#include "broker/dns_message.h"
#include "broker_test_support.h"

namespace cordon::broker {
namespace {

std::string query(const std::string& dotted, std::uint16_t type) { return test::dns_query(dotted, type); }

TEST(BrokerDns, ParsesAQuery) {
  const auto got = parse_dns_query(query("Allowed.Example", dns_type_aaaa));
  ASSERT_TRUE(got.ok) << got.error;
  EXPECT_EQ(got.question.id, 0x1234);
  EXPECT_EQ(got.question.name, "allowed.example");
  EXPECT_EQ(got.question.type, dns_type_aaaa);
  EXPECT_FALSE(parse_dns_query("short").ok);
  std::string response = query("a.example", dns_type_a);
  response[2] = static_cast<char>(0x81);
  EXPECT_FALSE(parse_dns_query(response).ok);  // QR set: not a query
  std::string loop = query("a.example", dns_type_a);
  loop.replace(12, 11, std::string("\xc0\x0c", 2));  // a name pointing at itself
  EXPECT_FALSE(parse_dns_query(loop).ok);
}

TEST(BrokerDns, ErrorResponseKeepsTheQuestion) {
  const std::string q = query("denied.example", dns_type_a);
  const std::string r = dns_error_response(q, dns_nxdomain);
  ASSERT_EQ(r.size(), q.size());
  EXPECT_EQ(r.substr(0, 2), q.substr(0, 2));
  EXPECT_EQ(static_cast<unsigned char>(r[2]), 0x81);  // QR, RD kept
  EXPECT_EQ(static_cast<unsigned char>(r[3]) & 0x0f, dns_nxdomain);
  EXPECT_EQ(r.substr(12), q.substr(12));
}

TEST(BrokerDns, TheUpstreamQueryIsTheQuestionAlone) {
  const std::string q = query("allowed.example", dns_type_a);
  std::string extra = q;
  extra[7] = 1;   // ANCOUNT 1
  extra[11] = 1;  // ARCOUNT 1
  extra += std::string("\xc0\x0c\x00\x01\x00\x01\x00\x00\x00\x3c\x00\x04\x0a\x00\x00\x01", 16) + "junk";
  EXPECT_EQ(dns_upstream_query(extra), q);
  EXPECT_EQ(dns_upstream_query(q), q);
  EXPECT_EQ(dns_upstream_query("short"), "");
}

TEST(BrokerDns, AnswerAddresses) {
  std::string r = query("cdn.example", dns_type_a);
  r[2] = static_cast<char>(0x81);
  r[3] = static_cast<char>(0x80);
  r[7] = 2;  // two answers: A 192.0.2.1, AAAA 2001:db8::1, both with a compressed owner
  r += std::string("\xc0\x0c\x00\x01\x00\x01\x00\x00\x00\x3c\x00\x04\xc0\x00\x02\x01", 16);
  r += std::string("\xc0\x0c\x00\x1c\x00\x01\x00\x00\x00\x3c\x00\x10", 12) +
       std::string("\x20\x01\x0d\xb8\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01", 16);
  const auto got = dns_answer_addresses(r);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], std::make_pair(std::string("cdn.example"), std::string("192.0.2.1")));
  EXPECT_EQ(got[1].second, "2001:db8::1");
  EXPECT_TRUE(dns_answer_addresses(r.substr(0, r.size() - 3)).size() == 1u);  // a cut record is dropped
}

TEST(BrokerDns, ANameResolvesWhenSomePortAllowsIt) {
  network_policy policy;
  policy.mode = network_mode::filtered;
  policy.default_action = rule_action::deny;
  policy.rules = {{"api.example", 443, rule_action::allow},
                  {"**.internal.example", std::nullopt, rule_action::deny},
                  {"*", 8443, rule_action::allow}};
  auto d = decide_resolution(policy, "api.example");
  ASSERT_TRUE(d.decision);
  EXPECT_EQ(d.decision->action, rule_action::allow);
  EXPECT_EQ(d.decision->rule, 0u);
  d = decide_resolution(policy, "db.internal.example");  // denied on every port, 8443 included
  ASSERT_TRUE(d.decision);
  EXPECT_EQ(d.decision->action, rule_action::deny);
  d = decide_resolution(policy, "other.example");  // `*` on 8443
  EXPECT_EQ(d.decision->action, rule_action::allow);
  EXPECT_EQ(d.decision->rule, 2u);
  policy.rules.pop_back();
  d = decide_resolution(policy, "other.example");
  EXPECT_EQ(d.decision->action, rule_action::deny);
  EXPECT_FALSE(d.decision->rule);
  EXPECT_FALSE(decide_resolution(policy, "under_score.example").decision);
}

TEST(BrokerDns, CacheRemembersNamesAndForgetsTheOldest) {
  dns_cache cache;
  cache.learn("a.example", {"192.0.2.1", "2001:db8::1"});
  cache.learn("b.example", {"192.0.2.1"});
  EXPECT_EQ(cache.name_of("192.0.2.1"), "b.example");  // the latest name for an address
  EXPECT_EQ(cache.name_of("2001:db8::1"), "a.example");
  EXPECT_EQ(cache.addresses_of("a.example").size(), 2u);
  for (std::size_t i = 0; i < dns_cache::max_names; ++i) cache.learn("n" + std::to_string(i) + ".example", {"198.51.100.9"});
  EXPECT_TRUE(cache.addresses_of("a.example").empty());
  EXPECT_EQ(cache.name_of("2001:db8::1"), "");
}

// A flood of answers (as a command whose wildcard's DNS it controls could
// make): the cache keeps max_names names of max_addresses_per_name
// addresses each, its index holds no address no kept name has, and what it
// holds (held_bytes) stays bounded and returns to 0 when everything is gone.
TEST(BrokerDns, CacheIsBoundedInNamesAndAddressesPerName) {
  dns_cache cache;
  const auto address = [](std::size_t i) {
    return "2001:db8::" + std::to_string(i / 10000) + ":" + std::to_string(i % 10000);
  };
  std::size_t next = 0;
  for (int round = 0; round < 100; ++round) {  // one name answered with ever new addresses
    std::vector<std::string> fresh;
    for (int k = 0; k < 20; ++k) fresh.push_back(address(next++));
    cache.learn("hot.example", fresh);
  }
  EXPECT_EQ(cache.addresses_of("hot.example").size(), dns_cache::max_addresses_per_name);
  EXPECT_EQ(cache.indexed_addresses(), dns_cache::max_addresses_per_name);
  EXPECT_EQ(cache.name_of(address(0)), "") << "a dropped address leaves the index";
  EXPECT_EQ(cache.name_of(address(next - 1)), "hot.example");
  std::uint64_t peak = 0;
  for (std::size_t i = 0; i < 3 * dns_cache::max_names; ++i) {
    std::vector<std::string> fresh;
    for (int k = 0; k < 20; ++k) fresh.push_back(address(next++));
    cache.learn("q" + std::to_string(i) + ".wild.example", fresh);
    peak = std::max(peak, cache.held_bytes());
  }
  EXPECT_EQ(cache.names(), dns_cache::max_names);
  EXPECT_EQ(cache.indexed_addresses(), dns_cache::max_names * dns_cache::max_addresses_per_name);
  EXPECT_TRUE(cache.addresses_of("hot.example").empty());
  // At most ~15 MiB for names and addresses as long as DNS allows (253, 39).
  EXPECT_LT(peak, 16u << 20);
  EXPECT_GT(peak, dns_cache::max_names * dns_cache::max_addresses_per_name * 100u);
}

// A name answered again is the most recent: it outlives names answered once before it.
TEST(BrokerDns, CacheEvictsTheLeastRecentlyAnsweredName) {
  dns_cache cache;
  cache.learn("kept.example", {"192.0.2.1"});
  for (std::size_t i = 0; i < dns_cache::max_names + 10; ++i) {
    cache.learn("n" + std::to_string(i) + ".example", {"198.51.100.9"});
    if (i % 100 == 0) cache.learn("kept.example", {"192.0.2.1"});
  }
  EXPECT_EQ(cache.addresses_of("kept.example").size(), 1u);
  EXPECT_EQ(cache.name_of("192.0.2.1"), "kept.example");
  EXPECT_TRUE(cache.addresses_of("n0.example").empty());
}

}  // namespace
}  // namespace cordon::broker
