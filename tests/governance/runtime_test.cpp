// The execution runtime: every decision path, with real sandboxed runs.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "cordon/governance/runtime.h"
#include "cordon/profiles.h"
#include "runtime_support.h"

namespace cordon::governance {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* kRules = R"({"schema_version": 1, "name": "runtime-test", "rules": [
  {"id": "basics", "reason": "harmless commands", "decision": "allow", "actions": ["shell", "process"],
   "commands": ["echo", "true", "sleep", "cat", "sh"]},
  {"id": "ws-write", "reason": "the workspace", "decision": "allow", "actions": ["filesystem_write", "shell"],
   "paths": ["/tmp/**"]},
  {"id": "push", "reason": "pushing needs a human", "decision": "require_approval", "commands": ["git push"]},
  {"id": "ask-touch", "reason": "touch asks first", "decision": "require_approval", "commands": ["touch"]},
  {"id": "rm", "reason": "no deleting", "decision": "deny", "commands": ["rm"]},
  {"id": "read", "reason": "reading the workspace", "decision": "allow", "actions": ["filesystem_read"], "paths": ["/tmp"]}
]})";

using test_support::context_for;
using test_support::recording_approver;
using test_support::shell;
using test_support::workspace;

// Whether a process whose arguments are exactly `argv` runs on this host (the
// sandbox's PID namespace is visible from here): the explicit sign that a
// command has started, instead of a fixed sleep.
bool command_running(const std::vector<std::string>& argv) {
  std::string wanted;
  for (const auto& a : argv) wanted += a + '\0';
  for (const auto& entry : fs::directory_iterator("/proc")) {
    std::ifstream in(entry.path() / "cmdline", std::ios::binary);
    std::string cmdline((std::istreambuf_iterator<char>(in)), {});
    if (cmdline == wanted) return true;
  }
  return false;
}

capability_policy rules() { return test_support::load_rules(kRules); }

// Fails from its Nth event on.
class failing_sink final : public audit_sink {
 public:
  explicit failing_sink(int ok_events) : left_(ok_events) {}
  result<void> append(const audit_event& e) override {
    if (left_-- > 0) {
      events.push_back(e);
      return ok;
    }
    return make_error(error_code::io_error, "disk full (test)", {}, ENOSPC);
  }
  std::string_view name() const noexcept override { return "failing"; }
  std::vector<audit_event> events;

 private:
  int left_;
};

std::vector<std::string> names(const in_memory_audit_sink& sink) {
  std::vector<std::string> out;
  for (const auto& e : sink.events()) out.push_back(e.event);
  return out;
}

TEST(Runtime, AllowedCommandRunsConfinedAndIsAudited) {
  workspace ws;
  in_memory_audit_sink audit;
  execution_runtime runtime(rules(), &audit, nullptr);
  auto req = shell("echo hello > " + ws.path + "/out.txt");
  req.working_directory = ws.path;
  req.host_metadata["ui"] = "panel-7";
  auto r = runtime.execute(req, context_for(ws));
  ASSERT_EQ(r.status, execution_status::completed) << r.reason;
  EXPECT_EQ(r.reason, "exited 0");
  std::ifstream out(ws.path + "/out.txt");
  std::string text;
  std::getline(out, text);
  EXPECT_EQ(text, "hello");
  EXPECT_EQ(names(audit), (std::vector<std::string>{"policy.decision", "run.started", "run.completed"}));
  for (const auto& e : audit.events()) {
    EXPECT_EQ(e.module, "execution");
    EXPECT_EQ(e.ids.at("run_id"), r.run_id);
    EXPECT_EQ(e.ids.at("request_digest"), r.request_digest);
    EXPECT_EQ(e.ids.at("rules_digest"), runtime.rules().digest());
    EXPECT_EQ(e.ids.at("trace_id"), "trace-1");
    EXPECT_EQ(e.ids.at("session_id"), "session-1");
    EXPECT_FALSE(e.attributes.count("approval_for_tests_only"));
  }
  auto done = audit.named("run.completed").at(0);
  EXPECT_EQ(done.ids.at("report_digest"), sha256_digest(r.report_json));
  EXPECT_EQ(done.ids.at("sandbox_policy_digest"), r.sandbox_policy_digest);
  auto report = json::parse(done.documents.at("report"));
  EXPECT_EQ(report["policy"]["digest"], r.sandbox_policy_digest);
  EXPECT_EQ(report["controls"]["filesystem_write"]["level"], "enforced");
  EXPECT_EQ(audit.named("run.started").at(0).attributes.at("host.ui"), "panel-7");
}

TEST(Runtime, TheSandboxStillConfinesAnAllowedCommand) {
  // The capability policy allows `sh`; the boundary (workspace-write) still
  // refuses a write outside the workspace: authorization never repairs or
  // replaces confinement.
  workspace ws;
  in_memory_audit_sink audit;
  execution_runtime runtime(rules(), &audit, nullptr);
  capability_request req;
  req.action = action_kind::process;
  req.risk = risk_level::low;
  req.argv = {"sh", "-c", "echo x > /etc/cordon-governance-probe"};
  req.working_directory = ws.path;
  // The splitter sees `echo x` with a redirect to /etc: denied before it runs.
  EXPECT_EQ(runtime.execute(req, context_for(ws)).status, execution_status::denied);
  req.argv = {"cat", "/etc/shadow"};
  auto r = runtime.execute(req, context_for(ws));
  ASSERT_EQ(r.status, execution_status::completed) << r.reason;
  ASSERT_TRUE(r.outcome);
  EXPECT_NE(r.outcome->exit_code, 0);  // allowed by the rules, blocked by the sandbox
}

TEST(Runtime, DeniedNeverRuns) {
  workspace ws;
  in_memory_audit_sink audit;
  recording_approver approver({approval_decision_kind::approved, approval_scope::once, "", "", ""});
  execution_runtime runtime(rules(), &audit, &approver);
  auto r = runtime.execute(shell("echo hi && rm -rf " + ws.path), context_for(ws));
  EXPECT_EQ(r.status, execution_status::denied);
  EXPECT_EQ(r.reason, "no deleting");
  EXPECT_EQ(approver.calls, 0);  // a deny is never sent for approval
  EXPECT_EQ(names(audit), std::vector<std::string>{"policy.decision"});
  EXPECT_EQ(audit.events()[0].outcome, "deny");
  EXPECT_TRUE(fs::exists(ws.path));
}

TEST(Runtime, RequireApprovalPaths) {
  workspace ws;
  auto req = shell("touch " + ws.path + "/approved");
  req.working_directory = ws.path;
  {
    in_memory_audit_sink audit;
    execution_runtime runtime(rules(), &audit, nullptr);
    auto r = runtime.execute(req, context_for(ws));
    EXPECT_EQ(r.status, execution_status::rejected);
    EXPECT_NE(r.reason.find("no approval service"), std::string::npos) << r.reason;
    EXPECT_EQ(names(audit), (std::vector<std::string>{"policy.decision", "approval"}));
  }
  {
    in_memory_audit_sink audit;
    deny_all_approval_service deny;
    execution_runtime runtime(rules(), &audit, &deny);
    EXPECT_EQ(runtime.execute(req, context_for(ws)).status, execution_status::denied);
    EXPECT_EQ(audit.named("approval").at(0).outcome, "denied");
  }
  {
    in_memory_audit_sink audit;
    recording_approver manual({approval_decision_kind::manual_review, approval_scope::once, "later", "", ""});
    execution_runtime runtime(rules(), &audit, &manual);
    auto r = runtime.execute(req, context_for(ws));
    EXPECT_EQ(r.status, execution_status::rejected);
    EXPECT_NE(r.reason.find("manual review"), std::string::npos);
  }
  {
    in_memory_audit_sink audit;
    recording_approver stale({approval_decision_kind::approved, approval_scope::once, "", "sha256:someotherrequest", ""});
    execution_runtime runtime(rules(), &audit, &stale);
    auto r = runtime.execute(req, context_for(ws));
    EXPECT_EQ(r.status, execution_status::denied);
    EXPECT_NE(r.reason.find("another request"), std::string::npos);
  }
  EXPECT_FALSE(fs::exists(ws.path + "/approved"));
  {
    in_memory_audit_sink audit;
    allow_all_approval_service allow;
    execution_runtime runtime(rules(), &audit, &allow);
    auto r = runtime.execute(req, context_for(ws));
    EXPECT_EQ(r.status, execution_status::completed) << r.reason;
    EXPECT_TRUE(fs::exists(ws.path + "/approved"));
    ASSERT_EQ(names(audit), (std::vector<std::string>{"policy.decision", "approval", "run.started", "run.completed"}));
    for (const auto& e : audit.events()) {
      EXPECT_EQ(e.attributes.at("approval_for_tests_only"), "true") << e.event;
    }
  }
}

TEST(Runtime, ApprovalSeesTheCompiledPlanAndCannotChangeIt) {
  workspace ws;
  in_memory_audit_sink audit;
  recording_approver approver({approval_decision_kind::approved, approval_scope::once, "ok", "", ""});
  execution_runtime runtime(rules(), &audit, &approver);
  auto req = shell("git push");
  auto context = context_for(ws);
  context.policy.process.memory_bytes = 1ull << 40;
  context.policy.enforcement[control::memory] = enforcement_level::partial;
  auto r = runtime.execute(req, context);
  ASSERT_EQ(approver.calls, 1);
  ASSERT_FALSE(approver.seen.plan_levels.empty());
  bool saw_memory = false;
  for (const auto& l : approver.seen.plan_levels) saw_memory = saw_memory || l.control == "memory";
  EXPECT_TRUE(saw_memory);
  EXPECT_EQ(approver.seen.backend, "linux-namespaces");
  // The plan that ran is the plan that was shown.
  ASSERT_FALSE(r.report_json.empty()) << r.reason;
  auto report = json::parse(r.report_json);
  EXPECT_EQ(report["policy"]["digest"], approver.seen.sandbox_policy_digest);
  for (const auto& l : approver.seen.plan_levels) EXPECT_EQ(report["controls"][l.control]["level"], l.level) << l.control;

  // A policy the sandbox cannot enforce is refused before anyone is asked:
  // no approval can buy a weaker plan.
  auto impossible = context_for(ws);
  impossible.policy.isolation = isolation_level::vm;
  approver.calls = 0;
  auto refused = runtime.execute(req, impossible);
  EXPECT_EQ(refused.status, execution_status::refused) << refused.reason;
  EXPECT_EQ(approver.calls, 0);
  EXPECT_FALSE(refused.report_json.empty());
  EXPECT_EQ(audit.named("sandbox.refused").size(), 1u);
  EXPECT_TRUE(audit.named("sandbox.refused").at(0).documents.count("report"));
}

TEST(Runtime, SessionGrantsAreBoundToSessionAndCommand) {
  workspace ws;
  in_memory_audit_sink audit;
  recording_approver approver({approval_decision_kind::approved, approval_scope::session, "for this session", "", ""});
  approval_ledger ledger;
  execution_runtime runtime(rules(), &audit, &approver, &ledger);
  auto touch = shell("touch " + ws.path + "/a");
  EXPECT_EQ(runtime.execute(touch, context_for(ws, "s1")).status, execution_status::completed);
  EXPECT_EQ(approver.calls, 1);
  touch.trace_id = "another-trace";
  EXPECT_EQ(runtime.execute(touch, context_for(ws, "s1")).status, execution_status::completed);
  EXPECT_EQ(approver.calls, 1);  // the grant covered it
  EXPECT_EQ(audit.named("approval").back().attributes.at("reused_grant"), "session");
  EXPECT_EQ(runtime.execute(touch, context_for(ws, "s2")).status, execution_status::completed);
  EXPECT_EQ(approver.calls, 2);  // another session asks again
  EXPECT_EQ(runtime.execute(shell("touch " + ws.path + "/b"), context_for(ws, "s1")).status, execution_status::completed);
  EXPECT_EQ(approver.calls, 3);  // another command asks again
}

TEST(Runtime, StaleRevisionIsRejected) {
  workspace ws;
  in_memory_audit_sink audit;
  execution_runtime runtime(rules(), &audit, nullptr);
  auto req = shell("true");
  req.boundary_revision = 2;  // the context is at 3
  auto r = runtime.execute(req, context_for(ws));
  EXPECT_EQ(r.status, execution_status::rejected);
  EXPECT_NE(r.reason.find("stale boundary revision 2"), std::string::npos) << r.reason;
  EXPECT_EQ(audit.named("request.rejected").at(0).outcome, "stale_revision");
  req.boundary_revision = 3;
  EXPECT_EQ(runtime.execute(req, context_for(ws)).status, execution_status::completed);
}

TEST(Runtime, AuditFailureRefusesNewRuns) {
  workspace ws;
  failing_sink audit(1);  // the decision is recorded, run.started is not
  execution_runtime runtime(rules(), &audit, nullptr);
  auto r = runtime.execute(shell("touch " + ws.path + "/never"), context_for(ws));
  // touch needs approval: no approver -> the "approval" event fails first.
  EXPECT_EQ(r.status, execution_status::rejected);
  EXPECT_NE(r.reason.find("disk full (test)"), std::string::npos) << r.reason;
  ASSERT_TRUE(runtime.refusing());
  auto next = runtime.execute(shell("echo fine"), context_for(ws));
  EXPECT_EQ(next.status, execution_status::rejected);
  EXPECT_NE(next.reason.find("audit sink failed"), std::string::npos) << next.reason;
  EXPECT_EQ(audit.events.size(), 1u);
  EXPECT_FALSE(fs::exists(ws.path + "/never"));
  execution_runtime without(rules(), nullptr, nullptr);
  EXPECT_EQ(without.execute(shell("echo"), context_for(ws)).status, execution_status::rejected);
}

TEST(Runtime, CancelStopsARun) {
  workspace ws;
  in_memory_audit_sink audit;
  execution_runtime runtime(rules(), &audit, nullptr);
  // The command's own arguments name it among the host's processes; the
  // cancellation comes once it runs (polled: a condition, not a fixed wait).
  const std::string seconds = "30." + std::to_string(::getpid());
  bool seen_running = false;
  std::thread canceller([&] {
    const auto until = std::chrono::steady_clock::now() + 20s;
    while (!(seen_running = command_running({"sleep", seconds})) && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(10ms);
    }
    runtime.cancel();
  });
  auto start = std::chrono::steady_clock::now();
  auto r = runtime.execute(shell("sleep " + seconds), context_for(ws));
  canceller.join();
  EXPECT_TRUE(seen_running) << "the command never started";
  EXPECT_EQ(r.status, execution_status::cancelled) << r.reason;
  EXPECT_LT(std::chrono::steady_clock::now() - start, 15s);
  EXPECT_EQ(audit.named("run.cancelled").size(), 1u);
  // The next run is not affected by the old cancellation.
  EXPECT_EQ(runtime.execute(shell("true"), context_for(ws)).status, execution_status::completed);
  // A cancellation before a run: the run never starts.
  runtime.cancel();
  auto early = runtime.execute(shell("true"), context_for(ws));
  EXPECT_EQ(early.status, execution_status::cancelled);
  EXPECT_EQ(early.reason, "cancelled before it started");
}

TEST(Runtime, TimeoutIsRecorded) {
  workspace ws;
  in_memory_audit_sink audit;
  execution_runtime runtime(rules(), &audit, nullptr);
  auto context = context_for(ws);
  context.policy.process.timeout_ms = 300;
  auto r = runtime.execute(shell("sleep 20"), context);
  EXPECT_EQ(r.status, execution_status::timed_out) << r.reason;
  EXPECT_EQ(audit.named("run.timeout").size(), 1u);
}

TEST(Runtime, BackendSelection) {
  workspace ws;
  in_memory_audit_sink audit;
  execution_runtime runtime(rules(), &audit, nullptr);
  auto context = context_for(ws);
  context.backend = backend_preference::forbid;
  auto r = runtime.execute(shell("true"), context);
  EXPECT_EQ(r.status, execution_status::rejected);
  EXPECT_NE(r.reason.find("restricted boundary never runs without its sandbox"), std::string::npos);
  EXPECT_TRUE(is_restricted(context.policy));
  // An unrestricted boundary may run on the host when sandboxing is forbidden.
  sandbox_policy open;
  open.filesystem.read = read_mode::full;
  open.filesystem.writable = {"/"};
  open.network.mode = network_mode::unrestricted;
  open.environment.inherit = environment_inherit::all;
  EXPECT_FALSE(is_restricted(open));
  context.policy = open;
  r = runtime.execute(shell("true"), context);
  EXPECT_EQ(r.status, execution_status::completed) << r.reason;
  EXPECT_EQ(json::parse(r.report_json)["backend"], "host");
  EXPECT_EQ(audit.named("run.started").back().attributes.at("backend"), "host");
  context.backend = backend_preference::require;
  context.policy = *builtin_profile("workspace-write");
  EXPECT_EQ(runtime.execute(shell("true"), context).status, execution_status::completed);
}

TEST(Runtime, NonCommandRequestsAreAuthorizedOnly) {
  workspace ws;
  in_memory_audit_sink audit;
  execution_runtime runtime(rules(), &audit, nullptr);
  capability_request read;
  read.action = action_kind::filesystem_read;
  read.risk = risk_level::low;
  read.paths = {ws.path + "/x"};
  auto r = runtime.execute(read, context_for(ws));
  EXPECT_EQ(r.status, execution_status::authorized) << r.reason;
  EXPECT_EQ(names(audit), (std::vector<std::string>{"policy.decision", "request.authorized"}));
  read.paths = {"/etc/passwd"};
  EXPECT_EQ(runtime.execute(read, context_for(ws)).status, execution_status::denied);
  capability_request bad = read;
  bad.paths = {"relative"};
  EXPECT_EQ(runtime.execute(bad, context_for(ws)).status, execution_status::rejected);
}

// The runtime killed with SIGKILL during a run: the audit file still
// verifies, and the run shows as interrupted.
TEST(Runtime, KilledDuringARunLeavesAVerifiableLog) {
  workspace ws;
  std::string path = ws.path + "/audit.jsonl";
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    auto sink = jsonl_audit_sink::open(path);
    if (!sink) ::_exit(3);
    execution_runtime runtime(rules(), sink->get(), nullptr);
    (void)runtime.execute(shell("sleep 30"), context_for(ws));
    ::_exit(0);
  }
  bool started = false;
  for (int i = 0; i < 500 && !started; ++i) {
    std::this_thread::sleep_for(20ms);
    std::ifstream in(path);
    std::string text((std::istreambuf_iterator<char>(in)), {});
    started = text.find("\"run.started\"") != std::string::npos;
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(started);
  auto v = verify_audit_log(path);
  ASSERT_TRUE(v);
  EXPECT_TRUE(v->ok) << v->problem;
  EXPECT_EQ(v->events, 2u);
  EXPECT_EQ(v->interrupted_runs.size(), 1u);
}

}  // namespace
}  // namespace cordon::governance
