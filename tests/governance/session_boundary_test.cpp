// The session boundary: revisions that only grow, each growth approved and
// audited, stale revisions rejected, history kept.
#include <gtest/gtest.h>

#include <filesystem>

#include "cordon/governance/session_boundary.h"
#include "cordon/profiles.h"

namespace cordon::governance {
namespace {

struct workspace {
  std::string path;
  workspace() {
    char t[] = "/tmp/cordon-session-XXXXXX";
    path = ::mkdtemp(t);
  }
  ~workspace() { std::filesystem::remove_all(path); }
};

session_boundary make(const workspace& ws) {
  auto b = session_boundary::create("s1", ws.path, *builtin_profile("workspace-write"));
  EXPECT_TRUE(b) << b.error_value().describe();
  return *b;
}

TEST(SessionBoundary, GrowsOnlyWithApproval) {
  workspace ws;
  auto b = make(ws);
  in_memory_audit_sink audit;
  EXPECT_EQ(b.revision(), 1u);
  boundary_growth g{1, growth_kind::writable, {ws.path + "/../cordon-extra"}, "build output", "alice"};
  // Without an approval service, and with deny_all: no growth.
  EXPECT_EQ(b.grow(g, nullptr, audit).status, growth_status::rejected);
  deny_all_approval_service deny;
  EXPECT_EQ(b.grow(g, &deny, audit).status, growth_status::denied);
  EXPECT_EQ(b.revision(), 1u);
  allow_all_approval_service allow;
  auto before = b.policy();
  auto r = b.grow(g, &allow, audit);
  ASSERT_EQ(r.status, growth_status::grown) << r.reason;
  EXPECT_EQ(b.revision(), 2u);
  EXPECT_EQ(r.revision, 2u);
  // Everything the old boundary had is still there.
  for (const auto& w : before.filesystem.writable) {
    EXPECT_NE(std::find(b.policy().filesystem.writable.begin(), b.policy().filesystem.writable.end(), w),
              b.policy().filesystem.writable.end());
  }
  ASSERT_EQ(b.history().size(), 2u);
  EXPECT_NE(b.history()[1].growth.find("writable:"), std::string::npos);
  EXPECT_NE(b.history()[0].policy_digest, b.history()[1].policy_digest);
  EXPECT_EQ(audit.named("boundary.grown").size(), 1u);
  EXPECT_EQ(audit.named("boundary.approval").back().attributes.at("approval_for_tests_only"), "true");
  EXPECT_EQ(b.context().boundary_revision, 2u);
}

TEST(SessionBoundary, StaleRevisionIsRejected) {
  workspace ws;
  auto b = make(ws);
  in_memory_audit_sink audit;
  allow_all_approval_service allow;
  ASSERT_EQ(b.grow({1, growth_kind::environment, {"MY_TOOL_HOME"}, "", ""}, &allow, audit).status, growth_status::grown);
  auto stale = b.grow({1, growth_kind::environment, {"MY_OTHER"}, "", ""}, &allow, audit);
  EXPECT_EQ(stale.status, growth_status::rejected);
  EXPECT_NE(stale.reason.find("stale revision 1"), std::string::npos) << stale.reason;
  EXPECT_EQ(audit.named("boundary.rejected").back().outcome, "stale_revision");
  EXPECT_EQ(b.revision(), 2u);
  // Nothing to add is not a growth.
  EXPECT_EQ(b.grow({2, growth_kind::environment, {"MY_TOOL_HOME"}, "", ""}, &allow, audit).status, growth_status::rejected);
  EXPECT_EQ(b.grow({2, growth_kind::environment, {}, "", ""}, &allow, audit).status, growth_status::rejected);
}

TEST(SessionBoundary, HostsTurnADeniedNetworkIntoAFilteredOne) {
  workspace ws;
  auto b = make(ws);
  in_memory_audit_sink audit;
  allow_all_approval_service allow;
  ASSERT_EQ(b.policy().network.mode, network_mode::denied);
  auto r = b.grow({1, growth_kind::hosts, {"pypi.org:443"}, "", ""}, &allow, audit);
  ASSERT_EQ(r.status, growth_status::grown) << r.reason;
  EXPECT_EQ(b.policy().network.mode, network_mode::filtered);
  ASSERT_EQ(b.policy().network.rules.size(), 1u);
  EXPECT_EQ(b.policy().network.rules[0].host, "pypi.org");
  EXPECT_EQ(b.policy().network.default_action, rule_action::deny);
  EXPECT_EQ(b.grow({2, growth_kind::hosts, {"http://bad/"}, "", ""}, &allow, audit).status, growth_status::rejected);
}

TEST(SessionBoundary, ApproverSeesTheGrownPlan) {
  workspace ws;
  auto b = make(ws);
  in_memory_audit_sink audit;
  struct capture final : approval_service {
    approval_request seen;
    approval_decision decide(const approval_request& r) override {
      seen = r;
      return {approval_decision_kind::denied, approval_scope::once, "no", "", ""};
    }
    std::string_view name() const noexcept override { return "capture"; }
  } approver;
  EXPECT_EQ(b.grow({1, growth_kind::readable, {"/opt"}, "tools", ""}, &approver, audit).status, growth_status::denied);
  EXPECT_FALSE(approver.seen.plan_levels.empty());
  EXPECT_EQ(approver.seen.request.action, action_kind::filesystem_read);
  EXPECT_NE(approver.seen.policy.reason.find("readable: /opt"), std::string::npos);
}

TEST(SessionBoundary, SessionFileRoundTripAndTamper) {
  workspace ws;
  auto b = make(ws);
  in_memory_audit_sink audit;
  allow_all_approval_service allow;
  ASSERT_EQ(b.grow({1, growth_kind::environment, {"MY_TOOL_HOME"}, "", ""}, &allow, audit).status, growth_status::grown);
  approval_ledger ledger;
  auto text = b.to_json(ledger);
  auto back = session_boundary::from_json(text);
  ASSERT_TRUE(back) << back.error_value().describe();
  EXPECT_EQ(back->first.revision(), 2u);
  EXPECT_EQ(back->first.policy(), b.policy());
  // A policy edited by hand no longer matches the recorded digest.
  auto edited = text;
  auto at = edited.find("\"MY_TOOL_HOME\"");
  ASSERT_NE(at, std::string::npos);
  edited.replace(at, 14, "\"MY_TOOL_HOMX\"");
  auto bad = session_boundary::from_json(edited);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error_value().location, "/policy");
}

// A session file is input: a history entry with a field of the wrong type
// is an error, not an exception out of from_json.
TEST(SessionBoundary, MalformedHistoryIsAnErrorNotAnException) {
  workspace ws;
  auto b = make(ws);
  approval_ledger ledger;
  auto text = b.to_json(ledger);
  for (const char* field : {"\"policy_digest\": \"", "\"reason\": \"", "\"timestamp\": \""}) {
    auto edited = text;
    auto at = edited.find(field);
    ASSERT_NE(at, std::string::npos) << field;
    // "field": "..."  ->  "field": 7, "x": "..."
    std::string key(field);
    edited.replace(at, key.size(), key.substr(0, key.size() - 1) + "7, \"unused\": \"");
    result<std::pair<session_boundary, approval_ledger>> read = make_error(error_code::invalid_policy, "");
    EXPECT_NO_THROW(read = session_boundary::from_json(edited)) << field;
    EXPECT_FALSE(read) << field;
  }
}

// A growth's subject id is the caller's text; one that is not valid UTF-8
// (a surrogate, an overlong form) is refused, not thrown out of grow().
TEST(SessionBoundary, GrowthWithBadTextDoesNotThrow) {
  workspace ws;
  auto b = make(ws);
  in_memory_audit_sink audit;
  allow_all_approval_service allow;
  for (const char* bad : {"\xed\xa0\x80", "\xc0\xaf"}) {
    growth_result got;
    EXPECT_NO_THROW(got = b.grow({1, growth_kind::environment, {"MY_TOOL_HOME"}, "", bad}, &allow, audit)) << bad;
    EXPECT_NE(got.status, growth_status::grown);
  }
}

}  // namespace
}  // namespace cordon::governance
