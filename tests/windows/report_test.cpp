// The Windows backend's reports (src/windows/report.h) against the shared
// schema (schemas/report.v1.schema.json, validated by scripts/validate-reports.py
// with python3-jsonschema): a completed run, a timed-out run with an NTSTATUS
// exit, a refusal with its blockers, a policy that did not load, and a launch
// that failed. No level in any of them is `enforced`.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cordon/profiles.h"
#include "cordon/report.h"
#include "cordon/windows/compile.h"
#include "windows/report.h"
#include "windows_test_support.h"

namespace cordon::windows {
namespace {

using namespace testing;
namespace fs = std::filesystem;

// The validator's verdict line for `text`, and whether it exited 0.
std::pair<bool, std::string> validate(const std::string& text) {
  std::string dir = (fs::temp_directory_path() / "cordon-winreport-XXXXXX").string();
  if (::mkdtemp(dir.data()) == nullptr) return {false, "mkdtemp failed"};
  const std::string report = dir + "/report.json", verdict = dir + "/verdict";
  std::ofstream(report) << text;
  const std::string command = "python3 '" CORDON_SOURCE_DIR "/scripts/validate-reports.py' '" + report + "' > '" +
                              verdict + "' 2>&1";
  const int status = std::system(command.c_str());
  std::stringstream out;
  out << std::ifstream(verdict).rdbuf();
  fs::remove_all(dir);
  return {status == 0, out.str()};
}

std::shared_ptr<const windows_plan> sample_plan() {
  auto r = compile_windows_plan(sample_policy(), sample_host(), sample_options({"C:\\work\\run.exe", "--all"}));
  return r.plan;
}

void expect_no_enforced(const nlohmann::json& report) {
  if (!report.contains("controls")) return;
  for (const auto& [name, c] : report["controls"].items()) EXPECT_NE(c["level"], "enforced") << name;
}

TEST(WindowsReport, ACompletedRunFollowsTheSharedSchema) {
  auto plan = sample_plan();
  ASSERT_TRUE(plan);
  windows_run_result ran;
  ran.exited = true;
  ran.exit_code = 3;
  ran.wall_ms = 42;
  ran.observed = plan->contract();
  ran.cleanup = {"lease restored: ok", "appcontainer profile deleted: ok"};
  ran.warnings = {"ui limits: not applied"};
  const std::string text = windows_run_report_json(*plan, ran);
  const auto [valid, verdict] = validate(text);
  EXPECT_TRUE(valid) << verdict << text;
  const auto j = nlohmann::json::parse(text);
  EXPECT_EQ(j["outcome"], "completed");
  EXPECT_EQ(j["exit"], nlohmann::json({{"code", 3}}));
  EXPECT_EQ(j["backend"]["name"], "windows-appcontainer");
  EXPECT_EQ(j["backend"]["platform"], "windows");
  EXPECT_EQ(j["command"]["argv"], nlohmann::json({"C:\\work\\run.exe", "--all"}));
  EXPECT_EQ(j["cleanup"], nlohmann::json({"lease restored: ok", "appcontainer profile deleted: ok"}));
  EXPECT_EQ(j["warnings"].back(), "ui limits: not applied");
  EXPECT_EQ(j["timing"]["wall_ms"], 42);
  // The digest every backend states: SHA-256 of the normalized policy (include/cordon/report.h).
  EXPECT_EQ(j["policy"]["digest"], policy_digest(plan->policy()));
  EXPECT_EQ(j["policy"]["digest"], windows_policy_digest(*plan));
  expect_no_enforced(j);
}

TEST(WindowsReport, ATimedOutRunWithAnNtstatusExitFollowsTheSharedSchema) {
  auto plan = sample_plan();
  ASSERT_TRUE(plan);
  windows_run_result ran;
  ran.timed_out = true;
  ran.exit_code = 0xC0000005u;
  ran.observed = plan->contract();
  const std::string text = windows_run_report_json(*plan, ran);
  const auto [valid, verdict] = validate(text);
  EXPECT_TRUE(valid) << verdict << text;
  const auto j = nlohmann::json::parse(text);
  EXPECT_EQ(j["outcome"], "timed_out");
  EXPECT_EQ(j["timeout_fired"], true);
  EXPECT_EQ(j["exit"]["signal_name"], "NTSTATUS_0xC0000005");
}

TEST(WindowsReport, ARefusedPolicyWritesARefusedReport) {
  sandbox_policy p = sample_policy();
  p.enforcement.erase(control::network_deny);  // requires enforced: Windows gives unverified
  auto r = compile_windows_plan(p, sample_host(), sample_options({"C:\\work\\run.exe"}));
  ASSERT_FALSE(r);
  const std::string text = windows_refused_report_json(p.name, {"C:\\work\\run.exe"}, *r.failure);
  const auto [valid, verdict] = validate(text);
  EXPECT_TRUE(valid) << verdict << text;
  const auto j = nlohmann::json::parse(text);
  EXPECT_EQ(j["outcome"], "refused");
  EXPECT_EQ(j["error"]["code"], "enforcement_unavailable");
  ASSERT_EQ(j["blockers"].size(), 1u);
  EXPECT_EQ(j["blockers"][0]["control"], "network_deny");
  EXPECT_EQ(j["blockers"][0]["available"], "unverified");
  EXPECT_FALSE(j.contains("exit"));
}

TEST(WindowsReport, APolicyThatDidNotLoadWritesARefusedReport) {
  error failure = make_error(error_code::invalid_policy, "policy.json: not JSON");
  const std::string text = windows_refused_report_json("", {"cmd.exe"}, failure);
  const auto [valid, verdict] = validate(text);
  EXPECT_TRUE(valid) << verdict << text;
  EXPECT_EQ(nlohmann::json::parse(text)["error"]["code"], "invalid_policy");
}

TEST(WindowsReport, ALaunchThatFailedFollowsTheSharedSchema) {
  auto plan = sample_plan();
  ASSERT_TRUE(plan);
  const std::string text = windows_launch_failed_report_json(
      *plan, make_error(error_code::launch_failed, "CreateProcessAsUserW"), {"lease restored: ok"});
  const auto [valid, verdict] = validate(text);
  EXPECT_TRUE(valid) << verdict << text;
  const auto j = nlohmann::json::parse(text);
  EXPECT_EQ(j["outcome"], "launch_failed");
  EXPECT_EQ(j["cleanup"], nlohmann::json({"lease restored: ok"}));
  expect_no_enforced(j);
}

TEST(WindowsReport, AReportThatBreaksTheSchemaIsCaught) {
  // The validator itself: a Windows report as the launcher wrote it before
  // (no outcome, a flat exit_code) is refused.
  const auto [valid, verdict] = validate(R"({"schema": 1, "backend": "windows-appcontainer", "exit_code": 0})");
  EXPECT_FALSE(valid);
  EXPECT_NE(verdict.find("invalid:"), std::string::npos) << verdict;
}

// The one rule for `unverified`, checked on every report the validator sees
// (the wine suite's included): a Windows report claiming a control
// `enforced` or `partial` is invalid, however well-formed.
TEST(WindowsReport, AReportClaimingEnforcedOnWindowsIsRefusedByTheValidator) {
  auto plan = sample_plan();
  ASSERT_TRUE(plan);
  windows_run_result ran;
  ran.exited = true;
  ran.observed = plan->contract();
  auto j = nlohmann::json::parse(windows_run_report_json(*plan, ran));
  ASSERT_TRUE(j["controls"].contains("network_deny"));
  EXPECT_TRUE(validate(j.dump()).first);
  j["controls"]["network_deny"]["level"] = "enforced";
  const auto [valid, verdict] = validate(j.dump());
  EXPECT_FALSE(valid) << verdict;
  EXPECT_NE(verdict.find("controls/network_deny: enforced on windows, where no proof run has passed"), std::string::npos)
      << verdict;
}

}  // namespace
}  // namespace cordon::windows

namespace cordon::windows {
namespace {

using namespace testing;

// The default profile on a recorded Windows host: `cmd` is found through the
// Windows reading of its POSIX PATH, and the run's report repeats each of its
// Windows relaxations and each environment replacement as a warning
// (profiles/workspace-write.json, docs/windows-backend.md, "Built-in profiles on Windows").
TEST(WindowsReport, TheDefaultProfilesRelaxationsAreWarnedInTheReport) {
  auto profile = builtin_profile("workspace-write");
  ASSERT_TRUE(profile);
  auto r = compile_windows_plan(*profile, sample_host(), sample_options({"cmd", "/c", "echo"}));
  ASSERT_TRUE(r) << r.failure->message;
  EXPECT_EQ(r.plan->command()->application, "C:\\Windows\\System32\\cmd.exe");
  windows_run_result ran;
  ran.exited = true;
  ran.observed = r.plan->contract();
  const std::string text = windows_run_report_json(*r.plan, ran);
  const auto [valid, verdict] = validate(text);
  EXPECT_TRUE(valid) << verdict << text;
  const auto j = nlohmann::json::parse(text);
  std::vector<std::string> warnings = j["warnings"].get<std::vector<std::string>>();
  const auto has = [&](const std::string& prefix) {
    return std::any_of(warnings.begin(), warnings.end(), [&](const std::string& w) { return w.starts_with(prefix); });
  };
  for (const char* c : {"filesystem_read", "filesystem_write", "filesystem_deny", "network_deny", "environment",
                        "process_tree_cleanup", "privilege", "descriptor_hygiene", "terminal"}) {
    EXPECT_TRUE(has(std::string(c) + ": policy accepts unverified on windows (its content implies enforced)")) << c << text;
  }
  for (const char* w : {"environment: PATH names POSIX directories", "environment: HOME names /tmp",
                        "environment: TMPDIR names /tmp", "environment: TEMP (where Windows programs look for TMPDIR)",
                        "filesystem_deny is unverified: protect_vcs_metadata: deny-write ACEs on the metadata of"}) {
    EXPECT_TRUE(has(w)) << w << "\n" << text;
  }
  expect_no_enforced(j);
}

}  // namespace
}  // namespace cordon::windows
