// broker_evidence_stream_test.cpp — the supervisor's merge of the confined
// broker's streamed evidence (src/broker/evidence_stream.h): counters come
// from the entries, a final entry replaces its open report, what is held is
// bounded, and a broker that died leaves its open connections marked.
#include "broker/evidence_stream.h"

#include <gtest/gtest.h>

namespace cordon::broker {
namespace {

network_connection entry(const std::string& host, const std::string& action, std::uint64_t sent = 0) {
  network_connection c;
  c.protocol = "http_connect";
  c.host = host;
  c.port = 443;
  c.action = action;
  c.bytes_sent = sent;
  return c;
}

network_connection dns_entry(const std::string& name, const std::string& action = "allow") {
  network_connection c = entry(name, action);
  c.protocol = "dns";
  c.port = 53;
  c.rule_consulted = true;
  c.rule = 0;
  return c;
}

// Repeated DNS queries are one entry with a count; a flood of distinct ones
// cannot push a connection that carried bytes, or a denial, out of the list:
// the least informative entries give way first (docs/network.md, Evidence).
TEST(BrokerEvidenceStream, DnsFloodsAreAggregatedAndNeverCrowdOutAConnection) {
  streamed_evidence s(8);
  for (int i = 0; i < 500; ++i) s.recorded(0, dns_entry("same.example"));
  for (int i = 0; i < 1000; ++i) s.recorded(0, dns_entry("q" + std::to_string(i) + ".example"));
  s.recorded(0, entry("real.example", "allow", 812));
  s.recorded(0, entry("denied.example", "deny"));
  for (int i = 0; i < 1000; ++i) s.recorded(0, dns_entry("r" + std::to_string(i) + ".example"));
  const auto& e = s.evidence();
  EXPECT_EQ(e.total, 2502U);
  EXPECT_EQ(e.allowed, 2501U);
  EXPECT_EQ(e.denied, 1U);
  EXPECT_EQ(e.aggregated, 499U);
  ASSERT_EQ(e.connections.size(), network_evidence::max_recorded);
  EXPECT_EQ(e.connections[0].host, "same.example");
  EXPECT_EQ(e.connections[0].count, 500U);
  int real = 0, denial = 0;
  for (const auto& c : e.connections) {
    real += c.host == "real.example";
    denial += c.host == "denied.example";
  }
  EXPECT_EQ(real, 1);
  EXPECT_EQ(denial, 1);
  std::uint64_t listed = 0;
  for (const auto& c : e.connections) listed += c.count;
  EXPECT_EQ(listed + e.not_recorded, e.total) << "every query is listed, counted into an entry, or not_recorded";
}

TEST(BrokerEvidenceStream, ADnsQueryWithAnotherAnswerOrActionIsAnotherEntry) {
  streamed_evidence s(8);
  auto a = dns_entry("n.example");
  a.address = "203.0.113.1";
  auto b = a;
  b.address = "203.0.113.2";
  s.recorded(0, a);
  s.recorded(0, b);
  s.recorded(0, dns_entry("n.example", "deny"));
  s.recorded(0, a);
  const auto& e = s.evidence();
  EXPECT_EQ(e.connections.size(), 3U);
  EXPECT_EQ(e.connections[0].count, 2U);
  EXPECT_EQ(e.aggregated, 1U);
}

TEST(BrokerEvidenceStream, AFinalEntryReplacesItsOpenReportAndCountsOnce) {
  streamed_evidence s(8);
  s.opened(1, entry("a.example", "allow"));
  s.opened(1, entry("a.example", "allow", 10));  // a later report of the same connection
  EXPECT_EQ(s.evidence().total, 0U) << "an open connection is not counted until it ends";
  s.recorded(1, entry("a.example", "allow", 42));
  s.recorded(0, entry("dns.example", "deny"));
  network_evidence last;
  last.memory_peak_bytes = 4096;
  s.finished(std::move(last));
  const auto& e = s.evidence();
  ASSERT_EQ(e.connections.size(), 2U);
  EXPECT_EQ(e.total, 2U);
  EXPECT_EQ(e.allowed, 1U);
  EXPECT_EQ(e.denied, 1U);
  EXPECT_EQ(e.connections[0].bytes_sent, 42U);
  EXPECT_EQ(e.connections[0].reason, "");
  EXPECT_EQ(e.memory_peak_bytes, 4096U);
}

TEST(BrokerEvidenceStream, ABrokerThatDiedLeavesItsOpenConnectionsMarked) {
  streamed_evidence s(8);
  network_connection terminated = entry("t.example", "error");
  terminated.reason = "terminated TLS: the run ended before both TLS handshakes completed";
  terminated.requests.push_back({});
  s.opened(2, entry("b.example", "allow", 5));
  s.opened(3, terminated);
  s.recorded(1, entry("a.example", "deny"));
  s.ended_open("the network broker process was killed by signal Killed while this connection was open");
  const auto& e = s.evidence();
  ASSERT_EQ(e.connections.size(), 3U);
  EXPECT_EQ(e.total, 3U);
  EXPECT_EQ(e.allowed, 1U);
  EXPECT_EQ(e.denied, 1U);
  EXPECT_EQ(e.error, 1U);
  EXPECT_EQ(e.connections[1].host, "b.example");
  EXPECT_EQ(e.connections[1].action, "allow");
  EXPECT_EQ(e.connections[1].bytes_sent, 5U) << "as last reported";
  EXPECT_EQ(e.connections[1].reason,
            "the network broker process was killed by signal Killed while this connection was open");
  EXPECT_EQ(e.connections[2].reason,
            "terminated TLS: the run ended before both TLS handshakes completed; the network broker process was "
            "killed by signal Killed while this connection was open");
  EXPECT_TRUE(e.connections[2].requests.empty()) << "an open report lists no requests";
}

TEST(BrokerEvidenceStream, WhatItHoldsIsBoundedAndTheCountersStillCountEverything) {
  streamed_evidence s(2);
  for (std::uint64_t id = 1; id <= 5; ++id) s.opened(id, entry("open.example", "allow"));
  s.ended_open("gone");
  EXPECT_EQ(s.evidence().total, 2U) << "more open reports than the broker's connection limit are ignored";
  for (std::size_t i = 0; i < network_evidence::max_recorded + 10; ++i) s.recorded(0, entry("x.example", "malformed"));
  s.recorded(0, entry("y.example", "nonsense"));
  const auto& e = s.evidence();
  EXPECT_EQ(e.connections.size(), network_evidence::max_recorded);
  EXPECT_EQ(e.total, 2U + network_evidence::max_recorded + 11);
  EXPECT_EQ(e.not_recorded, e.total - network_evidence::max_recorded);
  EXPECT_EQ(e.allowed, 2U);
  EXPECT_EQ(e.malformed, network_evidence::max_recorded + 10);
  EXPECT_EQ(e.error, 1U) << "an action outside the five values counts as an error";
  EXPECT_EQ(e.allowed + e.denied + e.unreachable + e.malformed + e.error, e.total);
}

}  // namespace
}  // namespace cordon::broker
