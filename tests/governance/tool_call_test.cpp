// The tool-use call (execution_runtime::execute_tool): decide, approve, run
// confined (cold or from a pool), capture with stdin, a timeout and an
// output cap, audit; real sandboxed runs.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cordon/backend.h"
#include "cordon/governance/runtime.h"
#include "cordon/profiles.h"
#include "../sanitizer.h"
#include "runtime_support.h"

namespace cordon::governance {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* kRules = R"({"schema_version": 1, "name": "tool-call-test", "rules": [
  {"id": "basics", "reason": "harmless commands", "decision": "allow", "actions": ["shell", "process"],
   "commands": ["echo", "cat", "sh", "yes", "sleep", "printf", "exit", "python3"]},
  {"id": "ask-touch", "reason": "touch asks first", "decision": "require_approval", "commands": ["touch"]},
  {"id": "rm", "reason": "no deleting", "decision": "deny", "commands": ["rm"]}
]})";

using test_support::context_for;
using test_support::shell;
using test_support::workspace;
using counting_approver = test_support::recording_approver;

capability_policy rules() { return test_support::load_rules(kRules); }

// A pool of one sandbox for `policy` compiled for workspace `ws`; the
// backend lives as long as the pool (the plan points at it).
struct one_sandbox_pool {
  std::unique_ptr<sandbox_backend> backend = make_host_backend();
  std::unique_ptr<prepared_pool> pool;
  one_sandbox_pool(const sandbox_policy& policy, const std::string& ws) {
    compile_options options;
    options.workspace = ws;
    auto compiled = backend->compile(policy, options);
    EXPECT_TRUE(compiled) << compiled.failure().message;
    if (!compiled) return;
    pool_options one;
    one.size = 1;
    pool = std::make_unique<prepared_pool>(compiled.plan(), one);
  }
};

// The peak resident set of this process (VmHWM), in bytes.
std::uint64_t peak_rss_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  }
  return 0;
}

TEST(ToolCall, StdinInStdoutAndStderrOutAudited) {
  workspace ws;
  in_memory_audit_sink audit;
  execution_runtime runtime(rules(), &audit, nullptr);
  tool_io io;
  io.stdin_data = std::string("line one\n\xff\x01 bytes\n", 18);
  auto r = runtime.execute_tool(shell("cat; echo to-stderr >&2; exit 3"), context_for(ws), io);
  ASSERT_EQ(r.status, execution_status::completed) << r.reason;
  EXPECT_EQ(exit_status(r), 3);
  EXPECT_EQ(r.stdout_data.data, io.stdin_data);  // bytes unchanged
  EXPECT_EQ(r.stderr_data.data, "to-stderr\n");
  EXPECT_FALSE(r.stdout_data.truncated());
  EXPECT_FALSE(r.pooled);
  auto ended = audit.named("run.completed");
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].attributes.at("stdout_bytes"), "18");
  EXPECT_EQ(ended[0].attributes.at("stderr_dropped"), "0");
  auto report = json::parse(r.report_json);
  EXPECT_EQ(report["output"]["stdout"]["bytes"], 18);
  EXPECT_EQ(report["output"]["stdout"]["dropped"], 0);
}

TEST(ToolCall, SandboxNotesNameEachViolationAndViewDiagnosisOnly) {
  const std::string report = R"json({"violations": [{"kind": "network_connect", "target": "192.0.2.1:80", "count": 2}],
    "probes": [{"kind": "network_probe", "target": "netlink route", "count": 1}],
    "warnings": ["argument /opt/tool exists on the host but is not visible inside the sandbox; add it with --ro /opt/tool (or --rw)",
                 "the plan is older than the host"]})json";
  const auto notes = sandbox_notes(report);
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_EQ(notes[0], "[cordon] blocked by the sandbox: network_connect 192.0.2.1:80 (x2); the policy refuses it, "
                      "retrying will not help");
  EXPECT_EQ(notes[1], "[cordon] argument /opt/tool exists on the host but is not visible inside the sandbox; add it "
                      "with --ro /opt/tool (or --rw)");
  EXPECT_TRUE(sandbox_notes("not json").empty());
  EXPECT_TRUE(sandbox_notes("[]").empty());
}

TEST(ToolCall, ARefusedConnectIsASandboxNoteOfTheResultAndACleanRunHasNone) {
  workspace ws;
  in_memory_audit_sink audit;
  execution_runtime runtime(rules(), &audit, nullptr);
  auto refused = runtime.execute_tool(
      shell("python3 -c \"import socket; socket.create_connection(('192.0.2.1', 80), timeout=5)\""), context_for(ws),
      tool_io{});
  ASSERT_EQ(refused.status, execution_status::completed) << refused.reason;
  EXPECT_NE(exit_status(refused), 0);
  ASSERT_FALSE(refused.sandbox_notes.empty()) << refused.report_json;
  EXPECT_EQ(refused.sandbox_notes[0].rfind("[cordon] blocked by the sandbox: network_connect 192.0.2.1:80 (x", 0), 0u)
      << refused.sandbox_notes[0];
  auto clean = runtime.execute_tool(shell("echo fine"), context_for(ws), tool_io{});
  ASSERT_EQ(clean.status, execution_status::completed) << clean.reason;
  EXPECT_EQ(clean.stdout_data.data, "fine\n");
  EXPECT_TRUE(clean.sandbox_notes.empty());
}

// A path the model wrote inside a shell command line that the view hides is
// named, with the flag that adds it (src/linux/view_diagnosis.h: the words of
// a shell's -c script); a visible one is not.
TEST(ToolCall, AHiddenHostPathInAShellCommandIsASandboxNote) {
  const char* home = std::getenv("HOME");
  ASSERT_NE(home, nullptr);
  const fs::path hidden = fs::path(home) / (".cordon-tool-note-" + std::to_string(::getpid()));
  fs::create_directories(hidden);
  std::ofstream(hidden / "notes.txt") << "on the host\n";
  struct remove_after {
    fs::path path;
    ~remove_after() { fs::remove_all(path); }
  } cleanup{hidden};
  workspace ws;
  in_memory_audit_sink audit;
  execution_runtime runtime(rules(), &audit, nullptr);
  auto r = runtime.execute_tool(shell("cat '" + hidden.string() + "/notes.txt' </dev/null; echo done"),
                                context_for(ws), tool_io{});
  ASSERT_EQ(r.status, execution_status::completed) << r.reason;
  EXPECT_EQ(r.stdout_data.data, "done\n");
  const std::string file = (hidden / "notes.txt").string();
  const std::string expected = "[cordon] argument " + file +
                               " exists on the host but is not visible inside the sandbox; add it with --ro " + file +
                               " (or --rw)";
  EXPECT_NE(std::find(r.sandbox_notes.begin(), r.sandbox_notes.end(), expected), r.sandbox_notes.end())
      << r.report_json;
  EXPECT_EQ(r.sandbox_notes.size(), 1u) << r.report_json;  // /dev/null is visible: no note
}

TEST(ToolCall, APerCallVariableIsPassedOrItsDropIsAWarning) {
  workspace ws;
  in_memory_audit_sink audit;
  execution_runtime runtime(rules(), &audit, nullptr);
  tool_io io;
  io.environment = {"TZ=UTC0", "CI=1"};  // workspace-write allows TZ, not CI
  auto r = runtime.execute_tool(shell("echo \"$TZ/${CI-unset}\""), context_for(ws), io);
  ASSERT_EQ(r.status, execution_status::completed) << r.reason;
  EXPECT_EQ(r.stdout_data.data, "UTC0/unset\n");
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("variable CI was given for this call"), std::string::npos) << r.warnings[0];
}

TEST(ToolCall, EndlessOutputIsCappedHeadAndTailAndTimesOutWith124) {
  workspace ws;
  in_memory_audit_sink audit;
  execution_runtime runtime(rules(), &audit, nullptr);
  tool_io io;
  io.max_output = 64 * 1024;
  io.timeout = 2s;
  const auto before = std::chrono::steady_clock::now();
  auto r = runtime.execute_tool(shell("yes"), context_for(ws), io);
  const auto took = std::chrono::steady_clock::now() - before;
  ASSERT_EQ(r.status, execution_status::timed_out) << r.reason;
  EXPECT_EQ(exit_status(r), 124);
  EXPECT_EQ(r.stdout_data.data.size(), 64u * 1024);
  EXPECT_GT(r.stdout_data.dropped_bytes, 0u);
  EXPECT_EQ(r.stdout_data.total_bytes, r.stdout_data.data.size() + r.stdout_data.dropped_bytes);
  EXPECT_EQ(r.stdout_data.dropped_at, 32u * 1024);
  EXPECT_EQ(r.stdout_data.data.substr(0, 4), "y\ny\n");
  EXPECT_EQ(r.stdout_data.data.substr(r.stdout_data.data.size() - 4), "y\ny\n");
  // The host's resident size is the bound a user meets; under a sanitizer
  // its quarantine of freed memory decides it instead (the cap above still
  // holds there: 64 KiB kept of gigabytes written).
  if (!CORDON_TEST_UNDER_SANITIZER) {
    EXPECT_LT(peak_rss_bytes(), 100u * 1024 * 1024);
  }
  auto report = json::parse(r.report_json);
  EXPECT_EQ(report["outcome"], "timed_out");
  EXPECT_EQ(report["timeout_fired"], true);
  EXPECT_EQ(report["output"]["stdout"]["dropped"].get<std::uint64_t>(), r.stdout_data.dropped_bytes);
  EXPECT_EQ(audit.named("run.timeout").size(), 1u);
  std::cout << "[ measure  ] yes under a 2 s timeout: returned after "
            << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms, wrote "
            << r.stdout_data.total_bytes << " bytes, kept " << r.stdout_data.data.size() << ", peak RSS "
            << peak_rss_bytes() / 1024 << " KiB\n";
}

TEST(ToolCall, StreamsEveryChunkToTheCallback) {
  workspace ws;
  in_memory_audit_sink audit;
  execution_runtime runtime(rules(), &audit, nullptr);
  tool_io io;
  io.max_output = 4;
  std::string streamed_out, streamed_err;
  io.on_output = [&](int stream, std::string_view bytes) { (stream == 1 ? streamed_out : streamed_err).append(bytes); };
  auto r = runtime.execute_tool(shell("printf 0123456789; printf abc >&2"), context_for(ws), io);
  ASSERT_EQ(r.status, execution_status::completed) << r.reason;
  EXPECT_EQ(streamed_out, "0123456789");
  EXPECT_EQ(streamed_err, "abc");
  EXPECT_EQ(r.stdout_data.data, "0189");  // head 2, tail 2
  EXPECT_EQ(r.stdout_data.dropped_bytes, 6u);
  EXPECT_EQ(r.stdout_data.dropped_at, 2u);
}

TEST(ToolCall, DeniedAndApprovedWithSessionGrant) {
  workspace ws;
  in_memory_audit_sink audit;
  counting_approver approver({approval_decision_kind::approved, approval_scope::session, "for this session", "", ""});
  approval_ledger ledger;
  execution_runtime runtime(rules(), &audit, &approver, &ledger);
  tool_io io;
  auto denied = runtime.execute_tool(shell("rm -rf " + ws.path), context_for(ws), io);
  EXPECT_EQ(denied.status, execution_status::denied);
  EXPECT_EQ(exit_status(denied), 200);
  EXPECT_TRUE(fs::exists(ws.path));
  auto touch = shell("touch " + ws.path + "/made");
  auto first = runtime.execute_tool(touch, context_for(ws), io);
  ASSERT_EQ(first.status, execution_status::completed) << first.reason;
  EXPECT_EQ(approver.calls, 1);
  EXPECT_FALSE(approver.seen.plan_levels.empty());  // the approver saw the compiled plan
  EXPECT_TRUE(fs::exists(ws.path + "/made"));
  auto again = runtime.execute_tool(touch, context_for(ws), io);
  EXPECT_EQ(again.status, execution_status::completed);
  EXPECT_EQ(approver.calls, 1);  // the session grant covered it
}

TEST(ToolCall, StartsFromAPoolWhosePlanIsTheCompiledOneAndTimesOutWith124) {
  workspace ws;
  in_memory_audit_sink audit;
  execution_runtime runtime(rules(), &audit, nullptr);
  auto context = context_for(ws);
  one_sandbox_pool pool(context.policy, ws.path);
  ASSERT_TRUE(pool.pool);
  tool_io io;
  io.pool = pool.pool.get();
  auto r = runtime.execute_tool(shell("echo pooled"), context, io);
  ASSERT_EQ(r.status, execution_status::completed) << r.reason;
  EXPECT_TRUE(r.pooled) << (r.warnings.empty() ? "" : r.warnings[0]);
  EXPECT_EQ(r.stdout_data.data, "pooled\n");
  EXPECT_EQ(json::parse(r.report_json)["prepared"], true);
  io.timeout = 300ms;
  auto slow = runtime.execute_tool(shell("sleep 30"), context, io);
  EXPECT_EQ(slow.status, execution_status::timed_out) << slow.reason;
  EXPECT_EQ(exit_status(slow), 124);
  EXPECT_TRUE(slow.pooled);
}

TEST(ToolCall, APoolForAnotherPlanIsNotUsedAndSaysSo) {
  workspace ws, other;
  in_memory_audit_sink audit;
  execution_runtime runtime(rules(), &audit, nullptr);
  one_sandbox_pool pool(*builtin_profile("workspace-write"), other.path);  // another workspace: another plan
  ASSERT_TRUE(pool.pool);
  tool_io io;
  io.pool = pool.pool.get();
  auto r = runtime.execute_tool(shell("echo cold"), context_for(ws), io);
  ASSERT_EQ(r.status, execution_status::completed) << r.reason;
  EXPECT_FALSE(r.pooled);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("not the plan compiled"), std::string::npos) << r.warnings[0];
  EXPECT_EQ(r.stdout_data.data, "cold\n");
}

TEST(ToolCall, HostExecutionIsRejected) {
  workspace ws;
  in_memory_audit_sink audit;
  execution_runtime runtime(rules(), &audit, nullptr);
  auto context = context_for(ws);
  context.backend = backend_preference::forbid;
  sandbox_policy open;  // unrestricted: execute() would run it on the host
  open.filesystem.read = read_mode::full;
  open.filesystem.writable = {"/"};
  open.network.mode = network_mode::unrestricted;
  open.environment.inherit = environment_inherit::all;
  context.policy = open;
  auto r = runtime.execute_tool(shell("echo x"), context, tool_io{});
  EXPECT_EQ(r.status, execution_status::rejected);
  EXPECT_NE(r.reason.find("only confined"), std::string::npos) << r.reason;
}

std::string cli() {
  const char* env = std::getenv("CORDON_CLI");
  return env != nullptr && *env != '\0' ? env : CORDON_CLI;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs `sh -c line`; its exit status. The child's peak RSS is in *max_rss_kib.
int shell_status(const std::string& line, long* max_rss_kib) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::execl("/bin/sh", "sh", "-c", line.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  rusage usage{};
  ::wait4(pid, &status, 0, &usage);
  *max_rss_kib = usage.ru_maxrss;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(ToolCallCli, RunMaxOutputKeepsHeadAndTailAndTimesOut) {
  workspace ws;
  long rss_kib = 0;
  const std::string out = ws.path + "/out", err = ws.path + "/err", report = ws.path + "/report.json";
  int status = shell_status("cd " + ws.path + " && " + cli() + " run --workspace " + ws.path +
                                " --max-output 1000 --timeout 1 --report " + report + " -- yes >" + out + " 2>" + err,
                            &rss_kib);
  EXPECT_EQ(status, 124) << slurp(err);
  const std::string kept = slurp(out);
  EXPECT_EQ(kept.size(), 1000u);
  EXPECT_EQ(kept.substr(0, 4), "y\ny\n");
  EXPECT_NE(slurp(err).find("cordon: --max-output: "), std::string::npos) << slurp(err);
  auto r = json::parse(slurp(report));
  EXPECT_EQ(r["outcome"], "timed_out");
  EXPECT_EQ(r["output"]["stdout"]["kept"], 1000);
  EXPECT_GT(r["output"]["stdout"]["dropped"].get<std::uint64_t>(), 0u);
  EXPECT_LT(rss_kib, 100 * 1024);
  std::cout << "[ measure  ] cordon run --max-output 1000 --timeout 1 -- yes: wrote "
            << r["output"]["stdout"]["bytes"] << " bytes, cordon's peak RSS " << rss_kib << " KiB\n";
}

TEST(ToolCallCli, ExecMaxOutputRelaysCappedOutputAndStdin) {
  workspace ws;
  std::ofstream(ws.path + "/rules.json") << kRules;
  const std::string request = R"({"schema_version": 1, "action": "shell", "risk": "low", "command": "cat; printf 0123456789"})";
  std::ofstream(ws.path + "/request.json") << request;
  long rss_kib = 0;
  int status = shell_status("cd " + ws.path + " && printf abc | " + cli() + " exec --workspace " + ws.path +
                                " --rules rules.json --request request.json --max-output 6 >out 2>err",
                            &rss_kib);
  EXPECT_EQ(status, 0) << slurp(ws.path + "/err");
  EXPECT_EQ(slurp(ws.path + "/out"), "abc789");  // head 3, tail 3
  EXPECT_NE(slurp(ws.path + "/err").find("7 of 13 bytes of stdout dropped"), std::string::npos) << slurp(ws.path + "/err");
}

}  // namespace
}  // namespace cordon::governance
