// Approval services and the ledger of scoped grants.
#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "cordon/governance/approval.h"

namespace cordon::governance {
namespace {

using namespace std::chrono_literals;

approval_request sample(const std::string& command = "git push", const std::string& session = "s1") {
  approval_request r;
  r.request.action = action_kind::shell;
  r.request.risk = risk_level::medium;
  r.request.command = command;
  r.request_digest = request_digest(r.request);
  r.normalized_form = normalized_form(r.request);
  r.policy.decision = decision_kind::require_approval;
  r.policy.reason = "pushing needs a human";
  r.session_id = session;
  r.workspace = "/work/repo";
  r.sandbox_policy_digest = "sha256:aaaa";
  r.backend = "linux-namespaces";
  r.plan_levels = {{"filesystem_write", "enforced", "landlock"}, {"memory", "partial", "rlimit"}};
  return r;
}

// An approver written in Python: `answer` is a Python expression over `r`,
// the request it read.
std::vector<std::string> python_approver(const std::string& answer) {
  return {"python3", "-c", "import json,sys\nr=json.load(sys.stdin)\nprint(json.dumps(" + answer + "))"};
}

TEST(Approval, DenyAllAndAllowAll) {
  deny_all_approval_service deny;
  EXPECT_EQ(deny.decide(sample()).kind, approval_decision_kind::denied);
  EXPECT_FALSE(deny.for_tests_only());
  allow_all_approval_service allow(approval_scope::session);
  auto d = allow.decide(sample());
  EXPECT_EQ(d.kind, approval_decision_kind::approved);
  EXPECT_EQ(d.scope, approval_scope::session);
  EXPECT_TRUE(allow.for_tests_only());
  EXPECT_NE(std::string(allow.name()).find("tests only"), std::string::npos);
}

TEST(Approval, ExternalApproverSeesThePlanAndAnswers) {
  auto r = sample();
  char dir[] = "/tmp/cordon-approval-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  std::string seen = std::string(dir) + "/seen.json";
  external_command_approval_service svc(
      {"python3", "-c",
       "import json,sys\nr=json.load(sys.stdin)\nopen('" + seen + "','w').write(json.dumps(r))\n"
       "print(json.dumps({'decision':'approved','scope':'session','reason':'looks fine','request_digest':r['request_digest']}))"},
      10s);
  auto d = svc.decide(r);
  EXPECT_EQ(d.kind, approval_decision_kind::approved) << d.reason;
  EXPECT_EQ(d.scope, approval_scope::session);
  EXPECT_EQ(d.reason, "looks fine");
  std::ifstream in(seen);
  auto shown = nlohmann::json::parse(in);
  EXPECT_EQ(shown["request_digest"], r.request_digest);
  EXPECT_EQ(shown["request"]["command"], "git push");
  EXPECT_EQ(shown["sandbox"]["controls"][1]["control"], "memory");
  EXPECT_EQ(shown["sandbox"]["controls"][1]["level"], "partial");
  EXPECT_EQ(shown["policy"]["reason"], "pushing needs a human");
  std::remove(seen.c_str());
  ::rmdir(dir);
}

TEST(Approval, ExternalApproverFailuresDeny) {
  auto r = sample();
  struct row {
    std::vector<std::string> argv;
    const char* reason_part;
  } rows[] = {
      {python_approver("{'decision':'approved','scope':'once','request_digest':'sha256:other'}"), "another request"},
      {python_approver("{'decision':'approved','request_digest':r['request_digest'],'plan':{'memory':'not_enforced'}}"),
       "unknown field"},
      {python_approver("{'decision':'approved','scope':'forever','request_digest':r['request_digest']}"), "/scope"},
      {python_approver("{'decision':'yes','request_digest':r['request_digest']}"), "/decision"},
      {python_approver("{'decision':'approved'}"), "request_digest"},
      {{"python3", "-c", "print('approved')"}, "not a decision"},
      {{"python3", "-c", "import sys; sys.exit(3)"}, "status 3"},
      {{"python3", "-c", "import os; os.kill(os.getpid(), 9)"}, "signal 9"},
      {{"/nonexistent/approver"}, "could not run"},
      // Exits without reading its request: the write fails with EPIPE and the
      // SIGPIPE it raises must not kill the caller.
      {{"true"}, "not a decision"},
  };
  for (const auto& row : rows) {
    external_command_approval_service svc(row.argv, 10s);
    auto d = svc.decide(r);
    EXPECT_EQ(d.kind, approval_decision_kind::denied) << row.argv.back();
    EXPECT_NE(d.reason.find(row.reason_part), std::string::npos) << d.reason;
  }
}

TEST(Approval, ExternalApproverTimeoutDenies) {
  for (auto argv : {std::vector<std::string>{"sleep", "5"},
                    // Closes stdout at once but lives on: still a timeout.
                    std::vector<std::string>{"python3", "-c", "import os,time\nos.close(1)\ntime.sleep(5)"}}) {
    external_command_approval_service svc(argv, 300ms);
    auto start = std::chrono::steady_clock::now();
    auto d = svc.decide(sample());
    auto took = std::chrono::steady_clock::now() - start;
    EXPECT_EQ(d.kind, approval_decision_kind::denied);
    EXPECT_NE(d.reason.find("within 300 ms"), std::string::npos) << d.reason;
    EXPECT_LT(took, 3s);
  }
}

TEST(Approval, TerminalApprover) {
  struct row {
    const char* typed;
    approval_decision_kind kind;
    approval_scope scope;
  } rows[] = {
      {"once\n", approval_decision_kind::approved, approval_scope::once},
      {"s\n", approval_decision_kind::approved, approval_scope::session},
      {"workspace\n", approval_decision_kind::approved, approval_scope::workspace},
      {"manual\n", approval_decision_kind::manual_review, approval_scope::once},
      {"yes\n", approval_decision_kind::denied, approval_scope::once},
      {"", approval_decision_kind::denied, approval_scope::once},
  };
  for (const auto& row : rows) {
    int in[2], out[2];
    ASSERT_EQ(::pipe(in), 0);
    ASSERT_EQ(::pipe(out), 0);
    ASSERT_EQ(::write(in[1], row.typed, std::strlen(row.typed)), static_cast<ssize_t>(std::strlen(row.typed)));
    ::close(in[1]);
    terminal_approval_service tty(in[0], out[1]);
    auto d = tty.decide(sample());
    ::close(out[1]);
    std::string shown(65536, '\0');
    shown.resize(static_cast<std::size_t>(std::max<ssize_t>(0, ::read(out[0], shown.data(), shown.size()))));
    ::close(in[0]);
    ::close(out[0]);
    EXPECT_EQ(d.kind, row.kind) << row.typed;
    EXPECT_EQ(d.scope, row.scope) << row.typed;
    EXPECT_NE(shown.find("memory: partial (rlimit)"), std::string::npos) << shown;
    EXPECT_NE(shown.find("command: git push"), std::string::npos);
  }
}

TEST(Approval, LedgerScopes) {
  approval_ledger ledger;
  auto push = sample("git push", "s1");
  ledger.record(push, {approval_decision_kind::approved, approval_scope::once, "", "", ""});
  ledger.record(push, {approval_decision_kind::denied, approval_scope::session, "", "", ""});
  EXPECT_EQ(ledger.size(), 0u);  // once and refusals are never remembered
  ledger.record(push, {approval_decision_kind::approved, approval_scope::session, "", "", ""});
  EXPECT_EQ(ledger.find(sample("git push", "s1")), approval_scope::session);
  EXPECT_FALSE(ledger.find(sample("git push", "s2")));            // another session
  EXPECT_FALSE(ledger.find(sample("git push --force", "s1")));    // another command
  auto traced = sample("git push", "s1");
  traced.request.trace_id = "other-trace";                         // same normalized form
  traced.normalized_form = normalized_form(traced.request);
  EXPECT_EQ(ledger.find(traced), approval_scope::session);

  auto ws = sample("make", "s1");
  ledger.record(ws, {approval_decision_kind::approved, approval_scope::workspace, "", "", ""});
  auto other_session = sample("make", "s9");
  EXPECT_EQ(ledger.find(other_session), approval_scope::workspace);
  other_session.sandbox_policy_digest = "sha256:bbbb";             // the boundary changed
  EXPECT_FALSE(ledger.find(other_session));
  other_session = sample("make", "s9");
  other_session.workspace = "/work/other";
  EXPECT_FALSE(ledger.find(other_session));

  auto back = approval_ledger::from_json(ledger.to_json());
  ASSERT_TRUE(back) << back.error_value().describe();
  EXPECT_EQ(back->size(), 2u);
  EXPECT_EQ(back->find(sample("git push", "s1")), approval_scope::session);
  EXPECT_FALSE(approval_ledger::from_json(R"([["once","x"]])"));
}

// The request's text is the requester's: control characters in it must not
// reach the terminal raw, where "\r" and escape sequences could redraw the
// question to show another command than the one being approved.
TEST(Approval, TerminalApproverShowsControlCharactersInert) {
  auto ask = sample("rm -rf ~\r\033[2Kgit push");
  ask.request.paths = {"/work/\033]0;title\007x"};
  int in[2], out[2];
  ASSERT_EQ(::pipe(in), 0);
  ASSERT_EQ(::pipe(out), 0);
  ASSERT_EQ(::write(in[1], "no\n", 3), 3);
  ::close(in[1]);
  terminal_approval_service tty(in[0], out[1]);
  auto d = tty.decide(ask);
  ::close(out[1]);
  std::string shown(65536, '\0');
  shown.resize(static_cast<std::size_t>(std::max<ssize_t>(0, ::read(out[0], shown.data(), shown.size()))));
  ::close(in[0]);
  ::close(out[0]);
  EXPECT_EQ(d.kind, approval_decision_kind::denied);
  EXPECT_EQ(shown.find('\033'), std::string::npos) << shown;
  EXPECT_EQ(shown.find('\r'), std::string::npos) << shown;
  EXPECT_EQ(shown.find('\007'), std::string::npos) << shown;
  EXPECT_NE(shown.find("rm -rf ~"), std::string::npos) << shown;
}

// On a real terminal, what was typed before the question is not its answer:
// an "once" typed ahead (or left by a command's keystrokes) is discarded, and
// the line typed after the question decides (here "no": denied).
TEST(Approval, TypeAheadDoesNotAnswerTheTerminalQuestion) {
  int master = -1, slave = -1;
  ASSERT_EQ(::openpty(&master, &slave, nullptr, nullptr, nullptr), 0);
  ASSERT_EQ(::write(master, "once\n", 5), 5);
  // The line discipline has the whole line: the slave polls readable (canonical mode).
  pollfd typed{slave, POLLIN, 0};
  ASSERT_EQ(::poll(&typed, 1, 10000), 1) << "the typed-ahead line never reached the terminal's input queue";
  std::thread person([master] {
    std::string screen;
    char buffer[4096];
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (screen.find("Approve?") == std::string::npos && std::chrono::steady_clock::now() < end) {
      pollfd p{master, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      const ssize_t n = ::read(master, buffer, sizeof buffer);
      if (n <= 0) break;
      screen.append(buffer, static_cast<std::size_t>(n));
    }
    // The queue is flushed before the question is written (terminal_approver.cpp):
    // an answer written once the question is seen is never discarded.
    (void)!::write(master, "no\n", 3);
  });
  terminal_approval_service tty(slave, slave);
  auto d = tty.decide(sample());
  person.join();
  ::close(slave);
  ::close(master);
  EXPECT_EQ(d.kind, approval_decision_kind::denied) << d.reason;
}

}  // namespace
}  // namespace cordon::governance
