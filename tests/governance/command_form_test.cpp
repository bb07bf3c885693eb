// Command forms in rules files: a command pattern with option and operand
// sets, matched as the program reads its arguments (capability_policy.h,
// command_form; docs/governance.md, "Command forms").
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cordon/governance/capability_policy.h"

namespace cordon::governance {
namespace {

using nlohmann::json;

capability_request shell(const std::string& command) {
  capability_request r;
  r.action = action_kind::shell;
  r.command = command;
  return r;
}

result<capability_policy> rules(const json& commands, const std::string& decision = "deny") {
  // A deny form beside an allow-everything rule; an allow form alone (an uncovered part is denied).
  json list = json::array({{{"id", "form"}, {"reason", "the form"}, {"decision", decision}, {"commands", commands}}});
  if (decision != "allow") list.push_back({{"id", "rest"}, {"reason", "everything else"}, {"decision", "allow"}, {"actions", {"shell"}}});
  return capability_policy::from_json(json{{"schema_version", 1}, {"rules", list}}.dump());
}

// Is the segment covered by the form (rule "form") rather than by "rest"?
bool form_decides(const capability_policy& p, const std::string& command) {
  return p.evaluate(shell(command)).rule_id == "form";
}

TEST(CommandForm, OptionsAreReadAsGetoptLongReadsThem) {
  auto p = rules(json::array({{{"command", "rm"}, {"options", {"-r", "--recursive"}}}}));
  ASSERT_TRUE(p) << p.error_value().describe();
  for (const char* hit : {"rm -r x", "rm -vr x", "rm -fvr x", "rm x -r", "rm --recursive x", "rm --recursive=1 x",
                          "rm --rec x", "rm --r x", "rm $OPTS x"}) {
    EXPECT_TRUE(form_decides(*p, hit)) << hit;
  }
  for (const char* miss : {"rm x", "rm -v x", "rm -- -r", "rm --verbose x", "rm --recursivex x", "rmdir -r x"}) {
    EXPECT_FALSE(form_decides(*p, miss)) << miss;
  }
}

TEST(CommandForm, ValuesAreNotOptionsOrOperands) {
  auto p = rules(json::array({{{"command", "git checkout"}, {"options", {"-f"}}, {"with_value", {"-b", "--orphan"}}},
                              {{"command", "git checkout"}, {"operands", {"."}}, {"with_value", {"-b", "--orphan"}}}}));
  ASSERT_TRUE(p) << p.error_value().describe();
  EXPECT_TRUE(form_decides(*p, "git checkout -qf main"));
  EXPECT_TRUE(form_decides(*p, "git checkout -b x ."));
  EXPECT_TRUE(form_decides(*p, "git -C sub -c a.b=c --no-pager checkout -- ."));
  EXPECT_FALSE(form_decides(*p, "git checkout -bf main"));  // -b takes "f"
  EXPECT_FALSE(form_decides(*p, "git checkout -b . main"));  // "." is the branch name
  EXPECT_FALSE(form_decides(*p, "git checkout --orphan . main"));
  EXPECT_FALSE(form_decides(*p, "git checkout main"));
}

TEST(CommandForm, OneDashWordsAndBothLists) {
  auto p = rules(json::array({{{"command", "find"}, {"options", {"-delete"}}},
                              {{"command", "git push"}, {"options", {"--force"}}, {"operands", {"+*"}}}}));
  ASSERT_TRUE(p) << p.error_value().describe();
  EXPECT_TRUE(form_decides(*p, "find . -name x -delete"));
  EXPECT_FALSE(form_decides(*p, "find . -name x"));
  EXPECT_FALSE(form_decides(*p, "find . -depth"));
  // Both lists: an option of the first and an operand of the second.
  EXPECT_TRUE(form_decides(*p, "git push --force origin +main"));
  EXPECT_FALSE(form_decides(*p, "git push --force origin main"));
}

TEST(CommandForm, AllowRulesTakeNoAbbreviationAndNoDynamicWord) {
  auto p = rules(json::array({{{"command", "git config"}, {"options", {"--get", "--list"}}}}), "allow");
  ASSERT_TRUE(p) << p.error_value().describe();
  EXPECT_EQ(p->evaluate(shell("git config --get user.name")).decision, decision_kind::allow);
  EXPECT_EQ(p->evaluate(shell("git config -l")).decision, decision_kind::deny);
  EXPECT_EQ(p->evaluate(shell("git config --ge user.name")).decision, decision_kind::deny);
  EXPECT_EQ(p->evaluate(shell("git config $OPT user.name")).decision, decision_kind::deny);
}

TEST(CommandForm, BadFormsAreTypedErrorsAtTheirPlace) {
  struct bad {
    json commands;
    const char* location;
  };
  const bad cases[] = {
      {json::array({"ls", {{"command", "rm"}}}), "/rules/0/commands/1"},
      {json::array({{{"command", " "}, {"options", {"-r"}}}}), "/rules/0/commands/0/command"},
      {json::array({{{"options", {"-r"}}}}), "/rules/0/commands/0/command"},
      {json::array({{{"command", "rm"}, {"options", {"r"}}}}), "/rules/0/commands/0/options/0"},
      {json::array({{{"command", "rm"}, {"options", {"--"}}}}), "/rules/0/commands/0/options/0"},
      {json::array({{{"command", "rm"}, {"options", {"--r=1"}}}}), "/rules/0/commands/0/options/0"},
      {json::array({{{"command", "rm"}, {"options", {"-r"}}, {"with_value", {"-*"}}}}), "/rules/0/commands/0/with_value/0"},
      {json::array({{{"command", "rm"}, {"operands", {""}}}}), "/rules/0/commands/0/operands/0"},
      {json::array({{{"command", "rm"}, {"flags", {"-r"}}}}), "/rules/0/commands/0/flags"},
      {json::array({{{"command", "rm"}, {"options", "-r"}}}), "/rules/0/commands/0/options"},
      {json::array({7}), "/rules/0/commands/0"},
  };
  for (const auto& c : cases) {
    auto p = rules(c.commands);
    ASSERT_FALSE(p) << c.commands.dump();
    EXPECT_EQ(p.error_value().code, error_code::invalid_policy) << c.commands.dump();
    EXPECT_EQ(p.error_value().location, c.location) << c.commands.dump() << ": " << p.error_value().describe();
  }
}

TEST(CommandForm, FromRulesChecksFormsToo) {
  capability_rule r;
  r.id = "x";
  r.reason = "x";
  r.command_forms.push_back({"rm", {"recursive"}, {}, {}});
  auto p = capability_policy::from_rules("t", {r});
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error_value().location, "/rules/0/commands/0/options/0");
}

}  // namespace
}  // namespace cordon::governance
