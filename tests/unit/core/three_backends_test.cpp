// The one compile driver behind each of the three backends (Linux, macOS,
// Windows): the gates run in the same order and the workspace rule is the
// same for all, on recorded host facts (docs/architecture.md, "The pipeline").
#include <gtest/gtest.h>

#include <functional>
#include <memory>

#include "cordon/backend.h"
#include "cordon/linux_backend.h"
#include "cordon/linux_host_facts.h"
#include "cordon/windows/compile.h"
#include "cordon/windows/host_facts.h"
#include "macos/backend.h"
#include "macos/host_facts.h"
#include "macos/macos_plan.h"

namespace cordon {
namespace {

// One backend with host facts that pass gate 2, and the same facts with the
// backend unavailable; `workspace` and `home` spelled for that platform.
struct backend_case {
  const char* platform;
  const sandbox_backend* backend;
  host_facts available;
  host_facts unavailable;
  std::string workspace;
  std::string home;
};

host_facts linux_facts(bool available) {
  linux_host_facts lx;
  lx.user_namespaces = available;
  lx.user_namespace_blocker = available ? "" : "user namespaces disabled";
  lx.landlock_abi = 7;
  lx.seccomp = true;
  return linux_driver_facts(std::move(lx), 1000, 1000, "/home/dev");
}

host_facts macos_facts(bool available) {
  auto mac = macos_impl::example_macos_host_facts("/Users/dev", "/Users/dev/project");
  mac.sandbox_exec_present = available;
  return macos_impl::to_host_facts(mac);
}

host_facts windows_facts(bool available) {
  auto win = windows::reference_host_facts();
  win.job_objects = available;
  return windows::to_driver_facts(win, {});
}

std::vector<backend_case> cases() {
  static const std::unique_ptr<sandbox_backend> linux_backend = make_linux_backend();
  return {
      {"linux", linux_backend.get(), linux_facts(true), linux_facts(false), "/home/dev/project", "/home/dev"},
      {"macos", &macos_impl::the_macos_backend(), macos_facts(true), macos_facts(false), "/Users/dev/project",
       "/Users/dev"},
      {"windows", &windows::the_windows_backend(), windows_facts(true), windows_facts(false),
       "C:\\Users\\user\\work", "C:\\Users\\user"},
  };
}

// A policy every backend can build: restricted reads of the workspace,
// network denied, every requirement lowered to what no platform lacks.
sandbox_policy portable_policy() {
  sandbox_policy p;
  p.name = "three";
  p.filesystem.readable = {"{workspace}"};
  p.filesystem.writable = {"{workspace}/out"};
  for (const auto& [which, required] : required_enforcement(p)) p.enforcement[which] = enforcement_level::not_enforced;
  return p;
}

compile_options options_for(const backend_case& c) {
  compile_options o;
  o.workspace = c.workspace;
  o.home = c.home;
  return o;
}

TEST(ThreeBackends, TheGatesRunInTheSameOrderOnEach) {
  for (const auto& c : cases()) {
    SCOPED_TRACE(c.platform);
    EXPECT_EQ(c.backend->platform(), c.platform);
    const compile_options o = options_for(c);
    // Everything wrong at once: gate 1 speaks first.
    sandbox_policy all_wrong = portable_policy();
    all_wrong.filesystem.readable.push_back("relative");
    all_wrong.isolation = isolation_level::vm;
    all_wrong.enforcement[control::syscall_filter] = enforcement_level::enforced;
    auto r1 = c.backend->compile(all_wrong, o, c.unavailable);
    ASSERT_FALSE(r1);
    EXPECT_EQ(r1.failure().code, error_code::invalid_policy);
    // Valid: gate 2 next.
    sandbox_policy wrong = portable_policy();
    wrong.isolation = isolation_level::vm;
    wrong.enforcement[control::syscall_filter] = enforcement_level::enforced;
    auto r2 = c.backend->compile(wrong, o, c.unavailable);
    ASSERT_FALSE(r2);
    EXPECT_EQ(r2.failure().code, error_code::backend_unavailable);
    // Available: gate 3.
    auto r3 = c.backend->compile(wrong, o, c.available);
    ASSERT_FALSE(r3);
    EXPECT_EQ(r3.failure().code, error_code::isolation_insufficient);
    // Isolation met: gate 4 (no platform has a system call filter at
    // `enforced` without seccomp; macOS and Windows have none at all).
    wrong.isolation = isolation_level::os_sandbox;
    host_facts no_seccomp = c.available;
    if (auto* lx = backend_facts_as<linux_host_facts>(no_seccomp)) lx->seccomp = false;
    auto r4 = c.backend->compile(wrong, o, no_seccomp);
    ASSERT_FALSE(r4);
    EXPECT_EQ(r4.failure().code, error_code::enforcement_unavailable);
    ASSERT_FALSE(r4.failure().blockers.empty());
    EXPECT_EQ(r4.failure().blockers.back().subject_name(), "syscall_filter");
    // And the policy itself compiles.
    auto ok = c.backend->compile(portable_policy(), o, c.available);
    EXPECT_TRUE(ok) << (ok ? "" : ok.failure().message);
  }
}

// network.publish needs a network namespace of the sandbox's own: Linux
// (linux-namespaces) compiles it, macOS and Windows refuse it with a blocker
// naming it (docs/network.md, "Published ports").
TEST(ThreeBackends, PublishedPortsCompileOnlyWhereTheSandboxHasItsOwnNetwork) {
  for (const auto& c : cases()) {
    SCOPED_TRACE(c.platform);
    sandbox_policy p = portable_policy();
    p.network.publish = {{8000, 18000}};
    auto r = c.backend->compile(p, options_for(c), c.available);
    if (std::string(c.platform) == "linux") {
      EXPECT_TRUE(r) << (r ? "" : r.failure().message);
      continue;
    }
    ASSERT_FALSE(r);
    bool named = false;
    for (const auto& b : r.failure().blockers) named = named || b.reason.find("publish") != std::string::npos;
    EXPECT_TRUE(named) << r.failure().message;
  }
}

TEST(ThreeBackends, TheWorkspaceRuleRefusesTheRootAndTheHomeOnEach) {
  for (const auto& c : cases()) {
    SCOPED_TRACE(c.platform);
    const std::string root = std::string(c.platform) == "windows" ? "C:\\" : "/";
    for (const auto& [workspace, why] : {std::pair{root, std::string("root")}, std::pair{c.home, std::string("home")}}) {
      compile_options o = options_for(c);
      o.workspace = workspace;
      auto r = c.backend->compile(portable_policy(), o, c.available);
      ASSERT_FALSE(r) << workspace;
      EXPECT_EQ(r.failure().code, error_code::invalid_policy) << workspace;
      ASSERT_FALSE(r.failure().errors.empty());
      EXPECT_NE(r.failure().errors[0].reason.find(why), std::string::npos) << r.failure().errors[0].reason;
    }
  }
}

TEST(ThreeBackends, OnlyLinuxStatesEnforcedLevels) {
  for (const auto& c : cases()) {
    SCOPED_TRACE(c.platform);
    auto plan = c.backend->compile(portable_policy(), options_for(c), c.available);
    ASSERT_TRUE(plan) << plan.failure().message;
    bool any_enforced = false;
    for (const auto& [which, status] : plan.plan()->contract()) {
      any_enforced = any_enforced || status.level == enforcement_level::enforced ||
                     status.level == enforcement_level::partial;
    }
    EXPECT_EQ(any_enforced, std::string(c.platform) == "linux");
  }
}

}  // namespace
}  // namespace cordon
