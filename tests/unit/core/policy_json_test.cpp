// Unit tests: strict JSON v1 reading and stable writing of sandbox_policy.
#include <gtest/gtest.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cordon/policy_json.h"
#include "cordon/profiles.h"
#include "core/rounding.h"

namespace cordon {
namespace {

// Parses text expected to be rejected; returns the error.
error reject(const std::string& text) {
  auto r = sandbox_policy_from_json(text);
  EXPECT_FALSE(r) << "accepted: " << text;
  return r ? error{} : r.error_value();
}

void expect_invalid(const std::string& text, const std::string& location,
                    const std::string& reason_part = {}) {
  const error e = reject(text);
  EXPECT_EQ(e.code, error_code::invalid_policy) << text;
  EXPECT_EQ(e.location, location) << text;
  if (!reason_part.empty()) {
    EXPECT_NE(e.message.find(reason_part), std::string::npos) << e.message;
  }
}

std::string with(const std::string& body) { return R"({"schema_version": 1, )" + body + "}"; }

void expect_round_trip(const sandbox_policy& p) {
  const std::string text = sandbox_policy_to_json(p);
  auto back = sandbox_policy_from_json(text);
  ASSERT_TRUE(back) << back.error_value().describe() << "\n" << text;
  EXPECT_EQ(*back, p) << text;
  EXPECT_EQ(sandbox_policy_to_json(*back), text);
}

TEST(PolicyJson, DefaultsWhenFieldsAreOmitted) {
  auto p = sandbox_policy_from_json(R"({"schema_version": 1})");
  ASSERT_TRUE(p) << p.error_value().describe();
  EXPECT_EQ(*p, sandbox_policy{});
}

TEST(PolicyJson, ReadsEveryField) {
  auto r = sandbox_policy_from_json(R"({
    "schema_version": 1,
    "name": "workspace-write",
    "isolation": "container",
    "filesystem": {
      "read": "full", "include_platform_defaults": false,
      "readable": ["{workspace}"], "writable": ["{workspace}", "{run_tmp}"],
      "protected_read_only": ["{home}/.bashrc"], "denied": ["{home}/.ssh"],
      "protect_vcs_metadata": true
    },
    "network": { "mode": "filtered", "allow_local_binding": true,
                 "rules": [ {"host": "example.com", "port": 443, "action": "allow"},
                            {"host": "*", "action": "deny"} ],
                 "default_action": "deny" },
    "environment": { "inherit": "all", "allow": ["TERM"], "set": {"PATH": "/usr/bin:/bin", "A": "1"} },
    "process": { "tree_cleanup": false, "max_processes": 64, "memory_bytes": 1073741824,
                 "cpu_seconds": 60, "timeout_seconds": 1.5 },
    "enforcement": { "memory": "partial", "syscall_filter": "enforced" },
    "metadata": { "owner": "ci" }
  })");
  ASSERT_TRUE(r) << r.error_value().describe();
  const sandbox_policy& p = *r;
  EXPECT_EQ(p.name, "workspace-write");
  EXPECT_EQ(p.isolation, isolation_level::container);
  EXPECT_EQ(p.filesystem.read, read_mode::full);
  EXPECT_FALSE(p.filesystem.include_platform_defaults);
  EXPECT_EQ(p.filesystem.writable, (std::vector<std::string>{"{workspace}", "{run_tmp}"}));
  EXPECT_TRUE(p.filesystem.protect_vcs_metadata);
  EXPECT_EQ(p.network.mode, network_mode::filtered);
  EXPECT_TRUE(p.network.allow_local_binding);
  ASSERT_EQ(p.network.rules.size(), 2U);
  EXPECT_EQ(p.network.rules[0], (network_rule{"example.com", 443, rule_action::allow}));
  EXPECT_EQ(p.network.rules[1], (network_rule{"*", std::nullopt, rule_action::deny}));
  EXPECT_EQ(p.environment.inherit, environment_inherit::all);
  // Order of `set` is document order, not sorted.
  const std::vector<std::pair<std::string, std::string>> set = {{"PATH", "/usr/bin:/bin"},
                                                                {"A", "1"}};
  EXPECT_EQ(p.environment.set, set);
  EXPECT_FALSE(p.process.tree_cleanup);
  EXPECT_EQ(p.process.max_processes, 64U);
  EXPECT_EQ(p.process.memory_bytes, 1073741824U);
  EXPECT_EQ(p.process.cpu_seconds, 60U);
  EXPECT_EQ(p.process.timeout_ms, 1500U);
  EXPECT_EQ(p.enforcement.at(control::memory), enforcement_level::partial);
  EXPECT_EQ(p.enforcement.at(control::syscall_filter), enforcement_level::enforced);
  EXPECT_EQ(p.metadata.at("owner"), "ci");
  expect_round_trip(p);
}

TEST(PolicyJson, RoundTripBuiltinProfiles) {
  for (const auto& name : builtin_profile_names()) {
    SCOPED_TRACE(name);
    auto p = builtin_profile(name);
    ASSERT_TRUE(p) << p.error_value().describe();
    expect_round_trip(*p);
  }
}

// Policies built from a fixed seed, covering every field, including ones a
// validator would reject (the writer and reader must not care).
sandbox_policy generated_policy(std::mt19937_64& rng) {
  const auto pick = [&rng](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  const auto coin = [&rng] { return (rng() & 1U) != 0; };
  const std::vector<std::string> paths = {"{workspace}", "{workspace}/src", "{home}/.ssh", "/etc",
                                          "{run_tmp}", "/opt/tool chain/ü", "/a\"b\\c", "/"};
  const auto path_list = [&] {
    std::vector<std::string> out;
    for (std::size_t n = pick(4); n > 0; --n) out.push_back(paths[pick(paths.size())]);
    return out;
  };
  sandbox_policy p;
  p.name = "gen-" + std::to_string(rng() % 1000);
  p.isolation = static_cast<isolation_level>(pick(5));
  p.filesystem.read = coin() ? read_mode::full : read_mode::restricted;
  p.filesystem.include_platform_defaults = coin();
  p.filesystem.readable = path_list();
  p.filesystem.writable = path_list();
  p.filesystem.protected_read_only = path_list();
  p.filesystem.denied = path_list();
  p.filesystem.protect_vcs_metadata = coin();
  p.network.mode = static_cast<network_mode>(pick(3));
  p.network.allow_local_binding = coin();
  const std::vector<std::string> hosts = {"example.com", "*.example.com", "**.x.org", "::1", "*"};
  for (std::size_t n = pick(4); n > 0; --n) {
    network_rule r;
    r.host = hosts[pick(hosts.size())];
    if (coin()) r.port = static_cast<int>(1 + pick(65535));
    r.action = coin() ? rule_action::allow : rule_action::deny;
    p.network.rules.push_back(r);
  }
  p.network.default_action = coin() ? rule_action::allow : rule_action::deny;
  p.environment.inherit = coin() ? environment_inherit::all : environment_inherit::none;
  p.environment.allow = {"TERM", "LANG"};
  std::set<std::string> names;
  for (std::size_t n = pick(4); n > 0; --n) {
    std::string name = "V" + std::to_string(pick(100));
    if (names.insert(name).second) p.environment.set.emplace_back(name, "value=" + name);
  }
  p.process.tree_cleanup = coin();
  if (coin()) p.process.max_processes = 1 + pick(1000);
  if (coin()) p.process.memory_bytes = rng();
  if (coin()) p.process.cpu_seconds = 1 + pick(100000);
  if (coin()) p.process.timeout_ms = 1 + pick(100000000);
  for (std::size_t n = pick(3); n > 0; --n) {
    p.enforcement[all_controls[pick(all_controls.size())]] =
        static_cast<enforcement_level>(pick(5));
  }
  for (const char* platform : {"linux", "macos", "windows"}) {
    if (coin()) p.platform_enforcement[platform][all_controls[pick(all_controls.size())]] =
        static_cast<enforcement_level>(pick(5));
  }
  if (coin()) p.metadata["owner"] = "team/a~b";
  return p;
}

TEST(PolicyJson, RoundTripGeneratedPolicies) {
  std::mt19937_64 rng(20240601);
  for (int i = 0; i < 200; ++i) {
    SCOPED_TRACE(i);
    expect_round_trip(generated_policy(rng));
  }
}

TEST(PolicyJson, TimeoutSeconds) {
  auto p = sandbox_policy_from_json(with(R"("process": {"timeout_seconds": 2})"));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->process.timeout_ms, 2000U);
  p = sandbox_policy_from_json(with(R"("process": {"timeout_seconds": 0.25})"));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->process.timeout_ms, 250U);
  p = sandbox_policy_from_json(with(R"("process": {"timeout_seconds": 0.0015})"));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->process.timeout_ms, 2U);  // rounded to the nearest millisecond

  sandbox_policy q;
  q.process.timeout_ms = 90000;
  EXPECT_NE(sandbox_policy_to_json(q).find("\"timeout_seconds\": 90\n"), std::string::npos);
  q.process.timeout_ms = 1500;
  EXPECT_NE(sandbox_policy_to_json(q).find("\"timeout_seconds\": 1.5\n"), std::string::npos);
  for (std::uint64_t ms : {1ULL, 7ULL, 999ULL, 1001ULL, 123456789ULL, 4000000000123ULL}) {
    q.process.timeout_ms = ms;
    expect_round_trip(q);
  }
}

TEST(PolicyJson, WriterUsesStableKeyOrder) {
  const std::string text = sandbox_policy_to_json(sandbox_policy{});
  const auto keys = {"\"schema_version\"", "\"name\"",        "\"isolation\"", "\"filesystem\"",
                     "\"network\"",        "\"environment\"", "\"process\"",   "\"enforcement\"",
                     "\"metadata\""};
  std::size_t last = 0;
  for (const char* key : keys) {
    const auto at = text.find(key);
    ASSERT_NE(at, std::string::npos) << key;
    EXPECT_GT(at, last) << key;
    last = at;
  }
  EXPECT_EQ(text.rfind("{\n  \"schema_version\": 1,\n", 0), 0U);  // 2-space indent
}

TEST(PolicyJson, UnknownFieldsHaveLocations) {
  expect_invalid(with(R"("filesytem": {})"), "/filesytem", "unknown field");
  expect_invalid(with(R"("filesystem": {"writeable": []})"), "/filesystem/writeable",
                 "unknown field \"writeable\"");
  expect_invalid(with(R"("network": {"mode": "filtered", "rules": [{"host": "a.com",
                 "action": "allow"}, {"host": "b.com", "action": "allow", "proto": "tcp"}]})"),
                 "/network/rules/1/proto");
  expect_invalid(with(R"("process": {"timeout": 5})"), "/process/timeout");
  expect_invalid(with(R"("environment": {"pass": []})"), "/environment/pass");
  expect_invalid(with(R"("enforcement": {"memroy": "partial"})"), "/enforcement/memroy",
                 "unknown control");
  // Keys are escaped as JSON pointer tokens.
  expect_invalid(with(R"("filesystem": {"a/b~c": 1})"), "/filesystem/a~1b~0c");
}

// network.publish (docs/network.md, "Published ports"): host_port defaults
// to port; written back only when set (other policies keep their text).
TEST(PolicyJson, Publish) {
  auto r = sandbox_policy_from_json(with(R"("network": {"publish": [{"port": 8000}, {"port": 9, "host_port": 8009}]})"));
  ASSERT_TRUE(r) << r.error_value().describe();
  ASSERT_EQ(r->network.publish.size(), 2U);
  EXPECT_EQ(r->network.publish[0], (published_port{8000, 8000}));
  EXPECT_EQ(r->network.publish[1], (published_port{9, 8009}));
  expect_round_trip(*r);
  EXPECT_EQ(sandbox_policy_to_json(sandbox_policy{}).find("publish"), std::string::npos);
  expect_invalid(with(R"("network": {"publish": [{"host_port": 80}]})"), "/network/publish/0/port", "missing");
  expect_invalid(with(R"("network": {"publish": [{"port": "80"}]})"), "/network/publish/0/port", "integer");
  expect_invalid(with(R"("network": {"publish": [{"port": 80, "address": "0.0.0.0"}]})"),
                 "/network/publish/0/address", "unknown field");
  expect_invalid(with(R"("network": {"publish": {"port": 80}})"), "/network/publish", "array");
}

TEST(PolicyJson, DuplicateKeysAreRejected) {
  expect_invalid(R"({"schema_version": 1, "schema_version": 1})", "/schema_version",
                 "duplicate key");
  expect_invalid(with(R"("filesystem": {"read": "full", "read": "restricted"})"),
                 "/filesystem/read", "duplicate key \"read\"");
  expect_invalid(with(R"("network": {"mode": "filtered", "rules": [{"host": "a.com",
                 "action": "deny"}, {"host": "b.com", "action": "allow", "host": "c.com"}]})"),
                 "/network/rules/1/host");
  expect_invalid(with(R"("environment": {"set": {"PATH": "/bin", "PATH": "/evil"}})"),
                 "/environment/set/PATH");
  expect_invalid(with(R"("metadata": {"a": "1"}, "metadata": {"a": "1"})"), "/metadata");
}

TEST(PolicyJson, SyntaxErrorsHaveLineAndColumn) {
  error e = reject("{\n  \"schema_version\": 1,\n  \"name\": x\n}");
  EXPECT_EQ(e.code, error_code::parse_error);
  EXPECT_EQ(e.location, "line 3, column 11");
  EXPECT_NE(e.message.find("not valid JSON"), std::string::npos);

  e = reject("{\"schema_version\": 1,}");
  EXPECT_EQ(e.code, error_code::parse_error);
  EXPECT_EQ(e.location, "line 1, column 22");

  e = reject("{\"schema_version\": 1");
  EXPECT_EQ(e.code, error_code::parse_error);
  EXPECT_EQ(e.location, "line 1, column 21");

  e = reject("");
  EXPECT_EQ(e.code, error_code::parse_error);
  EXPECT_EQ(e.location, "line 1, column 1");

  e = reject("{\"schema_version\": 1} trailing");
  EXPECT_EQ(e.code, error_code::parse_error);

  e = reject("{\"schema_version\": 1, // comment\n}");
  EXPECT_EQ(e.code, error_code::parse_error);

  e = reject("{\n\"schema_version\": 1,\n\"process\": {\"memory_bytes\": 1e999}}");
  EXPECT_EQ(e.code, error_code::parse_error);
  EXPECT_EQ(e.location.rfind("line 3, column ", 0), 0U) << e.location;
}

TEST(PolicyJson, WrongTypes) {
  expect_invalid("[]", "", "must be a JSON object");
  expect_invalid(with(R"("name": 5)"), "/name", "must be a string");
  expect_invalid(with(R"("isolation": "sandbox")"), "/isolation", "\"os_sandbox\"");
  expect_invalid(with(R"("filesystem": [])"), "/filesystem", "must be an object");
  expect_invalid(with(R"("filesystem": {"read": true})"), "/filesystem/read");
  expect_invalid(with(R"("filesystem": {"readable": "/etc"})"), "/filesystem/readable");
  expect_invalid(with(R"("filesystem": {"writable": ["/tmp", 3]})"), "/filesystem/writable/1");
  expect_invalid(with(R"("filesystem": {"protect_vcs_metadata": "yes"})"),
                 "/filesystem/protect_vcs_metadata", "must be a boolean");
  expect_invalid(with(R"("network": {"mode": "off"})"), "/network/mode");
  expect_invalid(with(R"("network": {"rules": {}})"), "/network/rules");
  expect_invalid(with(R"("network": {"rules": ["a.com"]})"), "/network/rules/0");
  expect_invalid(with(R"("network": {"rules": [{"host": "a.com", "port": "443",
                 "action": "allow"}]})"), "/network/rules/0/port", "must be an integer");
  expect_invalid(with(R"("network": {"rules": [{"host": "a.com", "port": 443.0,
                 "action": "allow"}]})"), "/network/rules/0/port");
  expect_invalid(with(R"("network": {"rules": [{"host": "a.com", "action": "permit"}]})"),
                 "/network/rules/0/action");
  expect_invalid(with(R"("network": {"rules": [{"action": "allow"}]})"), "/network/rules/0/host",
                 "missing required field");
  expect_invalid(with(R"("network": {"rules": [{"host": "a.com"}]})"), "/network/rules/0/action",
                 "missing required field");
  expect_invalid(with(R"("environment": {"set": {"A": 1}})"), "/environment/set/A");
  expect_invalid(with(R"("environment": {"set": ["A=1"]})"), "/environment/set");
  expect_invalid(with(R"("environment": {"inherit": true})"), "/environment/inherit");
  expect_invalid(with(R"("process": {"max_processes": -1})"), "/process/max_processes",
                 "non-negative integer");
  expect_invalid(with(R"("process": {"memory_bytes": 1.5})"), "/process/memory_bytes");
  expect_invalid(with(R"("process": {"cpu_seconds": "60"})"), "/process/cpu_seconds");
  expect_invalid(with(R"("process": {"memory_bytes": 18446744073709551616})"),
                 "/process/memory_bytes");
  expect_invalid(with(R"("process": {"timeout_seconds": "5"})"), "/process/timeout_seconds");
  expect_invalid(with(R"("process": {"timeout_seconds": -1})"), "/process/timeout_seconds");
  expect_invalid(with(R"("process": {"timeout_seconds": -0.5})"), "/process/timeout_seconds");
  expect_invalid(with(R"("process": {"timeout_seconds": 1e300})"), "/process/timeout_seconds");
  expect_invalid(with(R"("process": {"tree_cleanup": null})"), "/process/tree_cleanup");
  expect_invalid(with(R"("enforcement": {"memory": "full"})"), "/enforcement/memory");
  expect_invalid(with(R"("metadata": {"owner": 1})"), "/metadata/owner");
  // A zero limit and an out-of-range port are well-formed; validation rejects them.
  EXPECT_TRUE(sandbox_policy_from_json(with(R"("process": {"max_processes": 0})")));
  EXPECT_TRUE(sandbox_policy_from_json(with(R"("network": {"rules": [{"host": "a",
              "port": 70000, "action": "deny"}]})")));
}

TEST(PolicyJson, SchemaVersion) {
  expect_invalid(R"({"name": "x"})", "/schema_version", "missing");
  expect_invalid(R"({"schema_version": 2})", "/schema_version", "unsupported schema_version 2");
  expect_invalid(R"({"schema_version": "1"})", "/schema_version");
  expect_invalid(R"({"schema_version": 1.0})", "/schema_version");
  // A future version's fields are not reported as unknown: the version error is enough.
  const error e = reject(R"({"schema_version": 2, "future": true})");
  EXPECT_EQ(e.message.find('\n'), std::string::npos) << e.message;
}

TEST(PolicyJson, AllStructuralProblemsAreListed) {
  const error e = reject(with(R"("nme": "x", "filesystem": {"read": 1}, "process": {"cpu": 1})"));
  EXPECT_EQ(e.code, error_code::invalid_policy);
  EXPECT_EQ(e.location, "/nme");
  EXPECT_NE(e.message.find("\n/filesystem/read: "), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("\n/process/cpu: unknown field"), std::string::npos) << e.message;
}

TEST(PolicyJson, LoadFromFile) {
  const std::string dir = ::testing::TempDir();
  const std::string good = dir + "/cordon_policy_good.json";
  const std::string bad = dir + "/cordon_policy_bad.json";
  std::ofstream(good) << R"({"schema_version": 1, "name": "from-file"})";
  std::ofstream(bad) << "{\n  \"schema_version\": 1,\n}";

  auto p = load_sandbox_policy(good);
  ASSERT_TRUE(p) << p.error_value().describe();
  EXPECT_EQ(p->name, "from-file");

  auto b = load_sandbox_policy(bad);
  ASSERT_FALSE(b);
  EXPECT_EQ(b.error_value().code, error_code::parse_error);
  EXPECT_EQ(b.error_value().location, "line 3, column 1");
  EXPECT_EQ(b.error_value().message.rfind(bad, 0), 0U) << b.error_value().message;

  auto missing = load_sandbox_policy(dir + "/cordon_policy_does_not_exist.json");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error_value().code, error_code::io_error);
  EXPECT_EQ(missing.error_value().sys_errno, ENOENT);

  auto directory = load_sandbox_policy(dir);
  ASSERT_FALSE(directory);
  EXPECT_EQ(directory.error_value().code, error_code::io_error);
  EXPECT_NE(directory.error_value().sys_errno, 0);

  std::remove(good.c_str());
  std::remove(bad.c_str());
}

// The published schema must name exactly what the reader accepts.
TEST(PolicySchema, MatchesTheReader) {
  std::ifstream in(std::string(CORDON_SOURCE_DIR) + "/schemas/policy.v1.schema.json");
  ASSERT_TRUE(in);
  const auto schema = nlohmann::json::parse(in);
  EXPECT_EQ(schema.at("$schema"), "https://json-schema.org/draft/2020-12/schema");
  EXPECT_EQ(schema.at("additionalProperties"), false);

  // Every property the writer emits for a fully populated policy is declared.
  sandbox_policy p;
  p.network.rules.push_back({"a.com", 443, rule_action::allow});
  p.process.max_processes = 1;
  p.process.memory_bytes = 1;
  p.process.cpu_seconds = 1;
  p.process.timeout_ms = 1;
  const auto doc = nlohmann::json::parse(sandbox_policy_to_json(p));
  const auto& props = schema.at("properties");
  for (const auto& [key, value] : doc.items()) {
    ASSERT_TRUE(props.contains(key)) << key;
    if (!value.is_object() || key == "enforcement" || key == "metadata") continue;
    EXPECT_EQ(props.at(key).at("additionalProperties"), false) << key;
    for (const auto& [sub, unused] : value.items()) {
      EXPECT_TRUE(props.at(key).at("properties").contains(sub)) << key << "/" << sub;
    }
  }
  std::set<std::string> controls;
  for (control c : all_controls) controls.insert(std::string(to_string(c)));
  std::set<std::string> schema_controls;
  for (const auto& c : props.at("enforcement").at("propertyNames").at("enum")) {
    schema_controls.insert(c.get<std::string>());
  }
  EXPECT_EQ(schema_controls, controls);
}

// Timeouts are rounded without libm (core/rounding.h): the same result as
// std::llround on every value a policy can hold.
TEST(PolicyJson, MillisecondRoundingMatchesLlround) {
  std::mt19937_64 random(7);
  std::vector<double> values = {0.5, 1.5, 2.5, 0.49999999999999994, 1e-9, 999.5, 4503599627370495.5,
                                4503599627370496.0, 9007199254740993.0, 8.99e18};
  for (int i = 0; i < 100000; ++i) {
    values.push_back(std::ldexp(static_cast<double>(random() >> 11), static_cast<int>(random() % 80) - 60));
  }
  for (double v : values) {
    if (v >= 9.0e18) continue;
    EXPECT_EQ(detail::round_milliseconds(v), static_cast<std::uint64_t>(std::llround(v))) << v;
  }
  EXPECT_EQ(detail::round_milliseconds(-1.0), 0U);
  EXPECT_EQ(detail::round_milliseconds(std::nan("")), 0U);
}

}  // namespace
}  // namespace cordon
