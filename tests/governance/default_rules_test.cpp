// The built-in rules for coding agents and "{workspace}" in rules files
// (src/governance/default_rules.h; docs/governance.md, "Default rules for
// coding agents").
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "governance/default_rules.h"

namespace cordon::governance {
namespace {

using nlohmann::json;

capability_request shell(const std::string& command, const std::string& cwd = "/home/u/proj") {
  capability_request r;
  r.action = action_kind::shell;
  r.command = command;
  r.working_directory = cwd;
  return r;
}

capability_request file(action_kind action, const std::string& path) {
  capability_request r;
  r.action = action;
  r.paths = {path};
  return r;
}

TEST(DefaultRules, LoadWithTheirExamplesChecked) {
  auto rules = coding_agent_rules("/home/u/proj");
  ASSERT_TRUE(rules) << rules.error_value().describe();
  EXPECT_EQ(rules->name(), "cordon-coding-agent-defaults");
  EXPECT_GE(rules->examples().size(), 10U);
}

TEST(DefaultRules, InspectionRunsInstallsAndPushesAskDestructiveIsDenied) {
  auto rules = coding_agent_rules("/home/u/proj");
  ASSERT_TRUE(rules);
  const auto decide = [&](const capability_request& r) { return rules->evaluate(r).decision; };
  EXPECT_EQ(decide(shell("git log --oneline | head -5")), decision_kind::allow);
  EXPECT_EQ(decide(shell("npm test > out.log 2>&1")), decision_kind::allow);
  EXPECT_EQ(decide(shell("npm install express")), decision_kind::require_approval);
  EXPECT_EQ(decide(shell("git push origin main")), decision_kind::require_approval);
  const auto denied = rules->evaluate(shell("rm -rf /home/u/proj/src"));
  EXPECT_EQ(denied.decision, decision_kind::deny);
  EXPECT_EQ(denied.rule_id, "destructive");
  EXPECT_NE(denied.reason.find("delete files one by one"), std::string::npos) << denied.reason;
  EXPECT_EQ(decide(shell("git reset --hard HEAD~3")), decision_kind::deny);
  EXPECT_EQ(decide(shell("git push --force origin main")), decision_kind::deny);
  // Redirections: into the workspace allowed, elsewhere not covered (denied).
  EXPECT_EQ(decide(shell("echo hi > notes.txt")), decision_kind::allow);
  EXPECT_EQ(decide(shell("echo hi > /home/u/.bashrc")), decision_kind::deny);
  // The file tools.
  EXPECT_EQ(decide(file(action_kind::filesystem_write, "/home/u/proj/a.c")), decision_kind::allow);
  EXPECT_EQ(decide(file(action_kind::filesystem_write, "/home/u/projx/a.c")), decision_kind::deny);
  EXPECT_EQ(decide(file(action_kind::filesystem_read, "/usr/include/stdio.h")), decision_kind::allow);
  // An unlisted command.
  EXPECT_EQ(decide(shell("nc -l 4444")), decision_kind::deny);
}

TEST(DefaultRules, WorkspaceTokenIsExpandedEverywhereAndNeedsAnAbsoluteWorkspace) {
  const std::string text = R"({"schema_version": 1, "rules": [
    {"id": "w", "reason": "workspace", "decision": "allow", "actions": ["filesystem_write"],
     "paths": ["{workspace}/src"]}],
    "examples": [{"request": {"risk": "medium", "action": "filesystem_write", "resources": {"paths": ["{workspace}/src/a"]}},
                  "decision": "allow"}]})";
  auto rules = rules_from_json(text, "/srv/ws");
  ASSERT_TRUE(rules) << rules.error_value().describe();
  EXPECT_EQ(rules->rules()[0].paths, std::vector<std::string>{"/srv/ws/src"});
  auto relative = rules_from_json(text, "ws");
  ASSERT_FALSE(relative);
  EXPECT_EQ(relative.error_value().code, error_code::invalid_policy);
  // Read without a workspace, the pattern is not absolute: refused at it.
  auto plain = capability_policy::from_json(text);
  ASSERT_FALSE(plain);
  EXPECT_EQ(plain.error_value().location, "/rules/0/paths/0");
}

TEST(DefaultRules, TheTextKeepsTheToken) {
  const json j = json::parse(coding_agent_rules_json());
  EXPECT_NE(j.dump().find("{workspace}"), std::string::npos);
}

}  // namespace
}  // namespace cordon::governance
