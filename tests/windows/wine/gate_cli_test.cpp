// `cordon.exe gate run` and `cordon.exe sidecar` under wine: a manifest with
// `env = "windows"` gates runs through the Windows backend and leaves a run
// record and per-gate reports in the shared format (scripts/test-windows.sh
// validates the copies left in CORDON_WINE_REPORTS); a gate whose policy this
// host cannot enforce is refused with a refused report; the sidecar command
// is refused with a typed error and runs nothing.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "cli_support.h"

namespace cordon::windows {
namespace {

using namespace testing;
using json = nlohmann::json;

// A gate table running the wine child with ARGS under `policy`.
std::string gate(const std::string& name, const std::string& policy, const std::string& args,
                 const std::string& extra = "") {
  return "[[gate]]\nname = \"" + name + "\"\ncmd = ['" + child_exe() + "', " + args + "]\nenv = \"windows\"\n" +
         "sandbox_policy = \"" + policy + "\"\n" + extra + "\n";
}

// The plumbing policy (wine_support.h) with the workspace readable: the gate
// starts there.
std::string write_gate_policy(const temp_dir& dir) {
  sandbox_policy p = plumbing_policy();
  p.filesystem.readable.push_back("{workspace}");
  return write_policy(dir, p);
}

json read_json(const std::string& path) { return json::parse(read_text(path), nullptr, false); }

const json& gate_entry(const json& record, const std::string& name) {
  static const json none;
  for (const auto& g : record["gates"]) {
    if (g["name"] == name) return g;
  }
  return none;
}

TEST(WindowsGateRun, AWindowsGateRunsAndLeavesARecordAndAReportInTheSharedFormat) {
  temp_dir dir;
  write_gate_policy(dir);
  write_text(dir.file("gates.toml"), gate("win", "policy.json", "'argv', 'gate-hello'"));
  const auto r = run_cordon("gate run \"" + dir.file("gates.toml") + "\" --out \"" + dir.file("out") + "\"");
  ASSERT_EQ(r.exit_code, 0u) << r.out;
  const json record = read_json(dir.file("out\\run.json"));
  ASSERT_TRUE(record.is_object()) << r.out;
  EXPECT_EQ(record["kind"], "cordon-gate-run");
  EXPECT_EQ(record["host_os"], "windows");
  EXPECT_EQ(record["backend"], "windows-appcontainer");
  EXPECT_EQ(record["state"], "finished");
  const json& win = gate_entry(record, "win");
  EXPECT_EQ(win["outcome"], "passed") << win.dump();
  EXPECT_EQ(win["exit_status"], 0);
  EXPECT_EQ(win["report"], "gate/win.sandbox.json");
  EXPECT_TRUE(win["policy"]["digest"].is_string());
  EXPECT_NE(read_text(dir.file("out\\gate\\win.stdout")).find("gate-hello"), std::string::npos);
  const std::string report_text = read_text(dir.file("out\\gate\\win.sandbox.json"));
  const json report = json::parse(report_text, nullptr, false);
  ASSERT_TRUE(report.is_object());
  EXPECT_EQ(report["outcome"], "completed");
  EXPECT_EQ(report["exit"], json({{"code", 0}}));
  for (const auto& [name, c] : report["controls"].items()) EXPECT_NE(c["level"], "enforced") << name;
  // The record directory lies in the workspace: it is denied to the gate.
  const json policy = read_json(dir.file("out\\gate\\win.policy.json"));
  EXPECT_EQ(policy["filesystem"]["denied"].back(), policy_path(dir.file("out")));
  write_text(report_path(dir, "gate-run.json"), report_text);
}

TEST(WindowsGateRun, ARefusedGateWritesARefusedReportRunsNothingAndSkipsWhatNeedsIt) {
  temp_dir dir;
  write_gate_policy(dir);
  // read-only is refused on every Windows host (full reads, full_read_unsupported).
  write_text(dir.file("gates.toml"), gate("refused", "read-only", "'write', '" + dir.file("ran-refused") + "'") +
                                          gate("after", "policy.json", "'write', '" + dir.file("ran-after") + "'",
                                               "needs = [\"refused\"]\n") +
                                          "[[gate]]\nname = \"lin\"\ncmd = [\"true\"]\nenv = \"linux\"\n");
  const auto r = run_cordon("gate run \"" + dir.file("gates.toml") + "\" --out \"" + dir.file("out") + "\" --junit \"" +
                            dir.file("junit.xml") + "\"");
  EXPECT_EQ(r.exit_code, 1u) << r.out;
  EXPECT_FALSE(exists(dir.file("ran-refused"))) << "a refused gate ran";
  EXPECT_FALSE(exists(dir.file("ran-after"))) << "a gate whose need was refused ran";
  const json record = read_json(dir.file("out\\run.json"));
  ASSERT_TRUE(record.is_object()) << r.out;
  const json& refused = gate_entry(record, "refused");
  EXPECT_EQ(refused["outcome"], "refused");
  EXPECT_FALSE(refused["blockers"].empty());
  EXPECT_EQ(refused["report"], "gate/refused.sandbox.json");
  EXPECT_TRUE(refused["stdout"].is_null());
  EXPECT_EQ(gate_entry(record, "after")["outcome"], "skipped");
  EXPECT_EQ(gate_entry(record, "lin")["outcome"], "not_applicable");
  const std::string report_text = read_text(dir.file("out\\gate\\refused.sandbox.json"));
  const json report = json::parse(report_text, nullptr, false);
  ASSERT_TRUE(report.is_object());
  EXPECT_EQ(report["outcome"], "refused");
  EXPECT_EQ(report["policy"]["name"], "read-only");
  EXPECT_FALSE(report.contains("exit"));
  EXPECT_NE(read_text(dir.file("junit.xml")).find("<error type=\"refused\""), std::string::npos);
  write_text(report_path(dir, "gate-refused.json"), report_text);
}

TEST(WindowsGateRun, AWorkdirOutsideTheWorkspaceStopsTheRunBeforeAnyGate) {
  temp_dir dir;
  CreateDirectoryW(win32::widen(dir.file("ws")).c_str(), nullptr);
  write_gate_policy(dir);
  write_text(dir.file("gates.toml"), gate("win", "policy.json", "'write', '" + dir.file("ran") + "'"));
  const auto r = run_cordon("gate run \"" + dir.file("gates.toml") + "\" --workspace \"" + dir.file("ws") +
                            "\" --out \"" + dir.file("out") + "\"");
  EXPECT_EQ(r.exit_code, 125u) << r.out;
  EXPECT_NE(r.out.find("outside the workspace"), std::string::npos) << r.out;
  EXPECT_FALSE(exists(dir.file("ran")));
}

// A policy file named by an absolute Windows path (drive and backslashes,
// drive and slashes) is that file, wherever the manifest is; one relative to
// the current drive's root is refused before any gate runs.
TEST(WindowsGateRun, APolicyFileGivenAsAnAbsoluteWindowsPathIsThatFile) {
  temp_dir dir;
  const std::string ws = dir.file("ws");
  CreateDirectoryW(win32::widen(ws).c_str(), nullptr);
  const std::string policy = write_gate_policy(dir);  // beside ws, not in the manifest's directory
  std::string slashed = policy;
  std::replace(slashed.begin(), slashed.end(), '\\', '/');
  for (const std::string& ref : {policy, slashed}) {
    SCOPED_TRACE(ref);
    write_text(ws + "\\gates.toml", "[[gate]]\nname = \"abs\"\ncmd = ['" + child_exe() +
                                        "', 'argv', 'abs-ok']\nenv = \"windows\"\nsandbox_policy = '" + ref + "'\n");
    const auto r = run_cordon("gate run \"" + ws + "\\gates.toml\" --out \"" + dir.file("out") + "\"");
    EXPECT_EQ(r.exit_code, 0u) << r.out;
    EXPECT_NE(read_text(dir.file("out\\gate\\abs.stdout")).find("abs-ok"), std::string::npos) << r.out;
  }
  const std::string rooted = policy.substr(2);  // without its drive: relative to the current drive's root
  write_text(ws + "\\gates.toml", "[[gate]]\nname = \"rooted\"\ncmd = ['" + child_exe() + "', 'write', '" +
                                      dir.file("ran") + "']\nenv = \"windows\"\nsandbox_policy = '" + rooted + "'\n");
  const auto r = run_cordon("gate run \"" + ws + "\\gates.toml\" --out \"" + dir.file("out2") + "\"");
  EXPECT_EQ(r.exit_code, 125u) << r.out;
  EXPECT_NE(r.out.find("usage_error"), std::string::npos) << r.out;
  EXPECT_FALSE(exists(dir.file("ran")));
}

TEST(WindowsSidecar, IsRefusedWithATypedErrorAndRunsNothing) {
  temp_dir dir;
  const auto r = run_cordon("sidecar --protocol raw -- \"" + child_exe() + "\" write \"" + dir.file("ran") + "\"");
  EXPECT_EQ(r.exit_code, 125u) << r.out;
  EXPECT_NE(r.out.find("cordon: backend_unavailable: "), std::string::npos) << r.out;
  EXPECT_FALSE(exists(dir.file("ran")));
}

}  // namespace
}  // namespace cordon::windows
