// Unit tests: control/level spellings, level_satisfies, implied enforcement,
// relaxation warnings, error spelling.
#include <gtest/gtest.h>

#include <cerrno>

#include "cordon/enforcement.h"
#include "cordon/policy.h"
#include "cordon/result.h"

namespace cordon {
namespace {

using L = enforcement_level;

TEST(Enforcement, ControlSpellingsRoundTrip) {
  for (control c : all_controls) {
    const auto name = to_string(c);
    EXPECT_NE(name, "unknown");
    EXPECT_EQ(control_from_string(name), c) << name;
  }
  EXPECT_EQ(to_string(control::filesystem_read), "filesystem_read");
  EXPECT_EQ(to_string(control::process_tree_cleanup), "process_tree_cleanup");
  EXPECT_EQ(to_string(control::descriptor_hygiene), "descriptor_hygiene");
  EXPECT_FALSE(control_from_string("Filesystem_Read"));
  EXPECT_FALSE(control_from_string(""));
  EXPECT_FALSE(control_from_string("memroy"));
}

TEST(Enforcement, LevelSpellingsRoundTrip) {
  for (L level : {L::enforced, L::partial, L::not_enforced, L::not_applicable, L::planned}) {
    EXPECT_EQ(enforcement_level_from_string(to_string(level)), level);
  }
  EXPECT_EQ(to_string(L::not_enforced), "not_enforced");
  EXPECT_EQ(to_string(L::not_applicable), "not_applicable");
  EXPECT_FALSE(enforcement_level_from_string("ENFORCED"));
  EXPECT_FALSE(enforcement_level_from_string("none"));
}

TEST(Enforcement, LevelSatisfiesTable) {
  const L levels[] = {L::enforced, L::partial, L::not_enforced, L::not_applicable, L::planned, L::unverified};
  // expected[available][required]; a requirement of `unverified` accepts "not
  // proven", never "absent" (docs/policy.md).
  const bool expected[6][6] = {
      /* enforced       */ {true, true, true, true, true, true},
      /* partial        */ {false, true, true, true, true, true},
      /* not_enforced   */ {false, false, true, true, true, false},
      /* not_applicable */ {true, true, true, true, true, true},
      /* planned        */ {false, false, true, true, true, false},
      /* unverified     */ {false, false, true, true, true, true},
  };
  for (int a = 0; a < 6; ++a) {
    for (int r = 0; r < 6; ++r) {
      EXPECT_EQ(level_satisfies(levels[a], levels[r]), expected[a][r])
          << "available " << to_string(levels[a]) << ", required " << to_string(levels[r]);
    }
  }
}

TEST(Enforcement, IsolationSpellings) {
  EXPECT_EQ(to_string(isolation_level::os_sandbox), "os_sandbox");
  for (auto level : {isolation_level::none, isolation_level::process, isolation_level::os_sandbox,
                     isolation_level::container, isolation_level::vm}) {
    EXPECT_EQ(isolation_level_from_string(to_string(level)), level);
  }
  EXPECT_FALSE(isolation_level_from_string("sandbox"));
}

sandbox_policy minimal_policy() {
  sandbox_policy p;
  p.filesystem.read = read_mode::full;
  p.network.mode = network_mode::unrestricted;
  p.process.tree_cleanup = false;
  return p;
}

TEST(RequiredEnforcement, MinimalPolicyImpliesAlwaysOnControls) {
  const std::map<control, L> expected = {
      {control::filesystem_write, L::enforced}, {control::environment, L::enforced},
      {control::privilege, L::enforced},        {control::descriptor_hygiene, L::enforced},
      {control::terminal, L::enforced},
  };
  EXPECT_EQ(required_enforcement(minimal_policy()), expected);
}

TEST(RequiredEnforcement, ContentImpliesControls) {
  sandbox_policy p;  // defaults: restricted read, network denied, tree cleanup
  p.filesystem.denied = {"/etc/shadow"};
  p.process.max_processes = 10;
  p.process.memory_bytes = 1 << 20;
  p.process.cpu_seconds = 5;
  p.process.timeout_ms = 1000;
  auto req = required_enforcement(p);
  for (control c : {control::filesystem_read, control::filesystem_write, control::filesystem_deny,
                    control::network_deny, control::environment, control::process_tree_cleanup,
                    control::process_count, control::memory, control::cpu, control::timeout,
                    control::privilege, control::descriptor_hygiene, control::terminal}) {
    ASSERT_TRUE(req.contains(c)) << to_string(c);
    EXPECT_EQ(req[c], L::enforced) << to_string(c);
  }
  EXPECT_FALSE(req.contains(control::network_filter));
  EXPECT_EQ(req.size(), 13U);
}

TEST(RequiredEnforcement, FilesystemDenyTriggers) {
  auto p = minimal_policy();
  EXPECT_FALSE(required_enforcement(p).contains(control::filesystem_deny));
  p.filesystem.protected_read_only = {"{home}/.bashrc"};
  EXPECT_TRUE(required_enforcement(p).contains(control::filesystem_deny));
  p = minimal_policy();
  p.filesystem.protect_vcs_metadata = true;
  EXPECT_TRUE(required_enforcement(p).contains(control::filesystem_deny));
}

TEST(RequiredEnforcement, NetworkModes) {
  auto p = minimal_policy();
  EXPECT_FALSE(required_enforcement(p).contains(control::network_deny));
  p.network.mode = network_mode::denied;
  EXPECT_TRUE(required_enforcement(p).contains(control::network_deny));
  EXPECT_FALSE(required_enforcement(p).contains(control::network_filter));
  p.network.mode = network_mode::filtered;
  EXPECT_TRUE(required_enforcement(p).contains(control::network_deny));
  EXPECT_TRUE(required_enforcement(p).contains(control::network_filter));
}

TEST(RequiredEnforcement, ExplicitEntriesReplaceImpliedBothWays) {
  auto p = minimal_policy();
  p.process.memory_bytes = 1 << 30;
  p.enforcement[control::memory] = L::partial;             // lower than implied
  p.enforcement[control::syscall_filter] = L::enforced;    // not implied: added
  p.enforcement[control::environment] = L::not_applicable;  // lower
  p.enforcement[control::privilege] = L::enforced;          // same
  auto req = required_enforcement(p);
  EXPECT_EQ(req[control::memory], L::partial);
  EXPECT_EQ(req[control::syscall_filter], L::enforced);
  EXPECT_EQ(req[control::environment], L::not_applicable);
  EXPECT_EQ(req[control::privilege], L::enforced);
}

TEST(RelaxationWarnings, OneLinePerWeakerExplicitEntry) {
  auto p = minimal_policy();
  p.process.memory_bytes = 1 << 30;
  p.enforcement[control::memory] = L::partial;
  p.enforcement[control::environment] = L::not_applicable;
  p.enforcement[control::privilege] = L::enforced;         // not weaker
  p.enforcement[control::syscall_filter] = L::partial;     // nothing implied: no warning
  p.enforcement[control::cpu] = L::not_enforced;           // no cpu limit: nothing implied
  const std::vector<std::string> expected = {
      "environment: policy accepts not_applicable (its content implies enforced)",
      "memory: policy accepts partial (its content implies enforced)",
  };
  EXPECT_EQ(relaxation_warnings(p), expected);
  EXPECT_TRUE(relaxation_warnings(minimal_policy()).empty());
}

// platform_enforcement: a platform's entries apply only to plans for that
// platform, and `enforcement` (every platform) wins over them.
TEST(RequiredEnforcement, PlatformEntriesApplyOnlyToTheirPlatform) {
  auto p = minimal_policy();
  p.process.tree_cleanup = true;
  p.platform_enforcement["macos"][control::process_tree_cleanup] = L::partial;
  p.platform_enforcement["macos"][control::privilege] = L::unverified;
  p.platform_enforcement["windows"][control::terminal] = L::unverified;
  p.enforcement[control::privilege] = L::enforced;
  EXPECT_EQ(required_enforcement(p, "macos")[control::process_tree_cleanup], L::partial);
  EXPECT_EQ(required_enforcement(p, "macos")[control::privilege], L::enforced);  // enforcement wins
  EXPECT_EQ(required_enforcement(p, "macos")[control::terminal], L::enforced);
  EXPECT_EQ(required_enforcement(p, "linux")[control::process_tree_cleanup], L::enforced);
  EXPECT_EQ(required_enforcement(p, "windows")[control::terminal], L::unverified);
  EXPECT_EQ(required_enforcement(p), required_enforcement(p, "linux"));  // no platform: no entries
}

TEST(RelaxationWarnings, PlatformEntriesAreWarnedOnTheirPlatformOnly) {
  auto p = minimal_policy();
  p.process.tree_cleanup = true;
  p.platform_enforcement["macos"][control::process_tree_cleanup] = L::unverified;
  p.platform_enforcement["macos"][control::privilege] = L::partial;
  p.enforcement[control::privilege] = L::enforced;  // wins: no relaxation left
  p.enforcement[control::memory] = L::partial;      // no memory limit: nothing implied
  p.enforcement[control::environment] = L::partial;
  const std::vector<std::string> expected = {
      "environment: policy accepts partial (its content implies enforced)",
      "process_tree_cleanup: policy accepts unverified on macos (its content implies enforced)",
  };
  EXPECT_EQ(relaxation_warnings(p, "macos"), expected);
  EXPECT_EQ(relaxation_warnings(p, "linux"),
            std::vector<std::string>{"environment: policy accepts partial (its content implies enforced)"});
}

TEST(ErrorCode, SpellingsAndDescribe) {
  EXPECT_EQ(to_string(error_code::enforcement_unavailable), "enforcement_unavailable");
  EXPECT_EQ(to_string(error_code::plan_other_platform), "plan_other_platform");
  EXPECT_EQ(to_string(error_code::usage_error), "usage_error");

  EXPECT_EQ(make_error(error_code::invalid_policy, "unknown field \"x\"", "/x").describe(),
            "invalid_policy: unknown field \"x\" (at /x)");
  EXPECT_EQ(make_error(error_code::io_error, "cannot open policy file p", {}, ENOENT).describe(),
            "io_error: cannot open policy file p: No such file or directory");
  EXPECT_EQ(make_error(error_code::plan_null, "no plan").describe(), "plan_null: no plan");
  // Further problems stay on their own lines, after the first one's location.
  EXPECT_EQ(make_error(error_code::invalid_policy, "first\n/b: second", "/a").describe(),
            "invalid_policy: first (at /a)\n/b: second");
}

}  // namespace
}  // namespace cordon
