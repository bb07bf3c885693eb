// The governance commands of the CLI: exit statuses, audit verify naming the
// bad line, rules test failing on a wrong example, stale session revisions.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "governance/default_rules.h"

namespace {

namespace fs = std::filesystem;

std::string cli() {
  const char* env = std::getenv("CORDON_CLI");
  return env != nullptr && *env != '\0' ? env : CORDON_CLI;
}

struct sandbox_dir {
  std::string path;
  sandbox_dir() {
    char t[] = "/tmp/cordon-cli-gov-XXXXXX";
    path = ::mkdtemp(t);
    fs::create_directory(path + "/ws");
    fs::permissions(path, fs::perms::all);
    fs::permissions(path + "/ws", fs::perms::all);
  }
  ~sandbox_dir() { fs::remove_all(path); }
  void write(const std::string& name, const std::string& text) const { std::ofstream(path + "/" + name) << text; }
  std::string read(const std::string& name) const {
    std::ifstream in(path + "/" + name);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  // Runs `cordon ARGS` here; the exit status, with stdout+stderr in out.txt.
  int run(const std::string& args) const {
    int status = std::system(("cd '" + path + "' && " + cli() + " " + args + " >out.txt 2>&1").c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  // Starts `cordon ARGS` here without waiting (output to `output`); its pid.
  pid_t start(const std::string& args, const std::string& output) const {
    const std::string line = "cd '" + path + "' && exec " + cli() + " " + args + " >" + output + " 2>&1";
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::execl("/bin/sh", "sh", "-c", line.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    return pid;
  }
  // True once the audit log `log` here records a run.started (within 10 s).
  bool run_started(const std::string& log) const {
    for (int i = 0; i < 500; ++i) {
      if (read(log).find("\"run.started\"") != std::string::npos) return true;
      ::usleep(20000);
    }
    return false;
  }
};

constexpr const char* kRules = R"({"schema_version": 1, "rules": [
  {"id": "echo", "reason": "harmless", "decision": "allow", "commands": ["echo", "true", "false", "sleep"]},
  {"id": "ask", "reason": "needs a person", "decision": "require_approval", "commands": ["mkdir"]},
  {"id": "no", "reason": "never", "decision": "deny", "commands": ["rm"]}]})";

std::string shell_request(const std::string& command, const std::string& extra = "") {
  return R"({"schema_version": 1, "action": "shell", "risk": "low", "command": ")" + command + "\"" + extra + "}";
}

TEST(GovernanceCli, ExitStatuses) {
  sandbox_dir d;
  d.write("rules.json", kRules);
  d.write("ok.json", shell_request("echo hi"));
  d.write("fails.json", shell_request("false"));
  d.write("deny.json", shell_request("rm -rf ws"));
  d.write("ask.json", shell_request("mkdir -p ws/x"));
  d.write("bad.json", R"({"schema_version": 1, "action": "shell", "risk": "low", "command": "echo", "grant": true})");
  std::string common = " --rules rules.json --workspace ws --audit audit.jsonl";
  EXPECT_EQ(d.run("exec --request ok.json" + common), 0) << d.read("out.txt");
  EXPECT_NE(d.read("out.txt").find("cordon: decision: allow (rule echo): harmless"), std::string::npos);
  EXPECT_EQ(d.run("exec --request fails.json" + common), 1);  // the command's own status
  EXPECT_EQ(d.run("exec --request deny.json" + common), 200);
  EXPECT_NE(d.read("out.txt").find("cordon: denied: never"), std::string::npos) << d.read("out.txt");
  EXPECT_EQ(d.run("exec --request ask.json" + common), 200);  // the default approver denies
  EXPECT_EQ(d.run("exec --request ask.json --approver false" + common), 200);  // an approver that fails denies
  EXPECT_EQ(d.run("exec --request bad.json" + common), 125);
  EXPECT_EQ(d.run("exec --request ok.json --rules missing.json"), 125);
  EXPECT_TRUE(fs::exists(d.path + "/ws"));
  EXPECT_EQ(d.run("audit verify audit.jsonl"), 0) << d.read("out.txt");
  EXPECT_NE(d.read("out.txt").find("ok: "), std::string::npos);
}

TEST(GovernanceCli, StaleSessionRevisionIsRejected) {
  sandbox_dir d;
  d.write("rules.json", kRules);
  d.write("stale.json", shell_request("echo hi", ", \"boundary_revision\": 1"));
  ASSERT_EQ(d.run("session init s.json --workspace ws --id cli-test"), 0) << d.read("out.txt");
  EXPECT_EQ(d.run("exec --request stale.json --rules rules.json --session s.json"), 0) << d.read("out.txt");
  // Grow the boundary (approved by a test approver that echoes the digest): revision 2.
  d.write("approve.py",
          "import json, sys\nr = json.load(sys.stdin)\nprint(json.dumps({'decision': 'approved', 'request_digest': r['request_digest']}))\n");
  EXPECT_EQ(d.run("session grow s.json --revision 1 --kind environment --value MY_TOOL --approver 'python3 approve.py'"), 0)
      << d.read("out.txt");
  EXPECT_EQ(d.run("session grow s.json --revision 1 --kind environment --value OTHER --approver 'python3 approve.py'"), 201);
  EXPECT_EQ(d.run("session grow s.json --revision 2 --kind environment --value OTHER"), 200);  // deny_all
  EXPECT_EQ(d.run("exec --request stale.json --rules rules.json --session s.json"), 201);
  EXPECT_NE(d.read("out.txt").find("stale boundary revision 1"), std::string::npos) << d.read("out.txt");
  EXPECT_EQ(d.run("session show s.json"), 0);
  EXPECT_NE(d.read("out.txt").find("r2"), std::string::npos);
  EXPECT_NE(d.read("out.txt").find("environment: MY_TOOL"), std::string::npos) << d.read("out.txt");
}

TEST(GovernanceCli, AuditVerifyNamesTheBadLine) {
  sandbox_dir d;
  d.write("rules.json", kRules);
  d.write("ok.json", shell_request("echo hi"));
  for (int i = 0; i < 3; ++i) ASSERT_EQ(d.run("exec --request ok.json --rules rules.json --workspace ws --audit a.jsonl"), 0);
  std::string log = d.read("a.jsonl");
  auto at = log.find("\"outcome\":\"started\"", log.find("\"outcome\":\"started\"") + 1);  // the second run's start
  ASSERT_NE(at, std::string::npos);
  std::size_t line = 1 + static_cast<std::size_t>(std::count(log.begin(), log.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
  log.replace(at, 19, "\"outcome\":\"startex\"");
  d.write("a.jsonl", log);
  EXPECT_EQ(d.run("audit verify a.jsonl"), 1);
  EXPECT_NE(d.read("out.txt").find("line " + std::to_string(line) + ": hash mismatch"), std::string::npos) << d.read("out.txt");
  EXPECT_EQ(d.run("audit show a.jsonl"), 1);
  EXPECT_NE(d.read("out.txt").find("BAD at line " + std::to_string(line)), std::string::npos);
  // The runtime will not append to a log it cannot vouch for.
  EXPECT_EQ(d.run("exec --request ok.json --rules rules.json --workspace ws --audit a.jsonl"), 125);
  EXPECT_EQ(d.run("audit verify nothing.jsonl"), 125);
}

// cordon audit verify on a log whose head file is gone fails (exit 1)
// unless the caller says no head is kept; a keyed head verifies with its key
// file and fails with another.
TEST(GovernanceCli, AuditVerifyWantsAHeadOrAKey) {
  sandbox_dir d;
  d.write("rules.json", kRules);
  d.write("ok.json", shell_request("echo hi"));
  ASSERT_EQ(d.run("exec --request ok.json --rules rules.json --workspace ws --audit a.jsonl"), 0) << d.read("out.txt");
  fs::remove(d.path + "/a.jsonl.head");
  EXPECT_EQ(d.run("audit verify a.jsonl"), 1);
  EXPECT_NE(d.read("out.txt").find("no head file"), std::string::npos) << d.read("out.txt");
  EXPECT_EQ(d.run("audit verify --no-head a.jsonl"), 0) << d.read("out.txt");
  d.write("key", std::string(32, 'k'));
  d.write("other-key", std::string(32, 'o'));
  ASSERT_EQ(d.run("exec --request ok.json --rules rules.json --workspace ws --audit b.jsonl --audit-key-file key"), 0)
      << d.read("out.txt");
  EXPECT_EQ(d.run("audit verify --head-key-file key b.jsonl"), 0) << d.read("out.txt");
  EXPECT_NE(d.read("out.txt").find("keyed head"), std::string::npos) << d.read("out.txt");
  EXPECT_EQ(d.run("audit verify --head-key-file other-key b.jsonl"), 1) << d.read("out.txt");
  EXPECT_NE(d.read("out.txt").find("MAC"), std::string::npos) << d.read("out.txt");
  EXPECT_EQ(d.run("audit verify --head-key-file missing-key b.jsonl"), 125);
}

TEST(GovernanceCli, RulesTest) {
  sandbox_dir d;
  d.write("good.json", kRules);
  EXPECT_EQ(d.run("rules test good.json"), 0);
  EXPECT_NE(d.read("out.txt").find("ok: 3 rules"), std::string::npos);
  d.write("wrong.json", R"({"schema_version": 1, "rules": [
    {"id": "r", "reason": "x", "decision": "allow", "commands": ["ls"]}],
    "examples": [{"request": {"action": "shell", "risk": "low", "command": "ls; rm x"}, "decision": "allow"}]})");
  EXPECT_EQ(d.run("rules test wrong.json"), 1);
  EXPECT_NE(d.read("out.txt").find("/examples/0"), std::string::npos) << d.read("out.txt");
  EXPECT_EQ(d.run("rules test nothing.json"), 125);  // cannot be read (docs/governance.md), as audit verify
}

}  // namespace

namespace {

// cordon exec killed with SIGKILL while its command runs: the log verifies,
// and verify and show name the run as interrupted.
// cordon exec --session keeps what changed the session file while its
// command ran: a growth another cordon made meanwhile (before, exec wrote back
// the copy it had read at its start, and the growth was lost) and the grant
// this exec recorded.
// Lets a command blocked reading the FIFO at `path` go on: opens it for
// writing once the command has it open for reading, and closes it (the
// command reads its end). Gives up when `pid` ended first or after 30 s.
bool release_fifo(const std::string& path, pid_t pid) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < until) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);  // ENXIO: no reader yet
    if (fd >= 0) return ::close(fd) == 0;
    siginfo_t ended{};  // WNOWAIT: the caller still reaps it, with its status
    if (::waitid(P_PID, static_cast<id_t>(pid), &ended, WEXITED | WNOHANG | WNOWAIT) == 0 && ended.si_pid == pid) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

TEST(GovernanceCli, AGrowthDuringAnExecIsKept) {
  sandbox_dir d;
  std::string rules = kRules;  // and cat, which waits on the FIFO below
  rules.replace(rules.find("\"sleep\"]"), std::string("\"sleep\"]").size(), "\"sleep\", \"cat\"]");
  d.write("rules.json", rules);
  // The command waits on a FIFO until the growth below is done: the exec is
  // running for the whole of the growth, however slow either is.
  const std::string fifo = d.path + "/ws/go";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0666), 0);
  d.write("ask.json", shell_request("mkdir made && cat " + fifo + " >/dev/null"));
  d.write("approve.py",
          "import json, sys\nr = json.load(sys.stdin)\n"
          "print(json.dumps({'decision': 'approved', 'scope': 'session', 'request_digest': r['request_digest']}))\n");
  ASSERT_EQ(d.run("session init s.json --workspace ws --id cli-test"), 0) << d.read("out.txt");
  const pid_t pid = d.start(
      "exec --request ask.json --rules rules.json --session s.json --approver 'python3 approve.py' --audit a.jsonl",
      "exec.txt");
  ASSERT_GE(pid, 0);
  EXPECT_TRUE(d.run_started("a.jsonl"));
  EXPECT_EQ(d.run("session grow s.json --revision 1 --kind environment --value MY_TOOL --approver 'python3 approve.py'"), 0)
      << d.read("out.txt");
  EXPECT_TRUE(release_fifo(fifo, pid)) << "the exec's command never opened the FIFO: " << d.read("exec.txt");
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0) << d.read("exec.txt");
  EXPECT_EQ(d.run("session show s.json"), 0);
  EXPECT_NE(d.read("out.txt").find("revision 2"), std::string::npos) << d.read("out.txt");
  EXPECT_NE(d.read("s.json").find("MY_TOOL"), std::string::npos) << d.read("s.json");
  const auto session = nlohmann::json::parse(d.read("s.json"), nullptr, false);
  EXPECT_EQ(session["approvals"].size(), 1u) << "the exec's session grant: " << d.read("s.json");
}

TEST(GovernanceCli, KilledExecShowsAsInterrupted) {
  sandbox_dir d;
  d.write("rules.json", kRules);
  d.write("long.json", shell_request("echo started && sleep 30"));
  const pid_t pid = d.start("exec --request long.json --rules rules.json --workspace ws --audit a.jsonl", "/dev/null");
  ASSERT_GE(pid, 0);
  const bool started = d.run_started("a.jsonl");
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  ASSERT_TRUE(started);
  EXPECT_EQ(d.run("audit verify a.jsonl"), 0) << d.read("out.txt");
  EXPECT_NE(d.read("out.txt").find("interrupted: run "), std::string::npos) << d.read("out.txt");
  EXPECT_EQ(d.run("audit show a.jsonl"), 0);
  EXPECT_NE(d.read("out.txt").find("INTERRUPTED"), std::string::npos) << d.read("out.txt");
}

// The rules of the worked example, of these tests and the default rules for
// coding agents (with their command forms) are valid under the published
// schema (python3-jsonschema, as the policy schema's corpus test); a form
// with neither options nor operands is not.
TEST(GovernanceCli, RulesSchemaAcceptsTheExamples) {
  sandbox_dir d;
  d.write("rules.json", kRules);
  std::string defaults(cordon::governance::coding_agent_rules_json());
  for (auto at = defaults.find("{workspace}"); at != std::string::npos; at = defaults.find("{workspace}")) {
    defaults.replace(at, 11, "/ws");  // as rules_from_json expands it
  }
  d.write("defaults.json", defaults);
  const char* source = std::getenv("CORDON_SOURCE_DIR");
  std::string root = source != nullptr && *source != '\0' ? source : CORDON_SOURCE_DIR;
  std::string script =
      "import json,sys,jsonschema\n"
      "schema=json.load(open(sys.argv[1]))\n"
      "jsonschema.Draft202012Validator.check_schema(schema)\n"
      "v=jsonschema.Draft202012Validator(schema)\n"
      "page=open(sys.argv[2]).read()\n"
      "start=page.index('<!-- file: agent-rules.json -->')\n"
      "body=page[page.index('```json',start)+7:page.index('\\n```',page.index('```json',start)+7)]\n"
      "docs=[json.loads(body), json.load(open(sys.argv[3])), json.load(open(sys.argv[4]))]\n"
      "bad=json.loads(body); bad['rules'][0]['allow']=True\n"
      "form=json.load(open(sys.argv[4])); form['rules'][4]['commands'].append({'command': 'rm'})\n"
      "docs_bad=[bad, form]\n"
      "errors=[e.message for doc in docs for e in v.iter_errors(doc)]\n"
      "missed=[1 for doc in docs_bad if not list(v.iter_errors(doc))]\n"
      "print('errors', errors, 'missed', missed)\n"
      "sys.exit(1 if errors or missed else 0)\n";
  d.write("check.py", script);
  std::string command = "cd '" + d.path + "' && python3 check.py '" + root + "/schemas/capability_rules.v1.schema.json' '" +
                        root + "/docs/governance.md' rules.json defaults.json >out.txt 2>&1";
  int status = std::system(command.c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << d.read("out.txt");
}

// The audit log is cordon's record of what the command did: a command
// allowed to write the workspace must not be able to write the log (nor its
// head, nor the session file) when they lie in it, or it could break the
// chain (every later exec then refuses the log) or append forged records.
TEST(GovernanceCli, TheCommandCannotWriteItsOwnAuditLog) {
  sandbox_dir d;
  d.write("rules.json", R"({"schema_version": 1, "rules": [
    {"id": "tools", "reason": "harmless", "decision": "allow", "commands": ["echo", "tee"]}]})");
  d.write("ok.json", shell_request("echo hi"));
  d.write("forge.json", shell_request("echo forged | tee -a audit.jsonl audit.jsonl.head"));
  std::string common = " --rules rules.json --workspace . --audit audit.jsonl";
  ASSERT_EQ(d.run("exec --request ok.json" + common), 0) << d.read("out.txt");
  (void)d.run("exec --request forge.json" + common);
  EXPECT_EQ(d.read("audit.jsonl").find("\nforged\n"), std::string::npos) << d.read("out.txt");
  EXPECT_EQ(d.read("audit.jsonl.head").find("forged"), std::string::npos);
  EXPECT_EQ(d.run("audit verify audit.jsonl"), 0) << d.read("out.txt");
  EXPECT_EQ(d.run("exec --request ok.json" + common), 0) << d.read("out.txt");
}

}  // namespace
