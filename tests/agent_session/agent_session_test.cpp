// The scripted agent session of scenario.json (issue 34, acceptance 1)
// through the tool-use call in C++, execution_runtime::execute_tool:
// explore, a failing test suite, an edit, the suite passing, an install
// through the filtered network to a loopback stand-in registry after
// approval, a commit; a push the approver declines and a delete the rules
// deny. Every step's decision, exit and output, and the audit log (it
// verifies, one decision per step), are checked. The Python, Node and MCP
// drivers read the same scenario.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cordon/governance/approval.h"
#include "cordon/governance/audit.h"
#include "cordon/governance/capability_request.h"
#include "cordon/governance/runtime.h"
#include "cordon/policy_json.h"
#include "cordon/profiles.h"
#include "posix/unique_fd.h"

extern char** environ;

namespace cordon::governance {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string fixture() {
  const char* dir = std::getenv("CORDON_AGENT_SESSION");
  return dir != nullptr ? dir : CORDON_AGENT_SESSION_DIR;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

// A child running argv in cwd, its stdout on a pipe when `piped`, its stderr
// discarded when `quiet` (the registry's request log).
struct child {
  pid_t pid = -1;
  unique_fd out;
};

child spawn(const std::vector<std::string>& argv, const std::string& cwd, bool piped, bool quiet = false) {
  int fds[2] = {-1, -1};
  if (piped && ::pipe2(fds, O_CLOEXEC) != 0) return {};
  child c;
  c.pid = ::fork();
  if (c.pid == 0) {
    if (piped) ::dup2(fds[1], 1);
    if (quiet) {
      const int null = ::open("/dev/null", O_WRONLY);
      if (null >= 0) ::dup2(null, 2);
    }
    if (::chdir(cwd.c_str()) != 0) ::_exit(126);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  if (piped) {
    c.out.reset(fds[0]);
    unique_fd write_end(fds[1]);
  }
  return c;
}

int wait_for(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// The host side of a command: its exit status and stdout.
std::pair<int, std::string> host_run(const std::vector<std::string>& argv, const std::string& cwd) {
  auto c = spawn(argv, cwd, true);
  std::string out;
  char buffer[4096];
  for (ssize_t n; (n = ::read(c.out.get(), buffer, sizeof buffer)) > 0 || (n < 0 && errno == EINTR);) {
    if (n > 0) out.append(buffer, static_cast<std::size_t>(n));
  }
  return {wait_for(c.pid), out};
}

// The stand-in registry: a loopback HTTP server; its port comes on its first line.
struct registry {
  pid_t pid = -1;
  int port = 0;
  explicit registry(const json& server) {
    std::vector<std::string> argv;
    for (const auto& a : server.at("argv")) argv.push_back(replace_all(a.get<std::string>(), "{fixture}", fixture()));
    auto c = spawn(argv, "/", true, true);
    pid = c.pid;
    std::string line;
    char ch;
    while (::read(c.out.get(), &ch, 1) == 1 && ch != '\n') line.push_back(ch);
    const std::string after = server.at("port_after");
    if (auto at = line.find(after); at != std::string::npos) port = std::atoi(line.c_str() + at + after.size());
  }
  ~registry() {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      wait_for(pid);
    }
  }
};

// Answers as the current step says; remembers what it was shown.
class scenario_approver final : public approval_service {
 public:
  approval_decision decide(const approval_request& request) override {
    shown.push_back(request);
    approval_decision answer;  // denied unless the step says otherwise
    answer.kind = approval_decision_kind_from_string(answer_json.value("decision", "denied"))
                      .value_or(approval_decision_kind::denied);
    answer.scope = approval_scope_from_string(answer_json.value("scope", "once")).value_or(approval_scope::once);
    answer.reason = answer_json.value("reason", "");
    return answer;
  }
  std::string_view name() const noexcept override { return "scenario"; }
  json answer_json;
  std::vector<approval_request> shown;
};

struct workspace_dir {
  std::string path;
  workspace_dir() {
    char t[] = "/tmp/cordon-agent-session-XXXXXX";
    path = ::mkdtemp(t);
    fs::create_directory(path + "/ws");
  }
  ~workspace_dir() { fs::remove_all(path); }
};

TEST(AgentSession, ScriptedSessionThroughTheToolUseCall) {
  const json scenario = json::parse(read_file(fixture() + "/scenario.json"));
  workspace_dir dir;
  const std::string ws = dir.path + "/ws";
  registry server(scenario.at("server"));
  ASSERT_GT(server.port, 0) << "the stand-in registry did not start";
  const std::string port = std::to_string(server.port);
  for (const auto& [name, text] : scenario.at("files").items()) std::ofstream(ws + "/" + name) << text.get<std::string>();
  for (const auto& argv : scenario.at("setup")) {
    ASSERT_EQ(host_run(argv.get<std::vector<std::string>>(), ws).first, 0) << argv.dump();
  }
  json policy = json::parse(*builtin_profile_json("workspace-write"));
  policy["network"] = json::parse(replace_all(scenario.at("network").dump(), "\"{port}\"", port));
  auto sandbox = sandbox_policy_from_json(policy.dump());
  ASSERT_TRUE(sandbox) << sandbox.error_value().describe();
  auto rules = capability_policy::from_json(scenario.at("rules").dump());
  ASSERT_TRUE(rules) << rules.error_value().describe();
  const std::string audit_path = dir.path + "/audit.jsonl";
  auto sink = jsonl_audit_sink::open(audit_path);
  ASSERT_TRUE(sink) << sink.error_value().describe();
  scenario_approver approver;
  execution_runtime runtime(*rules, sink->get(), &approver, nullptr);
  execution_context context;
  context.session_id = "agent-session";
  context.workspace = ws;
  context.policy = *sandbox;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) context.host_environment.emplace_back(*e);
  deny_records_to_command(context, audit_path, "");
  tool_io io;
  io.timeout = std::chrono::seconds(60);

  for (const auto& step : scenario.at("steps")) {
    const std::string name = step.at("name");
    const std::string command = replace_all(step.at("command"), "{port}", port);
    approver.shown.clear();
    approver.answer_json = step.value("approver", json::object());
    auto request = capability_request_from_json(
        json{{"schema_version", 1}, {"action", "shell"}, {"risk", "low"}, {"command", command}, {"tool", "bash"},
             {"trace_id", name}, {"working_directory", ws}}.dump());
    ASSERT_TRUE(request) << request.error_value().describe();
    const auto r = runtime.execute_tool(*request, context, io);
    const json& expect = step.at("expect");
    const std::string where = name + ": " + std::string(to_string(r.status)) + " " + r.reason + " " + r.stderr_data.data;
    EXPECT_EQ(to_string(r.decision.decision), expect.at("decision").get<std::string>()) << where;
    EXPECT_EQ(to_string(r.status), expect.at("status").get<std::string>()) << where;
    EXPECT_EQ(exit_status(r), expect.at("exit_code").get<int>()) << where;
    for (const auto& text : expect.value("stdout_contains", json::array())) {
      EXPECT_NE(r.stdout_data.data.find(text.get<std::string>()), std::string::npos) << where << " stdout "
                                                                                       << r.stdout_data.data;
    }
    if (expect.contains("approval")) {
      ASSERT_EQ(approver.shown.size(), 1u) << where;
      EXPECT_EQ(approver.shown[0].request.command, command);  // the approver saw this request...
      EXPECT_FALSE(approver.shown[0].plan_levels.empty());    // ...and the compiled plan
      ASSERT_TRUE(r.approval.has_value()) << where;
      EXPECT_EQ(to_string(r.approval->kind), expect.at("approval").get<std::string>()) << where;
    } else {
      EXPECT_TRUE(approver.shown.empty()) << where;
    }
  }
  ASSERT_TRUE((*sink)->flush());

  auto verified = verify_audit_log(audit_path);
  ASSERT_TRUE(verified) << verified.error_value().describe();
  ASSERT_TRUE(verified->ok) << verified->problem;
  std::vector<std::string> decisions, approvals, expected_decisions, expected_approvals;
  std::size_t completed = 0, expected_completed = 0;
  for (const auto& record : verified->records) {
    if (record.event.event == "policy.decision") decisions.push_back(record.event.outcome);
    if (record.event.event == "approval") approvals.push_back(record.event.outcome);
    if (record.event.event == "run.completed") ++completed;
  }
  for (const auto& step : scenario.at("steps")) {
    const json& expect = step.at("expect");
    expected_decisions.push_back(expect.at("decision"));
    if (expect.contains("approval")) expected_approvals.push_back(expect.at("approval"));
    if (expect.at("status") == "completed") ++expected_completed;
  }
  EXPECT_EQ(decisions, expected_decisions);  // one decision per step, in order
  EXPECT_EQ(approvals, expected_approvals);
  EXPECT_EQ(completed, expected_completed);
  for (const auto& [name, text] : scenario.at("after").at("file_contains").items()) {
    EXPECT_NE(read_file(ws + "/" + name).find(text.get<std::string>()), std::string::npos) << name;
  }
  const json& log = scenario.at("after").at("host_git_log");
  EXPECT_EQ(host_run(log.at("argv").get<std::vector<std::string>>(), ws).second, log.at("stdout").get<std::string>());
}

}  // namespace
}  // namespace cordon::governance
