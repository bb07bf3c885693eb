// Plans are bound to the backend instance, platform and format version that
// made them; launchers reject anything else with a typed error.
#include <gtest/gtest.h>

#include "cordon/cordon.h"

namespace cordon {
namespace {

// A second backend, to prove plans do not cross backends.
class test_backend final : public sandbox_backend {
 public:
  std::string platform_name = "linux";
  std::uint32_t version = 1;
  std::string backend_name = "test-backend";

  std::string_view name() const noexcept override { return backend_name; }
  std::uint32_t plan_format_version() const noexcept override { return version; }
  std::string_view platform() const noexcept override { return platform_name; }
  isolation_level isolation() const noexcept override { return isolation_level::process; }
  host_facts read_host_facts(const compile_options&, bool) const override {
    host_facts facts;
    facts.platform = platform_name;
    facts.backend_available = true;
    return facts;
  }
  result<backend_build> build(const sandbox_policy&, const host_facts&) const override {
    backend_build built;
    for (control c : all_controls) built.contract[c] = {enforcement_level::enforced, "test", ""};
    return built;
  }
  result<run_outcome> launch(const sandbox_plan* plan, const launch_request&) const override {
    if (auto checked = check_plan(plan, "linux"); !checked) return std::move(checked).error_value();
    return run_outcome{};
  }
};

sandbox_policy minimal_policy() {
  sandbox_policy p;
  p.name = "plan-test";
  p.isolation = isolation_level::process;
  p.filesystem.writable = {"/tmp"};
  return p;
}

launch_request true_request() {
  launch_request r;
  r.argv = {"true"};
  return r;
}

TEST(Plan, NullPlanIsRejected) {
  auto linux_backend = make_linux_backend();
  auto launched = linux_backend->launch(nullptr, true_request());
  ASSERT_FALSE(launched);
  EXPECT_EQ(launched.error_value().code, error_code::plan_null);
}

TEST(Plan, AnotherBackendsPlanIsForeign) {
  test_backend other;
  auto compiled = other.compile(minimal_policy(), {});
  ASSERT_TRUE(compiled);
  auto linux_backend = make_linux_backend();
  auto launched = linux_backend->launch(compiled.plan().get(), true_request());
  ASSERT_FALSE(launched);
  EXPECT_EQ(launched.error_value().code, error_code::plan_foreign);
}

TEST(Plan, AnotherInstanceOfTheSameBackendIsForeign) {
  auto first = make_linux_backend();
  auto second = make_linux_backend();
  auto compiled = first->compile(minimal_policy(), {});
  ASSERT_TRUE(compiled) << compiled.failure().message;
  auto launched = second->launch(compiled.plan().get(), true_request());
  ASSERT_FALSE(launched);
  EXPECT_EQ(launched.error_value().code, error_code::plan_foreign);
}

TEST(Plan, OtherPlatformAndStaleVersionAreRejected) {
  test_backend backend;
  backend.platform_name = "macos";
  // No macOS proof run has passed: its levels are unverified (platform_proven).
  sandbox_policy accepting = minimal_policy();
  for (const auto& [which, required] : required_enforcement(accepting)) {
    accepting.enforcement[which] = enforcement_level::unverified;
  }
  auto macos_plan = backend.compile(accepting, {});
  ASSERT_TRUE(macos_plan);
  EXPECT_EQ(backend.launch(macos_plan.plan().get(), true_request()).error_value().code,
            error_code::plan_other_platform);

  backend.platform_name = "linux";
  auto old_plan = backend.compile(minimal_policy(), {});
  ASSERT_TRUE(old_plan);
  EXPECT_TRUE(backend.launch(old_plan.plan().get(), true_request()));
  backend.version = 2;  // the backend's plan format moved on
  EXPECT_EQ(backend.launch(old_plan.plan().get(), true_request()).error_value().code, error_code::plan_stale);
}

// A library caller that compiles on loaded facts (load_host_facts) gets a plan
// that explains but never launches: the facts describe a host, not this one.
TEST(Plan, APlanCompiledOnRecordedFactsIsRefusedAtLaunch) {
  test_backend backend;
  host_facts recorded = backend.read_host_facts({}, false);
  recorded.recorded = true;
  auto described = backend.compile(minimal_policy(), {}, recorded);
  ASSERT_TRUE(described) << described.failure().describe();
  EXPECT_TRUE(described.plan()->from_recorded_facts());
  auto refused = backend.launch(described.plan().get(), true_request());
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error_value().code, error_code::plan_recorded_facts);
  EXPECT_EQ(to_string(error_code::plan_recorded_facts), "plan_recorded_facts");
  EXPECT_EQ(error_code_from_string("plan_recorded_facts"), error_code::plan_recorded_facts);

  // The same policy on the facts of this host launches.
  auto live = backend.compile(minimal_policy(), {});
  ASSERT_TRUE(live);
  EXPECT_FALSE(live.plan()->from_recorded_facts());
  EXPECT_TRUE(backend.launch(live.plan().get(), true_request()));
}

TEST(Plan, CarriesNormalizedPolicyContractAndIdentity) {
  auto backend = make_linux_backend();
  sandbox_policy p = minimal_policy();
  p.filesystem.readable = {"/usr/./share/../lib", "/usr/lib"};
  auto a = backend->compile(p, {});
  auto b = backend->compile(p, {});
  ASSERT_TRUE(a && b);
  const sandbox_plan& plan = *a.plan();
  EXPECT_EQ(plan.backend_name(), "linux-namespaces");
  EXPECT_EQ(plan.platform(), "linux");
  EXPECT_EQ(plan.policy().filesystem.readable, std::vector<std::string>{"/usr/lib"});
  EXPECT_EQ(plan.process_token(), current_process_token());
  EXPECT_NE(plan.identity(), b.plan()->identity());
  EXPECT_EQ(plan.contract().at(control::filesystem_write).level, enforcement_level::enforced);
  EXPECT_EQ(plan.contract().at(control::network_deny).level, enforcement_level::enforced);
}

TEST(Plan, CompileGatesStopAtTheFirstFailure) {
  auto backend = make_linux_backend();
  // Invalid (gate 1) and needing a VM (gate 3) and connect(2) filtering of named
  // unix sockets, which no Linux mechanism here gives (gate 4): gate 1 reports.
  sandbox_policy p = minimal_policy();
  p.filesystem.writable = {"relative/path"};
  p.isolation = isolation_level::vm;
  p.enforcement[control::unix_sockets] = enforcement_level::enforced;
  p.network.mode = network_mode::unrestricted;  // the host's network: named unix sockets stay partial
  auto failed = backend->compile(p, {});
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.failure().code, error_code::invalid_policy);
  EXPECT_EQ(failed.failure().errors.at(0).location, "/filesystem/writable/0");

  p.filesystem.writable = {"/tmp"};  // now gate 3 is first
  failed = backend->compile(p, {});
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.failure().code, error_code::isolation_insufficient);
  EXPECT_EQ(failed.failure().blockers.at(0).subject, blocker_subject::isolation);
  EXPECT_EQ(failed.failure().blockers.at(0).required_isolation, isolation_level::vm);

  p.isolation = isolation_level::container;  // then gate 4
  failed = backend->compile(p, {});
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.failure().code, error_code::enforcement_unavailable);
  EXPECT_EQ(failed.failure().blockers.at(0).control, control::unix_sockets);
  EXPECT_EQ(failed.failure().blockers.at(0).available, enforcement_level::partial);

  p.enforcement.erase(control::unix_sockets);
  p.process.memory_bytes = 1 << 20;
  p.enforcement[control::memory] = enforcement_level::partial;  // accepted explicitly
  auto compiled = backend->compile(p, {});
  ASSERT_TRUE(compiled);
  bool warned = false;
  for (const auto& w : compiled.plan()->warnings()) warned = warned || w.rfind("memory: policy accepts partial", 0) == 0;
  EXPECT_TRUE(warned);
}

TEST(Plan, WorkspaceTokenWithoutAWorkspaceIsInvalid) {
  auto backend = make_linux_backend();
  sandbox_policy p = minimal_policy();
  p.filesystem.writable = {"{workspace}"};
  auto failed = backend->compile(p, {});
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.failure().code, error_code::invalid_policy);
  EXPECT_EQ(failed.failure().errors.at(0).location, "/filesystem/writable/0");
}

}  // namespace
}  // namespace cordon
