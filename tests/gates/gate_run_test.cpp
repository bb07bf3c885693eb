// gate_run_test.cpp — `cordon gate run` end to end: real gates, confined,
// with every outcome, the JUnit file and the run record; and a runner that is
// killed or stopped mid-run.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "cli_capture.h"
#include "manifest/digest.h"
#include "gates/manifest.h"
#include "gates/runner.h"
#include "harness.h"

namespace cordon::test {
namespace {

using json = nlohmann::json;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

json gate_entry(const json& record, const std::string& name) {
  for (const auto& g : record.at("gates")) {
    if (g.at("name") == name) return g;
  }
  ADD_FAILURE() << "no gate " << name << " in the record";
  return json::object();
}

// Six kinds of gate, and a needs chain whose first link fails.
constexpr const char* kManifest = R"([[gate]]
name = "pass"
cmd = ["/bin/sh", "-c", "echo hello; echo to-stderr >&2"]
timeout_sec = 30

[[gate]]
name = "fail"
cmd = ["/bin/sh", "-c", "exit 3"]

[[gate]]
name = "slow"
cmd = ["/bin/sleep", "30"]
timeout_sec = 0.5

[[gate]]
name = "needs-a-vm"
cmd = ["/bin/true"]
sandbox_policy = { name = "vm-only", isolation = "vm" }

[[gate]]
name = "windows-only"
cmd = "pwsh -File ./build/test.ps1"
shell = true
env = "windows"
sandbox_policy = "windows-worktree-no-secrets"

[[gate]]
name = "build"
cmd = ["/bin/sh", "-c", "echo broken >&2; exit 1"]

[[gate]]
name = "test"
cmd = ["/bin/true"]
needs = ["build"]

[[gate]]
name = "deploy"
cmd = ["/bin/true"]
needs = ["test"]

[[gate]]
name = "variables"
cmd = ["/bin/sh", "-c", "echo \"$GREETING\" > out.txt; cat out.txt"]
workdir = "sub"
needs = ["pass"]
setenv = { GREETING = "from-the-manifest" }

[[gate]]
name = "tamper"
cmd = ["/bin/sh", "-c", "echo x > ../record/gate/deploy.policy.json"]
workdir = "sub"
)";

TEST(GateRun, EveryOutcomeWithRecordAndJunit) {
  temp_dir ws;
  ws.mkdir("sub");
  std::string manifest = ws.write("gates.toml", kManifest);
  std::string out = ws.path() + "/record", junit = ws.path() + "/junit.xml";
  auto r = run_cli({"gate", "run", manifest, "--out", out, "--junit", junit, "--jobs", "2"}, ws.path());
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;

  json record = json::parse(slurp(out + "/run.json"));
  EXPECT_EQ(record.at("state"), "finished");
  EXPECT_EQ(record.at("manifest").at("digest"), manifest::sha256_digest(slurp(manifest)));
  const std::map<std::string, std::string> expected = {
      {"pass", "passed"},      {"fail", "failed"},   {"slow", "timed_out"},  {"needs-a-vm", "refused"},
      {"windows-only", "not_applicable"}, {"build", "failed"}, {"test", "skipped"}, {"deploy", "skipped"},
      {"variables", "passed"}, {"tamper", "failed"}};
  for (const auto& [name, outcome] : expected) {
    EXPECT_EQ(gate_entry(record, name).at("outcome"), outcome) << name << "\n" << r.out << r.err;
  }
  EXPECT_EQ(gate_entry(record, "fail").at("exit_status"), 3);
  EXPECT_EQ(gate_entry(record, "slow").at("exit_status"), 124);
  EXPECT_LT(gate_entry(record, "slow").at("duration_ms").get<int>(), 10'000);
  json vm = gate_entry(record, "needs-a-vm");
  ASSERT_FALSE(vm.at("blockers").empty());
  EXPECT_EQ(vm.at("blockers")[0].at("control"), "isolation");
  EXPECT_TRUE(vm.at("report").is_null());  // nothing ran
  EXPECT_FALSE(std::ifstream(out + "/gate/needs-a-vm.sandbox.json").good());
  EXPECT_FALSE(std::ifstream(out + "/gate/windows-only.stdout").good());

  // What ran has its report, its output and digests that match the files.
  json pass = gate_entry(record, "pass");
  EXPECT_EQ(pass.at("exit_status"), 0);
  EXPECT_EQ(slurp(out + "/gate/pass.stdout"), "hello\n");
  EXPECT_EQ(slurp(out + "/gate/pass.stderr"), "to-stderr\n");
  std::string report_text = slurp(out + "/gate/pass.sandbox.json");
  EXPECT_EQ(pass.at("report_digest"), manifest::sha256_digest(report_text));
  json report = json::parse(report_text);
  EXPECT_EQ(report.at("outcome"), "completed");
  EXPECT_EQ(report.at("policy").at("digest"), pass.at("policy").at("digest"));
  EXPECT_EQ(report.at("limits").at("timeout_ms"), 30000);  // timeout_sec reached the policy
  EXPECT_EQ(slurp(out + "/gate/variables.stdout"), "from-the-manifest\n");
  EXPECT_EQ(slurp(ws.path() + "/sub/out.txt"), "from-the-manifest\n");  // the workspace is writable

  // A gate cannot edit the record: the directory is denied to it.
  EXPECT_NE(slurp(out + "/gate/tamper.stderr").find("ermission denied"), std::string::npos)
      << slurp(out + "/gate/tamper.stderr");
  EXPECT_NE(slurp(out + "/gate/deploy.policy.json"), "x\n");

  // JUnit: one testcase per gate; none of the non-passes is hidden.
  std::string xml = slurp(junit);
  EXPECT_NE(xml.find("tests=\"10\" failures=\"4\" errors=\"1\" skipped=\"3\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<testcase classname=\"cordon.gate\" name=\"slow\""), std::string::npos);
  EXPECT_NE(xml.find("<failure type=\"timed_out\""), std::string::npos);
  EXPECT_NE(xml.find("<error type=\"refused\""), std::string::npos);
  EXPECT_NE(xml.find("<skipped message=\"not_applicable"), std::string::npos);

  // Plain lines: each state change, with the outcome.
  EXPECT_NE(r.out.find("gate slow timed_out"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gate needs-a-vm refused"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\033["), std::string::npos);  // not a terminal: no colour
}

TEST(GateRun, OnlyPassingGatesExitZeroAndOnlySelects) {
  temp_dir ws;
  ws.mkdir("sub");
  std::string manifest = ws.write("gates.toml", kManifest);
  auto r = run_cli({"gate", "run", manifest, "--out", ws.path() + "/rec", "--only", "variables"}, ws.path());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  json record = json::parse(slurp(ws.path() + "/rec/run.json"));
  ASSERT_EQ(record.at("gates").size(), 2u);  // variables and the gate it needs
  EXPECT_EQ(gate_entry(record, "pass").at("outcome"), "passed");
}

// A gate that exits 0 but leaves a deferred-execution finding (a nested
// repository with core.fsmonitor) does not pass: it is failed, naming the
// finding, and the run exits 1. With `accept_findings = true` the same gate
// passes, and its findings are still in run.json, on the console and in JUnit.
TEST(GateRun, AGateWithFindingsDoesNotPassSilently) {
  temp_dir ws;
  const std::string gate_body = R"(
cmd = ["/bin/sh", "-c", "git init -q sub && git -C sub config core.fsmonitor 'touch /tmp/pwned' && echo made"]
)";
  std::string manifest = ws.write("gates.toml", "[[gate]]\nname = \"plain\"" + gate_body);
  auto r = run_cli({"gate", "run", manifest, "--out", ws.path() + "/rec", "--junit", ws.path() + "/j.xml"},
                   ws.path());
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  json record = json::parse(slurp(ws.path() + "/rec/run.json"));
  json plain = gate_entry(record, "plain");
  EXPECT_EQ(plain.at("outcome"), "failed") << plain.dump(2);
  EXPECT_EQ(plain.at("exit_status"), 0);
  const std::string finding = "executable_config " + ws.path() + "/sub/.git/config core.fsmonitor";
  EXPECT_NE(plain.at("findings").dump().find(finding), std::string::npos) << plain.dump(2);
  EXPECT_NE(plain.at("detail").get<std::string>().find("finding"), std::string::npos) << plain.dump(2);
  EXPECT_NE(r.out.find("gate plain failed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(finding), std::string::npos) << r.out;
  std::string xml = slurp(ws.path() + "/j.xml");
  EXPECT_NE(xml.find("<failure type=\"failed\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<property name=\"finding\" value=\"" + finding), std::string::npos) << xml;

  std::filesystem::remove_all(ws.path() + "/sub");
  manifest = ws.write("gates.toml", "[[gate]]\nname = \"accepted\"\naccept_findings = true" + gate_body);
  r = run_cli({"gate", "run", manifest, "--out", ws.path() + "/rec2", "--junit", ws.path() + "/j2.xml"}, ws.path());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  record = json::parse(slurp(ws.path() + "/rec2/run.json"));
  json accepted = gate_entry(record, "accepted");
  EXPECT_EQ(accepted.at("outcome"), "passed") << accepted.dump(2);
  EXPECT_NE(accepted.at("findings").dump().find(finding), std::string::npos) << accepted.dump(2);
  EXPECT_NE(r.out.find(finding), std::string::npos) << r.out;
  EXPECT_NE(slurp(ws.path() + "/j2.xml").find("<property name=\"finding\""), std::string::npos);
}

TEST(GateRun, ParallelGatesHaveTheirOwnTmp) {
  temp_dir ws;
  std::string name = "cordon-gate-shared-" + std::to_string(::getpid());
  // Each gate writes its name to /tmp, says so in the workspace and reads
  // /tmp back only once both have written (a rendezvous, polled within
  // 20 s): with one /tmp shared, one of them would read the other's name.
  std::string body = "echo $0 > /tmp/" + name + "; touch wrote-$0; i=0; while [ $i -lt 400 ]; do "
                     "[ -e wrote-a ] && [ -e wrote-b ] && break; sleep 0.05; i=$((i+1)); done; cat /tmp/" + name;
  std::string manifest = ws.write("gates.toml", "[[gate]]\nname = \"a\"\ncmd = [\"/bin/sh\", \"-c\", \"" + body +
                                                    "\", \"a\"]\n[[gate]]\nname = \"b\"\ncmd = [\"/bin/sh\", \"-c\", \"" +
                                                    body + "\", \"b\"]\n");
  auto r = run_cli({"gate", "run", manifest, "--out", ws.path() + "/rec", "--jobs", "2"}, ws.path());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(slurp(ws.path() + "/rec/gate/a.stdout"), "a\n");
  EXPECT_EQ(slurp(ws.path() + "/rec/gate/b.stdout"), "b\n");
  EXPECT_FALSE(std::ifstream("/tmp/" + name).good());  // nothing reached the host's /tmp
  json record = json::parse(slurp(ws.path() + "/rec/run.json"));
  json a = gate_entry(record, "a"), b = gate_entry(record, "b");
  EXPECT_TRUE(std::ifstream(ws.path() + "/wrote-a").good() && std::ifstream(ws.path() + "/wrote-b").good());
  // They did overlap: b started before a finished.
  EXPECT_LT(b.at("started_ms").get<int>(), a.at("started_ms").get<int>() + a.at("duration_ms").get<int>());
}

TEST(GateRun, BadManifestRunsNothing) {
  temp_dir ws;
  std::string manifest = ws.write("gates.toml", "[[gate]]\nname = \"a\"\ncmd = [\"/bin/true\"]\ncolour = 1\n");
  auto r = run_cli({"gate", "run", manifest, "--out", ws.path() + "/rec"}, ws.path());
  EXPECT_EQ(r.exit_code, 125);
  EXPECT_NE(r.err.find("gates.toml:4: unknown key 'colour'"), std::string::npos) << r.err;
  EXPECT_FALSE(std::ifstream(ws.path() + "/rec/run.json").good());
}

TEST(GateRun, AManifestThatCannotBeReadIsOneLineWithoutALineNumber) {
  temp_dir ws;
  auto r = run_cli({"gate", "run", "gatess.toml"}, ws.path());
  EXPECT_EQ(r.exit_code, 125);
  EXPECT_EQ(r.err, "cordon: invalid_manifest: " + ws.path() + "/gatess.toml: cannot read: No such file or directory\n");
  std::string empty = ws.write("empty.toml", "# no gates yet\n");
  auto none = run_cli({"gate", "run", empty}, ws.path());
  EXPECT_EQ(none.exit_code, 125);
  EXPECT_EQ(none.err, "cordon: invalid_manifest: " + empty + ": no [[gate]] in the manifest\n");
}

constexpr const char* kSlowManifest = R"([[gate]]
name = "quick"
cmd = ["/bin/true"]

[[gate]]
name = "hangs"
cmd = ["/bin/sh", "-c", "exec /bin/sleep 41.%s"]

[[gate]]
name = "after"
cmd = ["/bin/true"]
needs = ["hangs"]
)";

// Starts `cordon gate run` in the background; returns its pid.
pid_t start_runner(const std::string& manifest, const std::string& out, const std::string& cwd) {
  pid_t pid = ::fork();
  if (pid == 0) {
    int null = ::open("/dev/null", O_RDWR);
    ::dup2(null, 0), ::dup2(null, 1), ::dup2(null, 2);
    if (::chdir(cwd.c_str()) != 0) ::_exit(126);
    std::string cli = cordon_cli();
    ::execl(cli.c_str(), "cordon", "gate", "run", manifest.c_str(), "--out", out.c_str(), "--jobs", "2", nullptr);
    ::_exit(127);
  }
  return pid;
}

// Waits until run.json says the gate is running (or 20 s passed).
bool wait_running(const std::string& record, const std::string& gate) {
  for (int i = 0; i < 400; ++i) {
    std::string text = slurp(record);
    json j = json::parse(text, nullptr, false);
    if (j.is_object() && gate_entry(j, gate).value("phase", "") == "running") return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// Runs kSlowManifest until its gate "hangs" is running, sends `sig` to the
// runner and returns the runner's wait status. The sleep carries `marker`.
int stop_runner_mid_run(const temp_dir& ws, const std::string& marker, int sig) {
  char text[1024];
  std::snprintf(text, sizeof text, kSlowManifest, marker.c_str());
  std::string manifest = ws.write("gates.toml", text);
  std::string out = ws.path() + "/rec";
  pid_t runner = start_runner(manifest, out, ws.path());
  bool running = wait_running(out + "/run.json", "hangs");
  EXPECT_TRUE(running) << "the gate never started";
  EXPECT_EQ(::kill(runner, running ? sig : SIGKILL), 0);
  int status = 0;
  EXPECT_EQ(::waitpid(runner, &status, 0), runner);
  return status;
}

TEST(GateRun, KilledRunnerLeavesARecordThatMarksTheRunningGateInterrupted) {
  temp_dir ws;
  std::string marker = std::to_string(::getpid());
  std::string out = ws.path() + "/rec";
  stop_runner_mid_run(ws, marker, SIGKILL);

  json record = json::parse(slurp(out + "/run.json"));  // parses: it was written atomically
  EXPECT_EQ(record.at("state"), "running");
  json hangs = gate_entry(record, "hangs");
  EXPECT_EQ(hangs.at("phase"), "running");
  EXPECT_EQ(hangs.at("outcome"), "interrupted");
  EXPECT_EQ(gate_entry(record, "after").at("outcome"), "interrupted");
  EXPECT_EQ(gate_entry(record, "after").at("phase"), "pending");
  EXPECT_EQ(record.at("summary").at("passed"), gate_entry(record, "quick").at("outcome") == "passed" ? 1 : 0);
  // The gate's tree died with the runner (PR_SET_PDEATHSIG on its cordon run).
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    gone = !process_with_marker_alive("41." + marker);
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(gone) << "the gate's sleep outlived the killed runner";
}

TEST(GateRun, SigtermStopsTheGatesAndExits143) {
  temp_dir ws;
  std::string marker = std::to_string(::getpid()) + "1";
  std::string out = ws.path() + "/rec";
  int status = stop_runner_mid_run(ws, marker, SIGTERM);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 143);
  json record = json::parse(slurp(out + "/run.json"));
  EXPECT_EQ(record.at("state"), "interrupted");
  json hangs = gate_entry(record, "hangs");
  EXPECT_EQ(hangs.at("phase"), "finished");
  EXPECT_EQ(hangs.at("outcome"), "interrupted");
  EXPECT_EQ(gate_entry(record, "after").at("outcome"), "interrupted");
  EXPECT_FALSE(process_with_marker_alive("41." + marker));
}

// The report is read back from a file: one whose fields have the wrong types
// fails the gate, it does not throw out of the runner (which would leave the
// record at "running" and kill the other gates with it).
TEST(GateRun, AMalformedReportFailsTheGateWithoutAnException) {
  for (const char* report : {R"({"outcome": 5})", R"({"outcome": "completed", "controls": {"memory": {"level": 3}}})",
                             R"({"outcome": "completed", "policy": {"digest": ["x"]}})"}) {
    temp_dir ws;
    // A stand-in for `cordon run`: writes `report` to --report and exits 0.
    std::string launcher = ws.write("fake-cordon", std::string("#!/bin/sh\nwhile [ $# -gt 0 ]; do\n"
                                                               "  if [ \"$1\" = --report ]; then printf '%s' '") +
                                                       report + "' > \"$2\"; fi\n  shift\ndone\nexit 0\n");
    ASSERT_EQ(::chmod(launcher.c_str(), 0755), 0);
    std::string manifest_path = ws.write("gates.toml", "[[gate]]\nname = \"a\"\ncmd = [\"/bin/true\"]\n");
    auto parsed = gates::parse_manifest(slurp(manifest_path), manifest_path);
    ASSERT_TRUE(parsed.manifest) << (parsed.errors.empty() ? "" : parsed.errors.front().message);
    gates::run_settings settings;
    settings.out_dir = ws.path() + "/rec";
    settings.workspace = ws.path();
    settings.cordon_exe = launcher;
    std::ostringstream lines, errors;
    int status = -1;
    EXPECT_NO_THROW(status = gates::run_gates(*parsed.manifest, settings, lines, errors)) << report;
    EXPECT_EQ(status, gates::gate_exit_not_all_passed) << report << "\n" << lines.str() << errors.str();
    if (status == gates::gate_exit_not_all_passed) {
      json record = json::parse(slurp(settings.out_dir + "/run.json"));
      EXPECT_EQ(record.at("state"), "finished");
      EXPECT_EQ(gate_entry(record, "a").at("outcome"), "failed") << report;
    }
  }
}

}  // namespace
}  // namespace cordon::test
