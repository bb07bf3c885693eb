// tls_rules_test.cpp — validation of tls "terminate", methods, paths,
// read_only and network.credentials (docs/tls.md), and their JSON spelling.
#include <gtest/gtest.h>

#include "cordon/policy_json.h"
#include "cordon/validation.h"

namespace cordon {
namespace {

network_rule terminated(std::string host) {
  network_rule r;
  r.host = std::move(host);
  r.action = rule_action::allow;
  r.tls = tls_mode::terminate;
  return r;
}

sandbox_policy with_rule(network_rule r) {
  sandbox_policy p;
  p.network.mode = network_mode::filtered;
  p.network.rules = {std::move(r)};
  return p;
}

std::string first_location(const sandbox_policy& p) {
  const auto v = validate_sandbox_policy(p);
  return v.errors.empty() ? "" : v.errors[0].location;
}

TEST(TlsRules, MethodAndPathRulesAreRefusedOnTunnels) {
  network_rule r = terminated("api.example.test");
  r.tls = tls_mode::tunnel;
  r.methods = {"GET"};
  EXPECT_EQ(first_location(with_rule(r)), "/network/rules/0/methods");
  r.methods.clear();
  r.paths = {"/api/"};
  EXPECT_EQ(first_location(with_rule(r)), "/network/rules/0/paths");
  r.paths.clear();
  r.read_only = true;
  EXPECT_EQ(first_location(with_rule(r)), "/network/rules/0/read_only");
}

// A tunnel relays a WebSocket like any bytes: the opt-in means something
// only where the broker judges the upgrade request.
TEST(TlsRules, WebsocketIsRefusedOnTunnelsAndAcceptedOnTerminatedRules) {
  network_rule r = terminated("api.example.test");
  r.tls = tls_mode::tunnel;
  r.websocket = true;
  const auto refused = validate_sandbox_policy(with_rule(r));
  ASSERT_EQ(refused.errors.size(), 1u);
  EXPECT_EQ(refused.errors[0].location, "/network/rules/0/websocket");
  EXPECT_NE(refused.errors[0].reason.find("needs tls \"terminate\""), std::string::npos) << refused.errors[0].reason;
  r.action = rule_action::deny;
  EXPECT_EQ(first_location(with_rule(r)), "/network/rules/0/websocket");
  r = terminated("api.example.test");
  r.websocket = true;
  r.methods = {"GET"};
  const auto v = validate_sandbox_policy(with_rule(r));
  ASSERT_TRUE(v.ok()) << v.errors.at(0).location << ": " << v.errors.at(0).reason;
  EXPECT_TRUE(v.policy.network.rules.at(0).websocket);
  // The same host and port with and without the opt-in is a conflict, not a duplicate.
  sandbox_policy both = with_rule(r);
  both.network.rules.push_back(terminated("api.example.test"));
  both.network.rules.back().methods = {"GET"};
  EXPECT_EQ(first_location(both), "/network/rules/1");
  // read_only promises no writes; a WebSocket's frames would be writes no method limit judges.
  r.methods.clear();
  r.read_only = true;
  const auto read_only = validate_sandbox_policy(with_rule(r));
  ASSERT_EQ(read_only.errors.size(), 1u);
  EXPECT_EQ(read_only.errors[0].location, "/network/rules/0/websocket");
  EXPECT_NE(read_only.errors[0].reason.find("read_only"), std::string::npos) << read_only.errors[0].reason;
}

TEST(TlsRules, TerminatedRulesAcceptLimitsAndReadOnlyExpands) {
  network_rule r = terminated("API.example.test");
  r.read_only = true;
  r.paths = {"/api/"};
  const auto v = validate_sandbox_policy(with_rule(r));
  ASSERT_TRUE(v.ok()) << v.errors.at(0).location << ": " << v.errors.at(0).reason;
  EXPECT_EQ(v.policy.network.rules.at(0).methods, (std::vector<std::string>{"GET", "HEAD", "OPTIONS"}));
  EXPECT_EQ(v.policy.network.rules.at(0).host, "api.example.test");
}

TEST(TlsRules, BadMethodsPathsAndDenyAreRefused) {
  network_rule r = terminated("a.test");
  r.methods = {"get"};
  EXPECT_EQ(first_location(with_rule(r)), "/network/rules/0/methods/0");
  r.methods = {"TRACE"};
  EXPECT_EQ(first_location(with_rule(r)), "/network/rules/0/methods/0");
  r.methods = {"GET"};
  r.read_only = true;
  EXPECT_EQ(first_location(with_rule(r)), "/network/rules/0/methods");
  r.read_only = false;
  r.paths = {"api/"};
  EXPECT_EQ(first_location(with_rule(r)), "/network/rules/0/paths/0");
  r.paths = {"/api/../x"};
  EXPECT_EQ(first_location(with_rule(r)), "/network/rules/0/paths/0");
  r.paths.clear();
  r.action = rule_action::deny;
  EXPECT_EQ(first_location(with_rule(r)), "/network/rules/0/tls");
}

TEST(TlsRules, CredentialsNeedATerminatedHostAndOneSource) {
  sandbox_policy p = with_rule(terminated("api.example.test"));
  network_credential c;
  c.host = "api.example.test";
  c.header = "Authorization";
  c.from_env = "TOKEN";
  c.format = "Bearer {}";
  p.network.credentials = {c};
  EXPECT_TRUE(validate_sandbox_policy(p).ok());
  p.network.credentials[0].host = "other.example.test";
  EXPECT_EQ(first_location(p), "/network/credentials/0/host");
  p.network.credentials[0] = c;
  p.network.credentials[0].from_file = "/run/token";
  EXPECT_EQ(first_location(p), "/network/credentials/0/value_from");
  p.network.credentials[0] = c;
  p.network.credentials[0].format = "Bearer";
  EXPECT_EQ(first_location(p), "/network/credentials/0/format");
  p.network.credentials[0] = c;
  p.network.credentials[0].header = "Bad Header";
  EXPECT_EQ(first_location(p), "/network/credentials/0/header");
  p.network.rules[0].tls = tls_mode::tunnel;
  p.network.credentials[0] = c;
  EXPECT_EQ(first_location(p), "/network/credentials/0/host");
}

TEST(TlsRules, JsonRoundTrip) {
  const std::string text = R"({"schema_version": 1, "network": {"mode": "filtered", "rules": [
    {"host": "api.example.test", "action": "allow", "tls": "terminate", "methods": ["GET"], "paths": ["/v1/"],
     "websocket": true}],
    "credentials": [{"host": "api.example.test", "header": "Authorization", "value_from": {"env": "TOKEN"},
                     "format": "Bearer {}", "placeholder_env": "TOKEN"}]}})";
  auto parsed = sandbox_policy_from_json(text);
  ASSERT_TRUE(parsed) << parsed.error_value().message << " at " << parsed.error_value().location;
  const auto& net = parsed->network;
  ASSERT_EQ(net.rules.size(), 1u);
  EXPECT_EQ(net.rules[0].tls, tls_mode::terminate);
  EXPECT_EQ(net.rules[0].paths, std::vector<std::string>{"/v1/"});
  EXPECT_TRUE(net.rules[0].websocket);
  ASSERT_EQ(net.credentials.size(), 1u);
  EXPECT_EQ(net.credentials[0].from_env, "TOKEN");
  EXPECT_EQ(net.credentials[0].placeholder_env, "TOKEN");
  auto again = sandbox_policy_from_json(sandbox_policy_to_json(*parsed));
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, *parsed);
  EXPECT_FALSE(sandbox_policy_from_json(R"({"schema_version": 1, "network": {"mode": "filtered", "rules": [
    {"host": "a.test", "action": "allow", "tls": "intercept"}]}})"));
  EXPECT_FALSE(sandbox_policy_from_json(R"({"schema_version": 1, "network": {"mode": "filtered", "rules": [
    {"host": "a.test", "action": "allow", "tls": "terminate", "websocket": "yes"}]}})"));
}

}  // namespace
}  // namespace cordon
