// What a newcomer meets in the first hour (issue 22): the summary at the end
// of a run, `cordon report show`, the order of the report's keys, and every
// message that used to mislead. Each hint is checked to name a flag, file or
// field that exists: the flag by using it, the field by the policy docs.
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli_capture.h"
#include "harness.h"

namespace cordon::test {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The lines of `text` that start with `prefix`.
std::vector<std::string> lines_starting(const std::string& text, const std::string& prefix) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) == 0) out.push_back(line);
  }
  return out;
}

TEST(FirstHour, SummaryOnRequestSaysWhatWasEnforcedWhatWasNotViolationsAndExit) {
  temp_dir ws;
  auto r = run_cordon({"--summary"}, {"python3", "-c", "import socket\ntry:\n socket.socket(socket.AF_PACKET, socket.SOCK_RAW)\nexcept OSError:\n pass"},
                      ws.path());
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(lines_starting(r.err, "cordon: summary: completed, exit 0 after ").size(), 1U) << r.err;
  EXPECT_TRUE(contains(r.err, " (policy workspace-write)\n")) << r.err;
  EXPECT_EQ(lines_starting(r.err, "cordon:   enforced    filesystem_read, filesystem_write, filesystem_deny, ").size(), 1U)
      << r.err;
  // Named unix sockets are checked by the supervisor under the default profile (denied network).
  EXPECT_EQ(lines_starting(r.err, "cordon:   not fully   unix_sockets partial: ").size(), 0U) << r.err;
  EXPECT_EQ(lines_starting(r.err, "cordon:   not asked   network_filter, process_count, memory, cpu, timeout").size(), 1U)
      << r.err;
  EXPECT_EQ(lines_starting(r.err, "cordon:   isolation   container (").size(), 1U) << r.err;
  EXPECT_TRUE(contains(r.err, "; the policy requires at least os_sandbox\n")) << r.err;
  EXPECT_EQ(lines_starting(r.err, "cordon:   violations  1 kind(s) stopped: socket(AF_PACKET) (network_socket) x1").size(),
            1U)
      << r.err;
  EXPECT_EQ(lines_starting(r.err, "cordon:   report      /tmp/").size(), 1U) << r.err;
  EXPECT_TRUE(contains(r.err, "(cordon report show /tmp/")) << r.err;
}

TEST(FirstHour, NoSummaryWhenStderrIsNotATerminalOrWhenTurnedOff) {
  temp_dir ws;
  auto plain = run_cordon({}, {"true"}, ws.path());
  EXPECT_EQ(plain.exit_code, 0);
  EXPECT_EQ(plain.err, "");
  auto off = run_cordon({"--no-summary"}, {"true"}, ws.path());
  EXPECT_EQ(off.exit_code, 0);
  EXPECT_EQ(off.err, "");
  auto both = run_cordon({"--summary", "--no-summary"}, {"true"}, ws.path());
  EXPECT_EQ(both.exit_code, 125);
  EXPECT_TRUE(contains(both.err, "cordon: usage_error: --summary excludes --no-summary")) << both.err;
}

TEST(FirstHour, ReportKeysComeInReadingOrderAndStillMatchTheSchema) {
  temp_dir ws, dir;
  const std::string file = dir.path() + "/r.json";
  auto r = run_cli({"run", "--report", file, "--", "true"}, ws.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string text = read_text(file);
  EXPECT_EQ(text.rfind("{\n  \"outcome\": \"completed\",\n  \"exit\": {", 0), 0U) << text.substr(0, 200);
  EXPECT_LT(text.find("\"started_at\""), text.find("\"finished_at\""));
  EXPECT_LT(text.find("\"controls\""), text.find("\"mounts\""));
  EXPECT_EQ(report_schema_verdict(nlohmann::json::parse(text)), "valid");
}

TEST(FirstHour, ReportShowPrintsTablesForACompletedRun) {
  temp_dir ws, dir;
  const std::string file = dir.path() + "/r.json";
  ASSERT_EQ(run_cli({"run", "--report", file, "--", "sh", "-c", "exit 3"}, ws.path()).exit_code, 3);
  auto shown = run_cli({"report", "show", file}, "/");
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_EQ(shown.err, "");
  EXPECT_EQ(lines_starting(shown.out, "outcome:    completed, exit 3 after ").size(), 1U) << shown.out;
  EXPECT_EQ(lines_starting(shown.out, "command:    sh -c 'exit 3'").size(), 1U) << shown.out;
  EXPECT_EQ(lines_starting(shown.out, "policy:     workspace-write sha256:").size(), 1U) << shown.out;
  EXPECT_EQ(lines_starting(shown.out, "isolation:  container (").size(), 1U) << shown.out;
  EXPECT_EQ(lines_starting(shown.out, "CONTROL               LEVEL           MECHANISM AND WHY").size(), 1U)
      << shown.out;
  EXPECT_EQ(lines_starting(shown.out, "filesystem_write      enforced        mount namespace").size(), 1U) << shown.out;
  EXPECT_EQ(lines_starting(shown.out, "levels: enforced = the mechanism stops it;").size(), 1U) << shown.out;
  EXPECT_EQ(lines_starting(shown.out, "violations: none").size(), 1U) << shown.out;
  EXPECT_EQ(lines_starting(shown.out, "mounts, in order:").size(), 1U) << shown.out;
}

TEST(FirstHour, ReportShowPrintsTheBlockersOfARefusedRunAndRefusesWhatIsNotAReport) {
  temp_dir ws, dir;
  const std::string file = dir.path() + "/r.json";
  const std::string policy = dir.write("p.json", R"({"schema_version": 1, "network": {"mode": "unrestricted"}, "enforcement": {"unix_sockets": "enforced"}})");
  ASSERT_EQ(run_cli({"run", "--report", file, "--policy", policy, "--", "true"}, ws.path()).exit_code, 125);
  auto shown = run_cli({"report", "show", file}, "/");
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_EQ(lines_starting(shown.out, "outcome:    refused: nothing ran").size(), 1U) << shown.out;
  EXPECT_EQ(lines_starting(shown.out, "BLOCKER       REQUIRED  AVAILABLE  WHY").size(), 1U) << shown.out;
  EXPECT_EQ(lines_starting(shown.out, "unix_sockets  enforced  partial    ").size(), 1U) << shown.out;

  auto not_json = run_cli({"report", "show", policy + "x"}, "/");
  EXPECT_EQ(not_json.exit_code, 125);
  EXPECT_EQ(not_json.err, "cordon: io_error: " + policy + "x: cannot open the report\n");
  const std::string garbage = dir.write("g.json", "not json");
  auto bad = run_cli({"report", "show", garbage}, "/");
  EXPECT_EQ(bad.exit_code, 125);
  EXPECT_EQ(bad.err, "cordon: parse_error: " + garbage + ": not a JSON object\n");
  auto policy_file = run_cli({"report", "show", policy}, "/");
  EXPECT_EQ(policy_file.exit_code, 125);
  EXPECT_EQ(policy_file.err, "cordon: invalid_report: " + policy +
                                 ": /schema: not a schema-1 run report (docs/report.md)\n");
}

TEST(FirstHour, UnknownWordsAreNamedWithTheChoices) {
  auto typo = run_cli({"rnu"}, "/");
  EXPECT_EQ(typo.exit_code, 125);
  EXPECT_EQ(typo.err,
            "cordon: usage_error: unknown command 'rnu' (choices: run, probe, profile, policy, report, exec, audit, rules, session, gate, sidecar, fs, mcp; see cordon "
            "--help)\n");
  auto bare = run_cli({"profile"}, "/");
  EXPECT_EQ(bare.exit_code, 125);
  EXPECT_EQ(bare.err, "cordon: usage_error: cordon profile needs a subcommand: list, show (see cordon profile --help)\n");
  auto sub = run_cli({"policy", "check", "x.json"}, "/");
  EXPECT_EQ(sub.exit_code, 125);
  EXPECT_EQ(sub.err,
            "cordon: usage_error: unknown subcommand 'check' for cordon policy (choices: validate, normalize, explain; "
            "see cordon policy --help)\n");
  auto help = run_cli({"unknown", "--help"}, "/");
  EXPECT_EQ(help.exit_code, 125);
  EXPECT_EQ(help.out, "");
  auto profile_help = run_cli({"profile", "--help"}, "/");
  EXPECT_EQ(profile_help.exit_code, 0);
  EXPECT_TRUE(contains(profile_help.out, "Usage: cordon profile")) << profile_help.out;
}

TEST(FirstHour, AUsageErrorPointsToTheHelpThatDocumentsTheFlagAndUsageSaysCordon) {
  temp_dir ws;
  auto net = run_cli({"run", "--net", "some", "--", "true"}, ws.path());
  EXPECT_EQ(net.exit_code, 125);
  EXPECT_EQ(net.err, "cordon: usage_error: --net: must be none or any (see cordon run --help)\n");
  auto help = run_cli({"run", "--help"}, ws.path());
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_TRUE(contains(help.out, "Usage: cordon run [OPTIONS] command...")) << help.out;
  EXPECT_TRUE(contains(help.out, "  --net none|any ")) << help.out;
  EXPECT_TRUE(contains(help.out, "  --cgroup-parent DIR ")) << help.out;
  EXPECT_TRUE(contains(help.out, "  --summary ")) << help.out;
  EXPECT_TRUE(contains(help.out, "  --no-summary ")) << help.out;
  EXPECT_FALSE(contains(help.out, cordon_cli())) << help.out;
}

TEST(FirstHour, ARwOrRoPathThatDoesNotExistIsRefusedByName) {
  temp_dir ws;
  for (const char* flag : {"--rw", "--ro"}) {
    auto r = run_cordon({flag, "no-such-dir"}, {"true"}, ws.path());
    EXPECT_EQ(r.exit_code, 125);
    EXPECT_EQ(r.err, std::string("cordon: usage_error: ") + flag + " no-such-dir: " + ws.path() +
                         "/no-such-dir does not exist; create it first or check the spelling (a path that does not "
                         "exist would give no access)\n");
  }
  ws.mkdir("cache");
  EXPECT_EQ(run_cordon({"--rw", "cache"}, {"true"}, ws.path()).exit_code, 0);
}

TEST(FirstHour, WorkspaceRefusalsStateTrueReasons) {
  temp_dir ws;
  auto tmp = run_cordon({"--profile", "read-only", "--workspace", "/tmp"}, {"true"}, ws.path());
  EXPECT_EQ(tmp.exit_code, 125);
  EXPECT_EQ(tmp.err,
            "cordon: usage_error: the workspace /tmp is a temporary directory shared by every user and program, not a "
            "project: the policy's workspace access ({workspace}) would extend to all of it; run from a project "
            "directory or pass --workspace DIR\n");
  auto root = run_cordon({"--workspace", "/root"}, {"true"}, ws.path(), {"HOME=/nonexistent-home"});
  EXPECT_EQ(root.exit_code, 125);
  EXPECT_TRUE(contains(root.err, "the workspace /root is root's home directory (it holds root's credentials and "
                                 "start-up files), not a project"))
      << root.err;
  auto etc = run_cordon({"--workspace", "/etc"}, {"true"}, ws.path());
  EXPECT_TRUE(contains(etc.err, "the workspace /etc is a system directory, not a project")) << etc.err;
}

TEST(FirstHour, AMinimalPolicyIsToldToAddTheWorkspace) {
  temp_dir ws, dir;
  auto r = run_cordon({"--policy", dir.write("p.json", R"({"schema_version": 1})")}, {"true"}, ws.path());
  EXPECT_EQ(r.exit_code, 125);
  EXPECT_TRUE(contains(r.err, "cordon: launch_failed: working directory " + ws.path() +
                                  " is not visible inside the sandbox (add \"{workspace}\" to filesystem.readable or "
                                  "filesystem.writable, or run from a directory the policy makes visible)"))
      << r.err;
  // The hint names real fields: following it works.
  auto fixed = run_cordon(
      {"--policy", dir.write("q.json", R"({"schema_version": 1, "filesystem": {"readable": ["{workspace}"]}})")},
      {"/bin/true"}, ws.path());
  EXPECT_EQ(fixed.exit_code, 0) << fixed.all();
}

TEST(FirstHour, ALimitRefusalNamesFlagsThatExistAndTheyWork) {
  temp_dir ws;
  // A cgroup parent that is no cgroup: the limit falls back to an rlimit
  // (partial) for root and for a normal user alike.
  const std::vector<std::string> limit = {"--memory", "1G", "--accept", "memory=enforced", "--cgroup-parent",
                                          ws.path()};
  auto refused = run_cordon(limit, {"true"}, ws.path());
  EXPECT_EQ(refused.exit_code, 125);
  EXPECT_TRUE(contains(refused.err, "cordon: blocker: memory: required enforced, available partial: ")) << refused.err;
  EXPECT_TRUE(contains(refused.err,
                       "cordon: hint: --accept memory=partial runs with the partial level (listed in the report's "
                       "warnings); --cgroup-parent DIR (a delegated cgroup v2 directory) makes the limit tree-wide\n"))
      << refused.err;
  auto accepted = run_cordon({"--memory", "1G", "--accept", "memory=partial", "--cgroup-parent", ws.path()}, {"true"},
                             ws.path());
  EXPECT_EQ(accepted.exit_code, 0) << accepted.all();
  EXPECT_EQ(accepted.report["controls"]["memory"]["level"], "partial");
}

TEST(FirstHour, FsRefusalHintNamesThePolicyEntryNotRunFlagsItLacks) {
  // `cordon fs` has no --accept or --cgroup-parent: its hint names the policy's "enforcement" entry.
  // With the host's network, named unix sockets stay connectable: `partial` for root and a normal user alike.
  temp_dir dir, ws;
  const std::string strict = dir.write("p.json", R"({"schema_version": 1, "network": {"mode": "unrestricted"},
      "filesystem": {"writable": ["{workspace}"]}, "enforcement": {"unix_sockets": "enforced"}})");
  auto refused = run_cli({"fs", "--policy", strict, "--workspace", ws.path()}, ws.path());
  EXPECT_EQ(refused.exit_code, 125);
  EXPECT_TRUE(contains(refused.err, "cordon: blocker: unix_sockets: required enforced, available partial: "))
      << refused.err;
  EXPECT_TRUE(contains(refused.err, "cordon: hint: \"enforcement\": {\"unix_sockets\": \"partial\"} in the policy runs "
                                    "with the partial level (docs/policy.md, \"Enforcement requirements\")\n"))
      << refused.err;
  EXPECT_FALSE(contains(refused.err, "--accept")) << refused.err;
  EXPECT_FALSE(contains(refused.err, "hint: --cgroup-parent")) << refused.err;
  // Following the hint works: the worker starts, sees the end of its input and reports.
  const std::string relaxed = dir.write("q.json", R"({"schema_version": 1, "network": {"mode": "unrestricted"},
      "filesystem": {"writable": ["{workspace}"]}, "enforcement": {"unix_sockets": "partial"}})");
  auto accepted = run_cli({"fs", "--policy", relaxed, "--workspace", ws.path()}, ws.path());
  EXPECT_EQ(accepted.exit_code, 0) << accepted.err;
  EXPECT_TRUE(contains(accepted.out, "{\"report\":")) << accepted.out;
}

TEST(FirstHour, EveryCommandANewcomerTriesListsItsExitStatusInItsHelp) {
  // The man pages are generated from the same help (cordon __manpage), so they list them too.
  const std::vector<std::vector<std::string>> commands = {
      {}, {"run"}, {"probe"}, {"profile", "list"}, {"profile", "show"}, {"policy", "validate"},
      {"policy", "normalize"}, {"policy", "explain"}, {"report", "show"}, {"fs"}, {"audit", "verify"},
      {"audit", "show"}, {"rules", "test"}, {"session", "init"}, {"session", "show"}, {"session", "grow"},
      {"gate", "run"}, {"gate", "render"}, {"mcp"}};
  for (auto args : commands) {
    args.push_back("--help");
    auto r = run_cli(args, "/");
    EXPECT_EQ(r.exit_code, 0) << args.front();
    EXPECT_TRUE(contains(r.out, "Exit status")) << (args.size() > 1 ? args[0] + " " + args[1] : "cordon") << "\n" << r.out;
  }
  // The top level's footer is its own: a subcommand without one does not repeat it.
  EXPECT_FALSE(contains(run_cli({"audit", "--help"}, "/").out, "each command's own"));
}

TEST(FirstHour, ReportShowCountsOneConnectionInTheSingular) {
  temp_dir dir, ws;
  const std::string file = dir.path() + "/r.json";
  ASSERT_EQ(run_cli({"run", "--allow-host", "127.0.0.1:9", "--report", file, "--", "true"}, ws.path()).exit_code, 0);
  nlohmann::json report = nlohmann::json::parse(read_text(file));
  ASSERT_TRUE(report.contains("network")) << report.dump();
  report["network"]["total"] = 1;  // as a run with one refused connection writes it
  report["network"]["denied"] = 1;
  dir.write("r.json", report.dump());
  auto one = run_cli({"report", "show", file}, "/");
  EXPECT_EQ(one.exit_code, 0) << one.err;
  EXPECT_TRUE(contains(one.out, "\nnetwork:    1 connection: 0 allowed, 1 denied, ")) << one.out;
  report["network"]["total"] = 2;
  dir.write("r.json", report.dump());
  EXPECT_TRUE(contains(run_cli({"report", "show", file}, "/").out, "\nnetwork:    2 connections: "));
}

TEST(FirstHour, AMissingSupervisorHelperIsOneLineNamingThePathTried) {
  // `cordon fs` starts its worker through the run API's helper: a cordon copied without it says so.
  temp_dir ws;
  const std::string absent = ws.path() + "/no-cordon-supervisor";
  ::setenv("CORDON_SUPERVISOR", absent.c_str(), 1);
  auto r = run_cli({"fs", "--workspace", ws.path()}, ws.path());
  ::unsetenv("CORDON_SUPERVISOR");
  EXPECT_EQ(r.exit_code, 125);
  const std::string line = "cordon: launch_failed: cannot execute the supervisor helper " + absent +
                           " (install cordon, build the cordon_supervisor target, or set CORDON_SUPERVISOR): "
                           "No such file or directory\n";
  EXPECT_TRUE(contains(r.err, line)) << r.err;
  EXPECT_FALSE(contains(r.err, "is gone")) << r.err;
}

// A request line over the limit (8 MiB) is answered as the worker answers
// it, and the session goes on (before, `cordon fs` stopped with exit 125 and
// no answer, after reading the whole line into memory).
TEST(FirstHour, AnOverlongFsRequestIsAnsweredAndTheSessionGoesOn) {
  temp_dir ws;
  ws.write("a.txt", "hello\n");
  const std::string input = std::string((8u << 20) + 1, 'x') + "\n" + R"({"id":2,"op":"read","path":"a.txt"})" + "\n";
  auto r = run_cli({"fs", "--workspace", ws.path()}, ws.path(), input);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines(r.out);
  std::string first, second;
  std::getline(lines, first);
  std::getline(lines, second);
  const auto refused = nlohmann::json::parse(first, nullptr, false);
  EXPECT_EQ(refused["ok"], false) << first;
  EXPECT_EQ(refused["error"]["code"], "request_too_large") << first;
  EXPECT_TRUE(refused["id"].is_null()) << first;
  const auto read = nlohmann::json::parse(second, nullptr, false);
  EXPECT_EQ(read["id"], 2) << second;
  EXPECT_EQ(read["ok"], true) << second;
}

TEST(FirstHour, PolicyValidateListsEveryStructuralAndSemanticError) {
  temp_dir dir;
  const std::string file = dir.write(
      "p.json", R"({"schema_version": 1, "bogus": 1, "network": {"mode": "sometimes"},
                   "filesystem": {"writable": ["relative/path"]}, "process": {"max_processes": 0}})");
  auto r = run_cli({"policy", "validate", file}, "/");
  EXPECT_EQ(r.exit_code, 125);
  const auto lines = lines_starting(r.err, "cordon: invalid_policy: " + file + ": ");
  ASSERT_EQ(lines.size(), 4U) << r.err;
  EXPECT_EQ(lines_starting(r.err, "cordon: invalid_policy: " + file + ": /bogus: unknown field \"bogus\"").size(), 1U);
  EXPECT_EQ(lines_starting(r.err, "cordon: invalid_policy: " + file + ": /network/mode: must be one of").size(), 1U);
  EXPECT_EQ(lines_starting(r.err, "cordon: invalid_policy: " + file + ": /filesystem/writable/0: ").size(), 1U)
      << r.err;
  EXPECT_EQ(lines_starting(r.err, "cordon: invalid_policy: " + file + ": /process/max_processes: ").size(), 1U)
      << r.err;
  EXPECT_EQ(r.err.find("\ncordon: ", r.err.size() - 1), std::string::npos);
}

TEST(FirstHour, PolicyValidateChecksNoMeaningWhereAFieldCouldNotBeRead) {
  // "mode" unreadable stays "denied", where rules are forbidden: saying so
  // would be an error the file does not have.
  temp_dir dir;
  const std::string file = dir.write(
      "p.json", R"({"schema_version": 1, "network": {"mode": "filterd", "rules": [{"host": "a.example", "action": "allow"}]}})");
  auto r = run_cli({"policy", "validate", file}, "/");
  EXPECT_EQ(r.exit_code, 125);
  EXPECT_EQ(r.err, "cordon: invalid_policy: " + file +
                       ": /network/mode: must be one of \"denied\", \"unrestricted\", \"filtered\"\n");
}

TEST(FirstHour, GitmodulesIsReportedOnlyWhenTheCommandCreatesOne) {
  temp_dir ws;
  ASSERT_EQ(host_command({"git", "init", "-q", ws.path()}), 0);
  auto quiet = run_sh(ws.path(), "true");
  ASSERT_EQ(quiet.exit_code, 0) << quiet.all();
  EXPECT_FALSE(contains(quiet.report["warnings"].dump(), ".gitmodules")) << quiet.report["warnings"].dump();
  auto created = run_sh(ws.path(), "echo '[submodule \"x\"]' > .gitmodules");
  ASSERT_EQ(created.exit_code, 0) << created.all();
  EXPECT_TRUE(contains(created.report["warnings"].dump(),
                       "created during the run: " + ws.path() +
                           "/.gitmodules (submodule URLs and paths the command chose); inspect it before running git "
                           "submodule there"))
      << created.report["warnings"].dump();
}

TEST(FirstHour, ProbeAndExplainSayWhatTheIsolationLevelsMean) {
  auto probe = run_cli({"probe", "--human"}, "/");
  const auto json = probe_json();
  ASSERT_TRUE(json.is_object());
  EXPECT_EQ(lines_starting(probe.out, "isolation:  container (an OS sandbox plus its own namespaces").size(), 1U)
      << probe.out;
  EXPECT_EQ(lines_starting(probe.out, "levels: enforced = the mechanism stops it;").size(), 1U) << probe.out;
  // Controls below `enforced` are rows of the control table; a BLOCKER table
  // appears only when the backend itself cannot run.
  EXPECT_EQ(contains(probe.out, "BLOCKER"), json["available"] != true) << probe.out;
  temp_dir ws;
  auto explain = run_cli({"policy", "explain"}, ws.path());
  EXPECT_EQ(explain.exit_code, 0) << explain.err;
  EXPECT_TRUE(contains(explain.out, "\n            the policy requires at least os_sandbox (levels: none < process "
                                    "< os_sandbox < container < vm)\n"))
      << explain.out;
}

}  // namespace
}  // namespace cordon::test
