// The low-integrity fallback where the host has no AppContainer
// (docs/windows-backend.md, "Without an AppContainer"). wine has none, so its
// live facts compile to the fallback; wine fakes the integrity level (it reads
// back as High) and ignores restricting SIDs, so there the run states
// filesystem_write and privilege at their true level, not_enforced. On a
// Windows host without AppContainer the child reads back at low integrity.
#include "wine_support.h"

namespace cordon::windows {
namespace {

using namespace testing;

bool no_appcontainer(host_facts& f) {
  f.appcontainer_available = false;
  return true;
}

// What the fallback cannot confine is accepted as not_enforced, the rest unverified.
sandbox_policy fallback_policy() {
  sandbox_policy p = plumbing_policy();
  p.enforcement[control::filesystem_write] = enforcement_level::not_enforced;
  return p;
}

TEST(WindowsLowIntegrity, AHostWithoutAppContainerRunsTheCommandAtItsTrueLevels) {
  auto compiled = compile_live(fallback_policy(), {"token"}, no_appcontainer);
  ASSERT_TRUE(compiled) << describe(compiled);
  ASSERT_FALSE(compiled.plan->token().appcontainer);
  ASSERT_TRUE(compiled.plan->token().low_integrity);
  const auto& warnings = compiled.plan->warnings();
  EXPECT_TRUE(std::any_of(warnings.begin(), warnings.end(),
                          [](const std::string& w) { return w.find("low-integrity fallback") != std::string::npos; }));
  auto ran = launch_windows_plan(*compiled.plan, {});
  ASSERT_TRUE(ran) << ran.error_value().describe();
  EXPECT_EQ(ran->exit_code, 0u) << ran->stdout_text;
  const bool low = std::any_of(ran->readback.begin(), ran->readback.end(), [](const std::string& l) {
    return l.rfind("child token:", 0) == 0 && l.find("integrity 0x1000") != std::string::npos;
  });
  if (running_on_wine()) {
    EXPECT_FALSE(low) << "wine's TokenIntegrityLevel is a stub";
    EXPECT_EQ(ran->observed.at(control::filesystem_write).level, enforcement_level::not_enforced);
    EXPECT_NE(ran->observed.at(control::filesystem_write).detail.find("above low integrity"), std::string::npos);
    EXPECT_EQ(ran->observed.at(control::privilege).level, enforcement_level::not_enforced);
  } else {
    EXPECT_TRUE(low) << "the fallback child does not run at low integrity";
    EXPECT_EQ(ran->observed.at(control::filesystem_write).level, enforcement_level::unverified);
  }
  EXPECT_EQ(ran->observed.at(control::filesystem_read).level, enforcement_level::not_enforced);
  EXPECT_EQ(ran->observed.at(control::network_deny).level, enforcement_level::not_enforced);
}

// A policy that requires filesystem_write at unverified is refused where the
// child's integrity did not read back as low (wine): the command never runs.
TEST(WindowsLowIntegrity, AWriteRequirementTheChildCannotMeetRefusesBeforeItRuns) {
  if (!running_on_wine()) GTEST_SKIP() << "this host lowers the integrity level: the refusal needs wine's stub";
  temp_dir out;
  sandbox_policy p = fallback_policy();
  p.enforcement[control::filesystem_write] = enforcement_level::unverified;
  auto compiled = compile_live(p, {"write", out.file("ran")}, no_appcontainer);
  ASSERT_TRUE(compiled) << describe(compiled);
  auto ran = launch_windows_plan(*compiled.plan, {});
  ASSERT_FALSE(ran);
  EXPECT_EQ(ran.error_value().code, error_code::enforcement_unavailable);
  EXPECT_NE(ran.error_value().message.find("filesystem_write"), std::string::npos) << ran.error_value().message;
  EXPECT_FALSE(exists(out.file("ran")));
}

// The writable root's low label is a lease, read back: wine accepts
// SetSecurityInfo(LABEL_SECURITY_INFORMATION) but keeps no label ("S:" reads
// back), so there the run states filesystem_write not_enforced, names the
// label that did not read back, and still restores and removes its record; on
// Windows the low-integrity child writes inside the labelled root and nowhere
// else.
TEST(WindowsLowIntegrity, AWritableRootIsLabelledLowForTheRunAndRestored) {
  temp_dir root, outside, leases;
  sandbox_policy p = fallback_policy();
  p.filesystem.writable = {policy_path(root.path())};
  auto compiled = compile_live(p, {"write", root.file("inside")}, no_appcontainer);
  ASSERT_TRUE(compiled) << describe(compiled);
  ASSERT_EQ(compiled.plan->acl_changes().size(), 1u);
  EXPECT_EQ(compiled.plan->acl_changes().front().label, mandatory_label::low);
  windows_launch_options options;
  options.lease_directory = leases.path();
  auto ran = launch_windows_plan(*compiled.plan, options);
  WIN32_FIND_DATAW data;
  HANDLE find = FindFirstFileW(win32::widen(leases.file("lease-*.json")).c_str(), &data);
  EXPECT_EQ(find, INVALID_HANDLE_VALUE) << "a lease record was left behind";
  if (find != INVALID_HANDLE_VALUE) FindClose(find);
  ASSERT_TRUE(ran) << ran.error_value().describe();
  const auto has = [](const std::vector<std::string>& lines, const std::string& text) {
    return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) { return l.find(text) != std::string::npos; });
  };
  EXPECT_TRUE(has(ran->cleanup, "restore DACLs: ok (1 entries)"));
  if (running_on_wine()) {
    EXPECT_TRUE(has(ran->readback, "did not read back as labelled low")) << ran->readback.size();
    EXPECT_EQ(ran->observed.at(control::filesystem_write).level, enforcement_level::not_enforced);
    return;
  }
  EXPECT_TRUE(exists(root.file("inside"))) << ran->stdout_text;
  auto blocked = compile_live(p, {"write", outside.file("x")}, no_appcontainer);
  ASSERT_TRUE(blocked) << describe(blocked);
  auto refused_write = launch_windows_plan(*blocked.plan, options);
  ASSERT_TRUE(refused_write) << refused_write.error_value().describe();
  EXPECT_EQ(refused_write->stdout_text.rfind("write failed 5", 0), 0u) << refused_write->stdout_text;
  EXPECT_FALSE(exists(outside.file("x")));
}

}  // namespace
}  // namespace cordon::windows
