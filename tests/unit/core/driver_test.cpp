// The compile driver with a backend that implements only its three steps
// (read_host_facts, build, launch): the gates run in order, build() is asked
// only after gates 1-3 pass, gate 4 holds the policy against the levels
// build() stated, and plans bind to the backend. Links no platform backend
// (cordon_core_tests).
#include <gtest/gtest.h>

#include "cordon/backend.h"
#include "cordon/profiles.h"

namespace cordon {
namespace {

class fake_backend final : public sandbox_backend {
 public:
  host_facts facts;
  enforcement_level memory_level = enforcement_level::partial;
  mutable int builds = 0;

  // "linux": the one platform with a passed proof run, so build()'s levels
  // stand (platform_proven); another name shows the proof rule.
  std::string plat = "linux";

  fake_backend() {
    facts.platform = plat;
    facts.backend_available = true;
  }
  std::string_view name() const noexcept override { return "fake"; }
  std::uint32_t plan_format_version() const noexcept override { return 3; }
  std::string_view platform() const noexcept override { return plat; }
  isolation_level isolation() const noexcept override { return isolation_level::os_sandbox; }
  host_facts read_host_facts(const compile_options&, bool) const override { return facts; }
  result<backend_build> build(const sandbox_policy& policy, const host_facts&) const override {
    ++builds;
    backend_build built;
    for (control c : all_controls) built.contract[c] = {enforcement_level::enforced, "fake mechanism", ""};
    built.contract[control::memory] = {policy.process.memory_bytes ? memory_level : enforcement_level::not_applicable,
                                       "fake limit", "stated by build()"};
    built.warnings.push_back("from build");
    return built;
  }
  result<run_outcome> launch(const sandbox_plan* plan, const launch_request&) const override {
    if (auto checked = check_plan(plan, platform()); !checked) return std::move(checked).error_value();
    run_outcome o;
    o.exited = true;
    return o;
  }
};

sandbox_policy small_policy() {
  sandbox_policy p;
  p.name = "driver";
  p.filesystem.writable = {"{workspace}/out"};
  return p;
}

TEST(Driver, GatesRunInOrderAndBuildOnlyAfterGatesOneToThree) {
  fake_backend backend;
  compile_options options;
  options.workspace = "/srv/project";
  sandbox_policy p = small_policy();
  p.filesystem.readable = {"relative"};
  p.isolation = isolation_level::vm;
  auto failed = backend.compile(p, options);
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.failure().code, error_code::invalid_policy);
  EXPECT_EQ(failed.failure().errors.at(0).location, "/filesystem/readable/0");

  p.filesystem.readable.clear();
  backend.facts.backend_available = false;
  backend.facts.backend_blocker = "fake kernel says no";
  failed = backend.compile(p, options);
  EXPECT_EQ(failed.failure().code, error_code::backend_unavailable);
  EXPECT_EQ(failed.failure().blockers.at(0).subject, blocker_subject::backend);
  EXPECT_EQ(failed.failure().blockers.at(0).reason, "fake kernel says no");

  backend.facts.backend_available = true;
  failed = backend.compile(p, options);
  EXPECT_EQ(failed.failure().code, error_code::isolation_insufficient);
  EXPECT_EQ(failed.failure().blockers.at(0).available_isolation, isolation_level::os_sandbox);
  EXPECT_EQ(backend.builds, 0) << "build() ran before gates 1-3 passed";

  p.isolation = isolation_level::os_sandbox;
  p.process.memory_bytes = 1 << 20;  // required enforced by default; build() states partial
  failed = backend.compile(p, options);
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.failure().code, error_code::enforcement_unavailable);
  ASSERT_EQ(failed.failure().blockers.size(), 1u);
  const blocker& b = failed.failure().blockers[0];
  EXPECT_EQ(b.control, control::memory);
  EXPECT_EQ(b.required, enforcement_level::enforced);
  EXPECT_EQ(b.available, enforcement_level::partial);
  EXPECT_EQ(b.reason, "stated by build()");
  EXPECT_EQ(backend.builds, 1);

  p.enforcement[control::memory] = enforcement_level::partial;
  auto compiled = backend.compile(p, options);
  ASSERT_TRUE(compiled) << compiled.failure().describe();
  const sandbox_plan& plan = *compiled.plan();
  EXPECT_EQ(plan.policy().filesystem.writable, std::vector<std::string>{"/srv/project/out"});
  EXPECT_EQ(plan.workspace(), "/srv/project");
  EXPECT_EQ(plan.contract().at(control::memory).level, enforcement_level::partial);
  bool from_build = false, memory_line = false;
  for (const auto& w : plan.warnings()) {
    from_build = from_build || w == "from build";
    memory_line = memory_line || w.rfind("memory is partial", 0) == 0;
  }
  EXPECT_TRUE(from_build);
  EXPECT_TRUE(memory_line);
}

TEST(Driver, OnAPlatformWithoutAProofRunEveryEnforcedOrPartialLevelIsUnverified) {
  fake_backend backend;
  backend.plat = backend.facts.platform = "plan9";
  compile_options options;
  options.workspace = "/srv/project";
  sandbox_policy p = small_policy();
  p.process.memory_bytes = 1 << 20;
  auto refused = backend.compile(p, options);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.failure().code, error_code::enforcement_unavailable);
  for (const auto& b : refused.failure().blockers) EXPECT_EQ(b.available, enforcement_level::unverified);
  for (const auto& [which, required] : required_enforcement(p)) p.enforcement[which] = enforcement_level::unverified;
  auto compiled = backend.compile(p, options);
  ASSERT_TRUE(compiled) << compiled.failure().message;
  for (const auto& [which, status] : compiled.plan()->contract()) {
    EXPECT_EQ(status.level, enforcement_level::unverified) << to_string(which);
    EXPECT_NE(status.detail.find("no proof run on plan9"), std::string::npos) << status.detail;
  }
  EXPECT_TRUE(platform_proven("linux"));
  EXPECT_FALSE(platform_proven("macos"));
  EXPECT_FALSE(platform_proven("windows"));
}

TEST(Driver, OtherPlatformIsUnsupported) {
  fake_backend backend;
  backend.facts.platform = "plan9";
  compile_options options;
  options.workspace = "/srv/project";
  auto failed = backend.compile(small_policy(), options);
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.failure().code, error_code::unsupported_platform);
}

TEST(Driver, WorkspaceRulesAreTheDriversAndPlansBindToTheirBackend) {
  fake_backend backend, other;
  compile_options options;
  options.workspace = "/";
  auto refused = backend.compile(small_policy(), options);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.failure().code, error_code::invalid_policy);
  EXPECT_NE(refused.failure().errors.at(0).reason.find("the root directory"), std::string::npos);

  options.workspace = "/srv/project";
  auto compiled = backend.compile(small_policy(), options);
  ASSERT_TRUE(compiled);
  EXPECT_TRUE(backend.launch(compiled.plan().get(), {}));
  EXPECT_EQ(other.launch(compiled.plan().get(), {}).error_value().code, error_code::plan_foreign);
  EXPECT_EQ(backend.launch(nullptr, {}).error_value().code, error_code::plan_null);
}

// A terminated rule's field on a tunnel rule (docs/tls.md) is refused at
// gate 1, before any backend is asked: websocket as methods and paths.
TEST(Driver, WebsocketOnATunnelRuleIsAnInvalidPolicy) {
  fake_backend backend;
  compile_options options;
  options.workspace = "/srv/project";
  sandbox_policy p = small_policy();
  p.network.mode = network_mode::filtered;
  network_rule r;
  r.host = "api.example.test";
  r.action = rule_action::allow;
  r.websocket = true;
  p.network.rules = {r};
  auto refused = backend.compile(p, options);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.failure().code, error_code::invalid_policy);
  ASSERT_EQ(refused.failure().errors.size(), 1u);
  EXPECT_EQ(refused.failure().errors[0].location, "/network/rules/0/websocket");
  EXPECT_EQ(backend.builds, 0);
  p.network.rules[0].tls = tls_mode::terminate;
  EXPECT_TRUE(backend.compile(p, options)) << "the same rule terminating TLS compiles";
}

TEST(Driver, ProbeIsBuildOfTheStrictPolicy) {
  fake_backend backend;
  host_capabilities caps = backend.probe(backend.facts);
  EXPECT_TRUE(caps.available);
  EXPECT_EQ(caps.best.at(control::memory).level, enforcement_level::partial);
  ASSERT_EQ(caps.blockers.size(), 1u);
  EXPECT_EQ(caps.blockers[0].control, control::memory);
}

}  // namespace
}  // namespace cordon
