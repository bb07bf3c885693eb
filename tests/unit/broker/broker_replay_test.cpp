// Unit tests: the rule table tests/corpus/host_rules.json replayed through a
// running broker. For every scenario a broker runs with that scenario's
// rules; every case goes through it as an HTTP CONNECT and, where SOCKS5 can
// express it, as a SOCKS5 CONNECT. Names resolve (hook) to a public
// documentation address and every allowed connection is dialed at a local
// echo server, so nothing leaves loopback.
//
// The broker's decision (the evidence record's action and rule) must be
// match_host_rules()'s, with one deliberate difference: an allowed IP-literal
// destination in a non-public range whose deciding rule is not that very IP
// literal (`*` for 10.0.0.1 or ::1, a default allow for 10.0.0.1) is refused
// by the address check (broker.h). There the rule index still matches and
// the record says deny with the non-public reason. Those cases are counted,
// and the count is pinned below so that a change in the table or the broker
// is noticed. Destinations the matcher rejects as invalid are refused: 400
// (malformed request or invalid destination) or, over SOCKS5, reply 0x02.
#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "broker/socks5.h"
#include "broker_test_support.h"
#include "cordon/host_rules.h"
#include "cordon/policy_json.h"
#include "cordon/validation.h"
#include "source_dir.h"

namespace cordon::broker {
namespace {

using namespace test;
using nlohmann::json;

const std::string established = "HTTP/1.1 200 Connection established\r\n\r\n";

enum class expectation { allow, deny, address_check, invalid };

struct expected_decision {
  expectation kind = expectation::invalid;
  std::optional<std::size_t> rule;
};

bool is_ip_literal(const std::string& s) {
  unsigned char raw[16];
  return inet_pton(AF_INET, s.c_str(), raw) == 1 || inet_pton(AF_INET6, s.c_str(), raw) == 1;
}

// What the broker must do for `host`:`port`, from the matcher alone.
expected_decision expect(const network_policy& policy, const std::string& host, int port) {
  expected_decision e;
  const auto decided = match_host_rules(policy, host, port);
  if (!decided) return e;
  e.rule = decided->rule;
  if (decided->action == rule_action::deny) {
    e.kind = expectation::deny;
    return e;
  }
  e.kind = expectation::allow;
  const std::string normalized = *normalize_destination_host(host);
  if (is_ip_literal(normalized) && is_non_public_address(normalized)) {
    const bool own_rule = decided->rule && [&] {
      auto pattern = normalize_destination_host(policy.rules.at(*decided->rule).host);
      return pattern && *pattern == normalized;
    }();
    if (!own_rule) e.kind = expectation::address_check;
  }
  return e;
}

// The record of the broker's n-th connection (1-based), once written.
network_connection nth_record(const network_broker& broker, std::uint64_t n) {
  const auto e = wait_for_total(broker, n);
  if (e.total < n || e.connections.size() < n) return {};
  return e.connections[n - 1];
}

void check_record(const network_connection& r, const expected_decision& want, const std::string& protocol) {
  switch (want.kind) {
    case expectation::allow:
      EXPECT_EQ(r.action, "allow");
      EXPECT_EQ(r.rule, want.rule);
      EXPECT_EQ(r.reason, "");
      EXPECT_EQ(r.protocol, protocol);
      break;
    case expectation::deny:
      EXPECT_EQ(r.action, "deny");
      EXPECT_EQ(r.rule, want.rule);
      EXPECT_EQ(r.reason.rfind("denied by ", 0), 0u) << r.reason;
      EXPECT_EQ(r.protocol, protocol);
      break;
    case expectation::address_check:
      EXPECT_EQ(r.action, "deny");
      EXPECT_EQ(r.rule, want.rule);
      EXPECT_NE(r.reason.find("non-public address"), std::string::npos) << r.reason;
      EXPECT_EQ(r.protocol, protocol);
      break;
    case expectation::invalid:
      EXPECT_EQ(r.action, "malformed");
      EXPECT_FALSE(r.rule_consulted);
      EXPECT_TRUE(r.reason.rfind("invalid destination: ", 0) == 0 || r.reason.rfind("malformed request: ", 0) == 0)
          << r.reason;
      break;
  }
}

// The CONNECT authority for a table host: bare IPv6 literals get brackets.
std::string authority(const std::string& host, int port) {
  const bool bare_v6 = host.find(':') != std::string::npos && (host.empty() || host.front() != '[');
  return (bare_v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

// The SOCKS5 request for a table host, or "" when SOCKS5 cannot carry it.
std::string socks_request(const std::string& host, int port) {
  if (port < 0 || port > 65535 || host.size() > 255) return {};
  unsigned char raw[16];
  if (inet_pton(AF_INET, host.c_str(), raw) == 1 || inet_pton(AF_INET6, host.c_str(), raw) == 1) {
    return socks_ip_request(host, port);
  }
  return socks_domain_request(host, port);
}

TEST(BrokerReplay, HostRulesTable) {
  bool ok = false;
  const std::string text = cordon::test::read_text(cordon::test::source_dir() + "/tests/corpus/host_rules.json", &ok);
  ASSERT_TRUE(ok) << "tests/corpus/host_rules.json not found under " << cordon::test::source_dir();
  const json table = json::parse(text);
  test_server server(echo);

  std::size_t scenarios = 0, cases = 0, connect_checked = 0, socks_checked = 0;
  std::size_t address_checked = 0, invalid_refused = 0;
  for (const auto& scenario : table.at("scenarios")) {
    SCOPED_TRACE(scenario.at("name").get<std::string>());
    const json doc = {{"schema_version", 1}, {"network", scenario.at("network")}};
    auto parsed = sandbox_policy_from_json(doc.dump());
    ASSERT_TRUE(parsed) << parsed.error_value().describe();
    validation_result validated = validate_sandbox_policy(*parsed);
    ASSERT_TRUE(validated.ok());
    const network_policy policy = validated.policy.network;
    auto b = start_broker(policy, local_hooks(server.port()));
    ASSERT_TRUE(b.broker);
    ++scenarios;
    std::uint64_t connections = 0;

    for (const auto& c : scenario.at("cases")) {
      ++cases;
      const std::string host = c.at("host");
      const int port = c.at("port");
      SCOPED_TRACE("host \"" + host + "\" port " + std::to_string(port));
      const expected_decision want = expect(policy, host, port);
      // The table says the same as the matcher (host_rules_test checks it in full).
      if (c.contains("error")) {
        EXPECT_EQ(want.kind, expectation::invalid);
      } else {
        EXPECT_EQ(want.kind == expectation::deny, c.at("action") == "deny");
        EXPECT_EQ(want.rule.has_value(), c.at("rule").is_number());
      }
      if (want.kind == expectation::address_check) ++address_checked;
      if (want.kind == expectation::invalid) ++invalid_refused;

      // HTTP CONNECT
      {
        fd_guard fd = connect_tcp(b.port);
        ASSERT_GE(fd.get(), 0);
        ASSERT_TRUE(send_all(fd.get(), connect_request(authority(host, port))));
        const std::string response = recv_until(fd.get(), "\r\n\r\n");
        const int status = status_of(response);
        switch (want.kind) {
          case expectation::allow:
            ASSERT_EQ(response, established);
            ASSERT_TRUE(send_all(fd.get(), "ping"));
            EXPECT_EQ(recv_exact(fd.get(), 4), "ping");
            break;
          case expectation::deny:
            EXPECT_EQ(status, 403) << response;
            EXPECT_EQ(header_of(response, "X-Cordon-Rule"), want.rule ? std::to_string(*want.rule) : "default");
            break;
          case expectation::address_check:
            EXPECT_EQ(status, 403) << response;
            EXPECT_EQ(header_of(response, "X-Cordon-Rule"), want.rule ? std::to_string(*want.rule) : "default");
            break;
          case expectation::invalid:
            EXPECT_TRUE(status == 400 || status == 403) << response;
            break;
        }
        fd.reset();
        check_record(nth_record(*b.broker, ++connections), want, "http_connect");
        ++connect_checked;
      }
      if (HasFailure()) return;

      // SOCKS5 CONNECT
      const std::string request = socks_request(host, port);
      if (request.empty()) continue;
      {
        fd_guard fd = connect_tcp(b.port);
        ASSERT_GE(fd.get(), 0);
        const int reply = socks_handshake(fd.get(), request);
        if (want.kind == expectation::allow) {
          ASSERT_EQ(reply, socks5_reply_code::succeeded);
          ASSERT_TRUE(send_all(fd.get(), "ping"));
          EXPECT_EQ(recv_exact(fd.get(), 4), "ping");
        } else {
          EXPECT_EQ(reply, socks5_reply_code::not_allowed);
        }
        fd.reset();
        check_record(nth_record(*b.broker, ++connections), want, "socks5");
        ++socks_checked;
      }
      // The first divergence is the one to read; after it, every case could
      // wait for its timeout.
      if (HasFailure()) return;
    }
  }
  std::printf(
      "broker replay: %zu scenarios, %zu cases; %zu via CONNECT, %zu via SOCKS5; "
      "%zu refused by the address check, %zu invalid destinations refused\n",
      scenarios, cases, connect_checked, socks_checked, address_checked, invalid_refused);
  EXPECT_EQ(cases, table.at("case_count").get<std::size_t>());
  EXPECT_EQ(connect_checked, cases);
  // Pinned: see the comment at the top. (`*` on 10.0.0.1, [::1], ::1;
  // default allow on 10.0.0.1; unrestricted on 10.0.0.1.)
  EXPECT_EQ(address_checked, 5u);
}

}  // namespace
}  // namespace cordon::broker
