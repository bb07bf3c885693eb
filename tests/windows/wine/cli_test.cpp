// cordon.exe end to end: a policy file, a command, its output and exit code.
#include <nlohmann/json.hpp>
#include <set>

#include "cli_support.h"

namespace cordon::windows {
namespace {

using namespace testing;

TEST(WindowsCli, RunsACommandUnderAPolicyFile) {
  temp_dir dir;
  const std::string policy = write_policy(dir, plumbing_policy());
  const auto r = run_cordon("run --policy \"" + policy + "\" --workspace \"" + exe_directory() + "\" -- \"" + child_exe() +
                            "\" argv hello");
  EXPECT_EQ(r.exit_code, 0u) << r.out;
  EXPECT_NE(r.out.find("hello"), std::string::npos) << r.out;
}

// The relaxations a policy states for Windows alone (platform_enforcement,
// docs/policy.md) hold at launch as at compile: the launcher's check against
// what was read back uses the same requirements as the driver.
TEST(WindowsCli, RelaxationsForWindowsInPlatformEnforcementHoldAtLaunch) {
  temp_dir dir;
  sandbox_policy p = plumbing_policy();
  p.platform_enforcement["windows"] = p.enforcement;
  p.enforcement.clear();
  const std::string policy = write_policy(dir, p);
  const auto r = run_cordon("run --policy \"" + policy + "\" --workspace \"" + exe_directory() + "\" -- \"" + child_exe() +
                            "\" argv relaxed");
  EXPECT_EQ(r.exit_code, 0u) << r.out;
  EXPECT_NE(r.out.find("relaxed"), std::string::npos) << r.out;
}

// The built-in profiles are embedded in cordon.exe and compile for Windows:
// on the reference shape (an AppContainer host) workspace-write gives a plan
// whose every relaxation, and the Windows reading of its POSIX environment,
// is a warning (profiles/workspace-write.json, docs/windows-backend.md).
TEST(WindowsCli, ExplainCompilesTheDefaultProfileOnTheReferenceShape) {
  const auto r = run_cordon("explain --profile workspace-write --reference-host");
  EXPECT_EQ(r.exit_code, 0u) << r.out;
  for (const char* expected :
       {"acl writable C:\\Users\\user\\work", "acl denied C:\\Users\\user\\.ssh", "filesystem_read: unverified",
        "network_deny: unverified", "warning: filesystem_read: policy accepts unverified on windows",
        "warning: environment: PATH names POSIX directories", "warning: environment: HOME names /tmp"}) {
    EXPECT_NE(r.out.find(expected), std::string::npos) << expected << "\n" << r.out;
  }
  EXPECT_EQ(r.out.find(": enforced"), std::string::npos) << r.out;
  // read-only reads everything, which an AppContainer cannot: refused, typed, with what to do.
  const auto ro = run_cordon("explain --profile read-only --reference-host");
  EXPECT_EQ(ro.exit_code, 125u) << ro.out;
  EXPECT_NE(ro.out.find("full_read_unsupported"), std::string::npos) << ro.out;
  EXPECT_NE(ro.out.find("as the built-in workspace-write does"), std::string::npos) << ro.out;
}

// `cordon.exe run --profile workspace-write -- cmd /c echo` finds cmd through
// the Windows reading of the profile's PATH. The host decides the outcome: on
// wine (declared by wine itself, not by cordon's facts) there is no
// AppContainer, so the refusal is typed and names it; on Windows it runs.
TEST(WindowsCli, TheDefaultProfileRunsCmdWhereAnAppContainerExists) {
  temp_dir dir;
  const std::string report = dir.file("report.json");
  const auto r = run_cordon("run --profile workspace-write --report \"" + report + "\" --workspace \"" + exe_directory() +
                            "\" -- cmd /c echo cordon-profile-ran");
  const auto j = nlohmann::json::parse(read_text(report), nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.out;
  if (running_on_wine()) {
    EXPECT_EQ(r.exit_code, 125u) << r.out;
    EXPECT_EQ(r.out.find("cordon-profile-ran"), std::string::npos) << "the command ran although the policy was refused";
    EXPECT_NE(r.out.find("appcontainer_unavailable /enforcement/filesystem_read: the host has no AppContainer"),
              std::string::npos)
        << r.out;
    EXPECT_EQ(j["outcome"], "refused");
    return;
  }
  EXPECT_EQ(r.exit_code, 0u) << r.out;
  EXPECT_NE(r.out.find("cordon-profile-ran"), std::string::npos) << r.out;
  EXPECT_EQ(j["outcome"], "completed");
  bool warned = false;
  for (const auto& w : j["warnings"]) warned = warned || w == "filesystem_read: policy accepts unverified on windows (its content implies enforced)";
  EXPECT_TRUE(warned) << j["warnings"];
}

TEST(WindowsCli, ARunWritesAReportInTheSharedFormat) {
  temp_dir dir;
  const std::string policy = write_policy(dir, plumbing_policy());
  const std::string report = report_path(dir, "cli-run.json");
  const auto r = run_cordon("run --policy \"" + policy + "\" --report \"" + report + "\" --workspace \"" + exe_directory() +
                            "\" -- \"" + child_exe() + "\" argv hello");
  ASSERT_EQ(r.exit_code, 0u) << r.out;
  const auto j = nlohmann::json::parse(read_text(report), nullptr, false);
  ASSERT_TRUE(j.is_object()) << read_text(report);
  EXPECT_EQ(j["schema"], 1);
  EXPECT_EQ(j["outcome"], "completed");
  EXPECT_EQ(j["exit"], nlohmann::json({{"code", 0}}));
  EXPECT_EQ(j["backend"]["name"], "windows-appcontainer");
  EXPECT_EQ(j["command"]["argv"].back(), "hello");
  EXPECT_TRUE(j["cleanup"].is_array());
  for (const auto& [name, c] : j["controls"].items()) EXPECT_NE(c["level"], "enforced") << name;
}

TEST(WindowsCli, ARefusedPolicyWritesARefusedReport) {
  temp_dir dir;
  const std::string report = report_path(dir, "cli-refused.json");
  // read-only is refused on every Windows host (full reads, full_read_unsupported).
  const auto r = run_cordon("run --profile read-only --report \"" + report + "\" --workspace \"" + exe_directory() +
                            "\" -- \"" + child_exe() + "\" argv hello");
  EXPECT_EQ(r.exit_code, 125u) << r.out;
  EXPECT_EQ(r.out.find("hello"), std::string::npos) << "the command ran although the policy was refused";
  const auto j = nlohmann::json::parse(read_text(report), nullptr, false);
  ASSERT_TRUE(j.is_object()) << read_text(report);
  EXPECT_EQ(j["outcome"], "refused");
  EXPECT_EQ(j["policy"]["name"], "read-only");
  EXPECT_FALSE(j["blockers"].empty());
  EXPECT_FALSE(j.contains("exit"));
}

}  // namespace
}  // namespace cordon::windows

namespace cordon::windows {
namespace {

using namespace testing;

// Each warning once: the plan's, then the launcher's (src/windows/report.h).
TEST(WindowsCli, AReportStatesEachWarningOnce) {
  temp_dir dir;
  const std::string policy = write_policy(dir, plumbing_policy());
  const std::string report = dir.file("report.json");
  const auto r = run_cordon("run --policy \"" + policy + "\" --report \"" + report + "\" --workspace \"" + exe_directory() +
                            "\" -- \"" + child_exe() + "\" argv hello");
  ASSERT_EQ(r.exit_code, 0u) << r.out;
  const auto j = nlohmann::json::parse(read_text(report), nullptr, false);
  ASSERT_TRUE(j.is_object());
  std::set<std::string> seen;
  for (const auto& w : j["warnings"]) EXPECT_TRUE(seen.insert(w.get<std::string>()).second) << "twice: " << w;
}

}  // namespace
}  // namespace cordon::windows
