// Unit tests: validate_sandbox_policy() and normalize_path_lexically().
#include <gtest/gtest.h>

#include "cordon/validation.h"

namespace cordon {
namespace {

std::vector<std::string> locations(const validation_result& r) {
  std::vector<std::string> out;
  for (const auto& e : r.errors) out.push_back(e.location);
  return out;
}

// Expects exactly one error, at `location`, whose reason contains `part`.
void expect_one_error(const sandbox_policy& p, const std::string& location,
                      const std::string& part = {}) {
  const auto r = validate_sandbox_policy(p);
  ASSERT_EQ(r.errors.size(), 1U) << ::testing::PrintToString(locations(r));
  EXPECT_EQ(r.errors[0].location, location);
  if (!part.empty()) {
    EXPECT_NE(r.errors[0].reason.find(part), std::string::npos) << r.errors[0].reason;
  }
}

sandbox_policy with_readable(std::string path) {
  sandbox_policy p;
  p.filesystem.readable = {std::move(path)};
  return p;
}

sandbox_policy filtered(std::vector<network_rule> rules) {
  sandbox_policy p;
  p.network.mode = network_mode::filtered;
  p.network.rules = std::move(rules);
  return p;
}

sandbox_policy with_host(std::string host) {
  return filtered({{std::move(host), std::nullopt, rule_action::allow}});
}

TEST(NormalizePath, Lexical) {
  EXPECT_EQ(normalize_path_lexically("/a/./b//c/../d/"), "/a/b/d");
  EXPECT_EQ(normalize_path_lexically("/"), "/");
  EXPECT_EQ(normalize_path_lexically("//"), "/");
  EXPECT_EQ(normalize_path_lexically("/.."), "/");
  EXPECT_EQ(normalize_path_lexically("/a/../../b"), "/b");
  EXPECT_EQ(normalize_path_lexically("/a/b/.."), "/a");
  EXPECT_EQ(normalize_path_lexically("/etc/"), "/etc");
  EXPECT_EQ(normalize_path_lexically(""), "");
  EXPECT_EQ(normalize_path_lexically("{workspace}"), "{workspace}");
  EXPECT_EQ(normalize_path_lexically("{workspace}/"), "{workspace}");
  EXPECT_EQ(normalize_path_lexically("{workspace}/./src//x/.."), "{workspace}/src");
  EXPECT_EQ(normalize_path_lexically("{home}/../x"), "{home}/x");  // never above the token
  EXPECT_EQ(normalize_path_lexically("{run_tmp}/."), "{run_tmp}");
  EXPECT_EQ(normalize_path_lexically("/a/..b/.c"), "/a/..b/.c");
}

TEST(Validation, DefaultPolicyIsValid) {
  const auto r = validate_sandbox_policy(sandbox_policy{});
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.policy, sandbox_policy{});
}

TEST(Validation, SchemaVersion) {
  sandbox_policy p;
  p.schema_version = 2;
  expect_one_error(p, "/schema_version");
}

TEST(Validation, PathsAreNormalizedAndDeduplicatedInOrder) {
  sandbox_policy p;
  p.filesystem.readable = {"/usr/", "/b", "/a//x/..", "/b/.", "/usr", "{workspace}/./src"};
  p.filesystem.writable = {"{workspace}", "{workspace}/", "{run_tmp}", "{run_tmp}/"};
  p.filesystem.denied = {"{home}/.ssh/", "{home}/.ssh"};
  p.filesystem.protected_read_only = {"{workspace}/.git/hooks"};
  const auto r = validate_sandbox_policy(p);
  ASSERT_TRUE(r.ok()) << ::testing::PrintToString(locations(r));
  EXPECT_EQ(r.policy.filesystem.readable,
            (std::vector<std::string>{"/usr", "/b", "/a", "{workspace}/src"}));
  EXPECT_EQ(r.policy.filesystem.writable, (std::vector<std::string>{"{workspace}", "{run_tmp}"}));
  EXPECT_EQ(r.policy.filesystem.denied, std::vector<std::string>{"{home}/.ssh"});
  EXPECT_EQ(r.policy.filesystem.protected_read_only,
            std::vector<std::string>{"{workspace}/.git/hooks"});
}

TEST(Validation, PathRejections) {
  expect_one_error(with_readable(""), "/filesystem/readable/0", "empty");
  expect_one_error(with_readable("etc/passwd"), "/filesystem/readable/0", "relative");
  expect_one_error(with_readable("./x"), "/filesystem/readable/0", "relative");
  expect_one_error(with_readable("~/x"), "/filesystem/readable/0", "relative");
  expect_one_error(with_readable(std::string("/a\0b", 4)), "/filesystem/readable/0", "NUL");
  expect_one_error(with_readable("/x/{workspace}"), "/filesystem/readable/0",
                   "only allowed as the first");
  expect_one_error(with_readable("{workspace}/a/{home}"), "/filesystem/readable/0");
  expect_one_error(with_readable("{workspace}x"), "/filesystem/readable/0",
                   "whole first path component");
  expect_one_error(with_readable("{workspace}x/y"), "/filesystem/readable/0");
  expect_one_error(with_readable("{tmp}/y"), "/filesystem/readable/0", "unknown root token");
  expect_one_error(with_readable("{run_tmp}"), "/filesystem/readable/0",
                   "only allowed in /filesystem/writable");
  expect_one_error(with_readable("{home}/../root"), "/filesystem/readable/0", "climbs above");
  expect_one_error(with_readable(std::string("/\xff")), "/filesystem/readable/0", "UTF-8");

  sandbox_policy p;
  p.filesystem.writable = {"{run_tmp}/sub"};
  expect_one_error(p, "/filesystem/writable/0", "stand alone");
  p = sandbox_policy{};
  p.filesystem.denied = {"{run_tmp}"};
  expect_one_error(p, "/filesystem/denied/0");
  p = sandbox_policy{};
  p.filesystem.protected_read_only = {"/ok", "relative"};
  expect_one_error(p, "/filesystem/protected_read_only/1");

  // Accepted forms.
  for (const char* ok : {"/", "{workspace}", "{workspace}/sub", "{home}", "{home}/.cache",
                         "/opt/{not-a-token}", "{workspace}/a/../b"}) {
    EXPECT_TRUE(validate_sandbox_policy(with_readable(ok)).ok()) << ok;
  }
}

TEST(Validation, HostNormalization) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"Example.COM.", "example.com"},
      {"example.com", "example.com"},
      {"*", "*"},
      {"*.Example.com", "*.example.com"},
      {"**.example.com", "**.example.com"},
      {"xn--bcher-kva.example", "xn--bcher-kva.example"},
      // International names are stored in their IDNA ASCII form (UTS #46
      // mapping, non-transitional: "ß" stays a letter of its own).
      {"bücher.example", "xn--bcher-kva.example"},
      {"BÜCHER.Example.", "xn--bcher-kva.example"},
      {"*.bücher.example", "*.xn--bcher-kva.example"},
      {"**.中国", "**.xn--fiqs8s"},
      {"straße.de", "xn--strae-oqa.de"},
      {"a-b.c0", "a-b.c0"},
      {"localhost", "localhost"},
      {"10.0.0.1", "10.0.0.1"},
      {"::1", "::1"},
      {"[::1]", "::1"},
      {"[2001:DB8:0:0::1]", "2001:db8::1"},
      {"::FFFF:1.2.3.4", "::ffff:1.2.3.4"},
  };
  for (const auto& [in, want] : cases) {
    const auto r = validate_sandbox_policy(with_host(in));
    ASSERT_TRUE(r.ok()) << in << ": " << r.errors[0].reason;
    EXPECT_EQ(r.policy.network.rules.at(0).host, want) << in;
  }
}

TEST(Validation, HostRejections) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "empty"},
      {"https://example.com", "URL"},
      {"example.com/path", "path"},
      {"example.com?q=1", "query"},
      {"example.com#frag", "fragment"},
      {"user@example.com", "userinfo"},
      {"example.com:443", "port"},
      {"10.0.0.1:443", "port"},
      {"[::1]:443", "port"},
      {"[::1", "unterminated"},
      {"[example.com]", "IPv6"},
      {"1:2:3", "IPv6"},
      {"a.*.com", "wildcard"},
      {"*example.com", "wildcard"},
      {"foo*.com", "wildcard"},
      {"**", "wildcard"},
      {"*.*.com", "wildcard"},
      {"***.com", "wildcard"},
      {"exa mple.com", "letters, digits"},
      {"x\u2620y.de", "internationalized"},  // a symbol IDNA2008 disallows
      {"b\xfc" "cher.de", "internationalized"},  // Latin-1, not UTF-8
      {"under_score.com", "letters, digits"},
      {"-a.com", "hyphen"},
      {"a-.com", "hyphen"},
      {"a..com", "empty label"},
      {".", "empty"},
      {"example.com..", "empty label"},
      {std::string(64, 'a') + ".com", "63"},
      {std::string(250, 'a').replace(60, 1, ".").replace(120, 1, ".").replace(180, 1, ".") +
           ".com",
       "253"},
      {"1.2.3", "IPv4"},
      {"256.1.1.1", "IPv4"},
      {"0xc6336402", "IPv4"},       // inet_aton: 198.51.100.2
      {"0xc6.51.100.0x2", "IPv4"},  // inet_aton: 198.51.100.2
      {"0X7F.1", "IPv4"},           // inet_aton: 127.0.0.1
      {"*.0x7f", "IPv4"},
      {"*.10.0.0.1", "IPv4"},
  };
  for (const auto& [in, part] : cases) {
    SCOPED_TRACE(in);
    expect_one_error(with_host(in), "/network/rules/0/host", part);
  }
}

TEST(Validation, Ports) {
  expect_one_error(filtered({{"a.com", 0, rule_action::allow}}), "/network/rules/0/port");
  expect_one_error(filtered({{"a.com", 443, rule_action::allow}, {"a.com", 65536, rule_action::allow}}),
                   "/network/rules/1/port", "1..65535");
  expect_one_error(filtered({{"a.com", -1, rule_action::allow}}), "/network/rules/0/port");
  EXPECT_TRUE(validate_sandbox_policy(filtered({{"a.com", 1, rule_action::allow},
                                                {"a.com", 65535, rule_action::allow}}))
                  .ok());
}

TEST(Validation, RulesOnlyInFilteredMode) {
  sandbox_policy p;
  p.network.rules = {{"a.com", 443, rule_action::allow}};
  expect_one_error(p, "/network/rules", "filtered");
  p.network.mode = network_mode::unrestricted;
  expect_one_error(p, "/network/rules");

  p = sandbox_policy{};
  p.network.default_action = rule_action::allow;
  expect_one_error(p, "/network/default_action", "deny");

  p = filtered({});
  p.network.default_action = rule_action::allow;
  EXPECT_TRUE(validate_sandbox_policy(p).ok());

  p = sandbox_policy{};
  p.network.mode = network_mode::unrestricted;
  p.network.allow_local_binding = true;
  expect_one_error(p, "/network/allow_local_binding");
  p.network.mode = network_mode::denied;
  EXPECT_TRUE(validate_sandbox_policy(p).ok());
}

// network.publish: a namespace of the sandbox's own where the command may
// listen, ports in range, each host port once, at most 16.
TEST(Validation, Publish) {
  sandbox_policy p;
  p.network.publish = {{8000, 8000}, {9, 8009}};
  const auto ok = validate_sandbox_policy(p);
  ASSERT_TRUE(ok.ok()) << ::testing::PrintToString(locations(ok));
  EXPECT_EQ(ok.policy.network.publish, p.network.publish);

  p.network.mode = network_mode::unrestricted;
  expect_one_error(p, "/network/publish", "unrestricted");
  p = filtered({});
  p.network.publish = {{8000, 8000}};
  expect_one_error(p, "/network/publish", "allow_local_binding");
  p.network.allow_local_binding = true;
  EXPECT_TRUE(validate_sandbox_policy(p).ok());
  // The broker's ports inside a filtered sandbox (core/broker_endpoint.h):
  // published, any host process would use the sandbox's broker, its rules
  // and its credentials.
  p.network.publish = {{3128, 8000}};
  expect_one_error(p, "/network/publish/0/port", "broker");
  p.network.publish = {{3129, 8000}};
  expect_one_error(p, "/network/publish/0/port", "broker");
  p.network.publish = {{53, 8000}};
  expect_one_error(p, "/network/publish/0/port", "broker");
  p.network.mode = network_mode::denied;  // no broker there: the command's own port
  p.network.publish = {{3128, 8000}};
  EXPECT_TRUE(validate_sandbox_policy(p).ok());

  p = sandbox_policy{};
  p.network.publish = {{8000, 8000}, {8001, 8000}};
  expect_one_error(p, "/network/publish/1/host_port", "twice");
  p.network.publish = {{0, 8000}};
  expect_one_error(p, "/network/publish/0/port");
  p.network.publish = {{80, 65536}};
  expect_one_error(p, "/network/publish/0/host_port");
  p.network.publish.clear();
  for (int i = 0; i < static_cast<int>(max_published_ports) + 1; ++i) p.network.publish.push_back({8000 + i, 8000 + i});
  expect_one_error(p, "/network/publish", "at most 16");
}

TEST(Validation, AmbiguousRulesAndDuplicates) {
  // Same host after normalization and same port, different action.
  expect_one_error(filtered({{"a.com", 443, rule_action::allow},
                             {"b.com", std::nullopt, rule_action::deny},
                             {"A.com.", 443, rule_action::deny}}),
                   "/network/rules/2", "rule 0");
  expect_one_error(filtered({{"*.a.com", std::nullopt, rule_action::allow},
                             {"*.A.COM", std::nullopt, rule_action::deny}}),
                   "/network/rules/1");
  expect_one_error(filtered({{"[::1]", 80, rule_action::allow}, {"::1", 80, rule_action::deny}}),
                   "/network/rules/1");

  // A port and no port are different keys; different wildcard depths too.
  auto r = validate_sandbox_policy(filtered({{"a.com", 443, rule_action::allow},
                                             {"a.com", std::nullopt, rule_action::deny},
                                             {"*.a.com", std::nullopt, rule_action::allow},
                                             {"**.a.com", std::nullopt, rule_action::deny}}));
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.policy.network.rules.size(), 4U);

  // Exact duplicates (after normalization) are removed; first order kept.
  r = validate_sandbox_policy(filtered({{"b.com", 443, rule_action::allow},
                                        {"A.com", std::nullopt, rule_action::deny},
                                        {"b.com.", 443, rule_action::allow},
                                        {"a.com", std::nullopt, rule_action::deny},
                                        {"c.com", 80, rule_action::allow}}));
  ASSERT_TRUE(r.ok());
  const std::vector<network_rule> want = {{"b.com", 443, rule_action::allow},
                                          {"a.com", std::nullopt, rule_action::deny},
                                          {"c.com", 80, rule_action::allow}};
  EXPECT_EQ(r.policy.network.rules, want);
}

TEST(Validation, EnvironmentNames) {
  sandbox_policy p;
  p.environment.allow = {"TERM", "", "A=B", std::string("X\0Y", 3), "LANG", "TERM"};
  auto r = validate_sandbox_policy(p);
  EXPECT_EQ(locations(r),
            (std::vector<std::string>{"/environment/allow/1", "/environment/allow/2",
                                      "/environment/allow/3", "/environment/allow/5"}));
  EXPECT_NE(r.errors.at(3).reason.find("duplicate"), std::string::npos);

  p = sandbox_policy{};
  p.environment.set = {{"PATH", "/bin"}, {"", "x"}, {"A=B", "x"}, {"PATH", "/evil"},
                       {"a/b", std::string("v\0w", 3)}};
  r = validate_sandbox_policy(p);
  EXPECT_EQ(locations(r), (std::vector<std::string>{"/environment/set/", "/environment/set/A=B",
                                                    "/environment/set/PATH",
                                                    "/environment/set/a~1b"}));
  EXPECT_NE(r.errors.at(2).reason.find("duplicate"), std::string::npos);
  EXPECT_NE(r.errors.at(3).reason.find("NUL"), std::string::npos);

  // The same name may be passed through and overridden.
  p = sandbox_policy{};
  p.environment.allow = {"PATH"};
  p.environment.set = {{"PATH", "/bin"}, {"EMPTY", ""}};
  EXPECT_TRUE(validate_sandbox_policy(p).ok());
}

TEST(Validation, ZeroLimits) {
  sandbox_policy p;
  p.process.max_processes = 0;
  expect_one_error(p, "/process/max_processes", "at least 1");
  p = sandbox_policy{};
  p.process.memory_bytes = 0;
  expect_one_error(p, "/process/memory_bytes");
  p = sandbox_policy{};
  p.process.cpu_seconds = 0;
  expect_one_error(p, "/process/cpu_seconds");
  p = sandbox_policy{};
  p.process.timeout_ms = 0;
  expect_one_error(p, "/process/timeout_seconds");
  p = sandbox_policy{};
  p.process.max_processes = 1;
  p.process.memory_bytes = 1;
  p.process.cpu_seconds = 1;
  p.process.timeout_ms = 1;
  EXPECT_TRUE(validate_sandbox_policy(p).ok());
}

TEST(Validation, EnforcementForControlsThePolicyCannotHave) {
  sandbox_policy p;
  p.enforcement[control::network_filter] = enforcement_level::partial;
  expect_one_error(p, "/enforcement/network_filter");
  p.network.mode = network_mode::filtered;
  EXPECT_TRUE(validate_sandbox_policy(p).ok());
}

TEST(Validation, AllErrorsAtOnceInDocumentOrder) {
  sandbox_policy p;
  p.schema_version = 3;
  p.filesystem.readable = {"relative"};
  p.filesystem.writable = {"/ok", "{run_tmp}/x"};
  p.filesystem.denied = {""};
  p.network.rules = {{"https://a.com", 0, rule_action::allow}};
  p.network.default_action = rule_action::allow;
  p.environment.allow = {"A=B"};
  p.environment.set = {{"", "x"}};
  p.process.max_processes = 0;
  p.process.timeout_ms = 0;
  p.enforcement[control::network_filter] = enforcement_level::enforced;
  const auto r = validate_sandbox_policy(p);
  const std::vector<std::string> want = {
      "/schema_version",          "/filesystem/readable/0",   "/filesystem/writable/1",
      "/filesystem/denied/0",     "/network/rules",           "/network/default_action",
      "/network/rules/0/host",    "/network/rules/0/port",    "/environment/allow/0",
      "/environment/set/",        "/process/max_processes",   "/process/timeout_seconds",
      "/enforcement/network_filter"};
  EXPECT_EQ(locations(r), want);
  for (const auto& e : r.errors) {
    EXPECT_FALSE(e.reason.empty());
    EXPECT_EQ(e.reason.find('\n'), std::string::npos);
  }
}

}  // namespace
}  // namespace cordon
