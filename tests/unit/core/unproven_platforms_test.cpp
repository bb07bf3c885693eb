// The one rule for `unverified` (docs/policy.md; platform_proven() in
// src/core/compile.cpp), over everything this machine produces for macOS and
// Windows: no plan of a built-in profile or of a user policy, on the
// reference facts or the recorded ones (tests/facts/), and no probe states a
// control `enforced` or `partial` there. The Windows reports the wine suite
// writes are held to the same rule by scripts/validate-reports.py.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "cordon/backend.h"
#include "cordon/profiles.h"
#include "cordon/windows/compile.h"
#include "macos/backend.h"
#include "core/shortcuts.h"
#include "facts_files.h"

namespace cordon {
namespace {

struct unproven {
  const sandbox_backend* backend;
  std::vector<host_facts> facts;  // reference, then recorded
};

std::vector<unproven> unproven_backends() {
  std::vector<unproven> out;
  for (const auto& [backend, file] :
       {std::pair<const sandbox_backend*, const char*>{&macos_impl::the_macos_backend(), "macos-14-arm64.json"},
        {&windows::the_windows_backend(), "windows-10-ntfs.json"}}) {
    unproven u{backend, {backend->read_host_facts({}, false)}};
    auto recorded = backend->load_host_facts(test::facts_file_text(file), {});
    EXPECT_TRUE(recorded) << file;
    if (recorded) u.facts.push_back(std::move(*recorded));
    out.push_back(std::move(u));
  }
  return out;
}

// The policies: each built-in profile as it is, and with --accept all=unverified
// (so that every requirement the profile makes lets a plan through); a user
// policy without platform entries, likewise.
std::vector<sandbox_policy> policies() {
  std::vector<sandbox_policy> out;
  sandbox_policy user;
  user.name = "user";
  user.filesystem.readable = {"{workspace}"};
  user.filesystem.writable = {"{workspace}/out"};
  std::vector<sandbox_policy> bases{user};
  for (const auto& name : builtin_profile_names()) bases.push_back(*builtin_profile(name));
  for (auto& p : bases) {
    out.push_back(p);
    core::policy_shortcuts accept_all;
    accept_all.accept = {"all=unverified"};
    EXPECT_TRUE(core::apply_shortcuts(p, accept_all, "/", "/"));
    out.push_back(std::move(p));
  }
  return out;
}

bool above_unverified(enforcement_level level) {
  return level == enforcement_level::enforced || level == enforcement_level::partial;
}

TEST(UnprovenPlatforms, NoPlanOrProbeStatesAControlEnforcedOrPartial) {
  int plans = 0;
  for (const auto& u : unproven_backends()) {
    for (const auto& facts : u.facts) {
      SCOPED_TRACE(std::string(u.backend->name()) + " " + facts.lines.front());
      for (const auto& [which, status] : u.backend->probe(facts).best) {
        EXPECT_FALSE(above_unverified(status.level)) << "probe " << to_string(which);
      }
      for (const auto& policy : policies()) {
        compile_options o;
        o.workspace = !facts.workspace.empty() ? facts.workspace
                      : u.backend->platform() == "windows" ? "C:\\Users\\user\\work"
                                                            : "/Users/dev/project";
        auto compiled = u.backend->compile(policy, o, facts);
        if (!compiled) continue;  // a refusal states no level
        ++plans;
        for (const auto& [which, status] : compiled.plan()->contract()) {
          EXPECT_FALSE(above_unverified(status.level)) << policy.name << " " << to_string(which);
        }
      }
    }
  }
  // Accepting unverified everywhere lets the built-in profiles through on
  // both platforms (read-only's full reads excepted on Windows).
  EXPECT_GE(plans, 8);
}

// --accept all=unverified relaxes exactly the controls the policy requires
// above `unverified`, each a relaxation the plan warns of.
TEST(UnprovenPlatforms, AcceptAllRelaxesEachRequiredControlAndWarnsOfEach) {
  sandbox_policy p = *builtin_profile("workspace-write");
  const auto required = required_enforcement(p);
  core::policy_shortcuts accept_all;
  accept_all.accept = {"all=unverified"};
  ASSERT_TRUE(core::apply_shortcuts(p, accept_all, "/", "/"));
  for (const auto& [which, level] : required) {
    if (level == enforcement_level::enforced || level == enforcement_level::partial) {
      EXPECT_EQ(p.enforcement.at(which), enforcement_level::unverified) << to_string(which);
    } else {
      EXPECT_EQ(p.enforcement.contains(which) ? p.enforcement.at(which) : level, level) << to_string(which);
    }
  }
  compile_options o;
  o.workspace = "/Users/dev/project";
  auto compiled = macos_impl::the_macos_backend().compile(p, o);
  ASSERT_TRUE(compiled) << compiled.failure().describe();
  int warned = 0;
  for (const auto& w : compiled.plan()->warnings()) {
    if (w.find(": policy accepts unverified (its content implies") != std::string::npos) ++warned;
  }
  int relaxed = 0;
  for (const auto& [which, level] : required) relaxed += above_unverified(level) ? 1 : 0;
  EXPECT_EQ(warned, relaxed);
  // all=enforced relaxes nothing: a usage error, as an unknown level is.
  core::policy_shortcuts wrong;
  wrong.accept = {"all=enforced"};
  auto refused = core::apply_shortcuts(p, wrong, "/", "/");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error_value().code, error_code::usage_error);
}

}  // namespace
}  // namespace cordon
