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

TEST(WindowsCli, RefusesTheBuiltInProfileThatNeedsWhatThisHostLacks) {
  // workspace-write requires filesystem and network confinement: "unverified"
  // is not accepted by it, and on wine there is no AppContainer at all.
  const auto r = run_cordon("run --profile workspace-write --workspace \"" + exe_directory() + "\" -- \"" + child_exe() +
                            "\" argv hello");
  EXPECT_EQ(r.exit_code, 125u) << r.out;
  EXPECT_EQ(r.out.find("hello"), std::string::npos) << "the command ran although the policy was refused";
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
  const auto r = run_cordon("run --profile workspace-write --report \"" + report + "\" --workspace \"" + exe_directory() +
                            "\" -- \"" + child_exe() + "\" argv hello");
  EXPECT_EQ(r.exit_code, 125u) << r.out;
  EXPECT_EQ(r.out.find("hello"), std::string::npos) << "the command ran although the policy was refused";
  const auto j = nlohmann::json::parse(read_text(report), nullptr, false);
  ASSERT_TRUE(j.is_object()) << read_text(report);
  EXPECT_EQ(j["outcome"], "refused");
  EXPECT_EQ(j["policy"]["name"], "workspace-write");
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
