// Capability rules: reading, examples checked at load, every decision path.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cordon/governance/capability_policy.h"

namespace cordon::governance {
namespace {

using nlohmann::json;

capability_request req(const std::string& text) {
  json j = json::parse(text);
  j["schema_version"] = 1;
  auto r = capability_request_from_json(j.dump());
  EXPECT_TRUE(r) << r.error_value().describe();
  return r ? *r : capability_request{};
}

constexpr const char* kRules = R"j({
  "schema_version": 1,
  "name": "agent",
  "rules": [
    {"id": "read-workspace", "reason": "the workspace is readable", "decision": "allow",
     "actions": ["filesystem_read"], "paths": ["/work"],
     "examples": {"match": [{"action": "filesystem_read", "risk": "low", "resources": {"paths": ["/work/a"]}}],
                  "not_match": [{"action": "filesystem_read", "risk": "low", "resources": {"paths": ["/workx"]}}]}},
    {"id": "no-secrets", "reason": "key files are never read", "decision": "deny",
     "paths": ["/**/*.pem", "/work/.env"]},
    {"id": "git-read", "reason": "read-only git", "decision": "allow", "actions": ["shell", "process"],
     "commands": ["git status", "git diff", "git log", "ls", "cat", "grep", "echo", "wc"]},
    {"id": "git-push", "reason": "pushing needs a human", "decision": "require_approval", "actions": ["shell", "process"],
     "commands": ["git push"]},
    {"id": "no-rm-rf", "reason": "recursive deletion is refused", "decision": "deny", "actions": ["shell", "process"],
     "commands": ["rm -rf", "rm -fr", "rm -r"]},
    {"id": "net", "reason": "the package index", "decision": "allow", "actions": ["network_outbound"],
     "hosts": ["**.pypi.org:443", "files.pythonhosted.org"]},
    {"id": "net-ssh", "reason": "no ssh out", "decision": "deny", "actions": ["network_outbound"], "hosts": ["*:22"]},
    {"id": "tmp-write", "reason": "scratch space", "decision": "allow", "actions": ["filesystem_write"], "paths": ["/tmp/**"]},
    {"id": "etc-guard", "reason": "system configuration", "decision": "deny", "actions": ["filesystem_write"], "paths": ["/etc"]},
    {"id": "env", "reason": "harmless variables", "decision": "allow", "actions": ["environment_access"], "variables": ["HOME", "LANG", "LC_*"]},
    {"id": "aws", "reason": "cloud credentials", "decision": "require_approval", "actions": ["secret_access"], "variables": ["AWS_*"]},
    {"id": "critical", "reason": "critical risk always asks", "decision": "require_approval", "risks": ["critical"]},
    {"id": "artifacts", "reason": "the release bot may activate artifacts", "decision": "allow",
     "actions": ["artifact_activation"], "tools": ["release-*"], "subjects": ["bot:*"]}
  ],
  "examples": [
    {"name": "status", "request": {"action": "shell", "risk": "low", "command": "git status && git diff | wc -l"}, "decision": "allow"},
    {"name": "push", "request": {"action": "shell", "risk": "low", "command": "git status; git push"}, "decision": "require_approval"},
    {"name": "rm", "request": {"action": "shell", "risk": "low", "command": "git push && rm -rf /"}, "decision": "deny"}
  ]
})j";

capability_policy load() {
  auto p = capability_policy::from_json(kRules);
  EXPECT_TRUE(p) << p.error_value().describe();
  return p ? *p : *capability_policy::from_rules("empty", {});
}

TEST(CapabilityPolicy, Decisions) {
  auto policy = load();
  struct row {
    const char* request;
    decision_kind expected;
    const char* rule;
  } rows[] = {
      {R"j({"action":"filesystem_read","risk":"low","resources":{"paths":["/work/src/a.c"]}})j", decision_kind::allow, "read-workspace"},
      {R"j({"action":"filesystem_read","risk":"low","resources":{"paths":["/work/keys/server.pem"]}})j", decision_kind::deny, "no-secrets"},
      {R"j({"action":"filesystem_read","risk":"low","resources":{"paths":["/work/.env"]}})j", decision_kind::deny, "no-secrets"},
      {R"j({"action":"filesystem_read","risk":"low","resources":{"paths":["/work/a","/home/x"]}})j", decision_kind::deny, ""},
      {R"j({"action":"filesystem_read","risk":"low","resources":{"paths":["/work/../etc/shadow"]}})j", decision_kind::deny, ""},
      {R"j({"action":"filesystem_write","risk":"low","resources":{"paths":["/tmp/x/y"]}})j", decision_kind::allow, "tmp-write"},
      {R"j({"action":"filesystem_write","risk":"low","resources":{"paths":["/tmp"]}})j", decision_kind::allow, "tmp-write"},
      {R"j({"action":"filesystem_write","risk":"low","resources":{"paths":["/etc/passwd"]}})j", decision_kind::deny, "etc-guard"},
      {R"j({"action":"filesystem_write","risk":"low","resources":{"paths":["/"]}})j", decision_kind::deny, "no-secrets"},
      {R"j({"action":"network_outbound","risk":"low","resources":{"hosts":["upload.pypi.org:443"]}})j", decision_kind::allow, "net"},
      {R"j({"action":"network_outbound","risk":"low","resources":{"hosts":["pypi.org:443"]}})j", decision_kind::allow, "net"},
      {R"j({"action":"network_outbound","risk":"low","resources":{"hosts":["pypi.org:80"]}})j", decision_kind::deny, ""},
      {R"j({"action":"network_outbound","risk":"low","resources":{"hosts":["pypi.org"]}})j", decision_kind::deny, "net-ssh"},
      {R"j({"action":"network_outbound","risk":"low","resources":{"hosts":["files.pythonhosted.org:22"]}})j", decision_kind::deny, "net-ssh"},
      {R"j({"action":"network_outbound","risk":"low","resources":{"hosts":["files.pythonhosted.org:443"]}})j", decision_kind::allow, "net"},
      {R"j({"action":"network_outbound","risk":"low","resources":{"hosts":["10.0.0.1:443"]}})j", decision_kind::deny, ""},
      {R"j({"action":"environment_access","risk":"low","resources":{"variables":["LC_ALL","HOME"]}})j", decision_kind::allow, "env"},
      {R"j({"action":"environment_access","risk":"low","resources":{"variables":["GITHUB_TOKEN"]}})j", decision_kind::deny, ""},
      {R"j({"action":"secret_access","risk":"low","resources":{"variables":["AWS_SECRET_ACCESS_KEY"]}})j", decision_kind::require_approval, "aws"},
      {R"j({"action":"artifact_activation","risk":"low","tool":"release-bot","subject_id":"bot:ci"})j", decision_kind::allow, "artifacts"},
      {R"j({"action":"artifact_activation","risk":"low","tool":"release-bot","subject_id":"alice"})j", decision_kind::deny, ""},
      {R"j({"action":"artifact_activation","risk":"critical","tool":"release-bot","subject_id":"bot:ci"})j", decision_kind::require_approval, "critical"},
      {R"j({"action":"exploration_execution","risk":"low","argv":["./explore"]})j", decision_kind::deny, ""},
      {R"j({"action":"process","risk":"low","argv":["git","status"]})j", decision_kind::allow, "git-read"},
      {R"j({"action":"process","risk":"low","argv":["/usr/bin/git","push","origin"]})j", decision_kind::require_approval, "git-push"},
      {R"j({"action":"process","risk":"low","argv":["bash","-lc","git status && rm -rf /"]})j", decision_kind::deny, "no-rm-rf"},
      {R"j({"action":"process","risk":"low","argv":["echo","$(rm -rf /)"]})j", decision_kind::allow, "git-read"},
      // A command substitution's script is read: its commands are judged, its output is a doubt.
      {R"j({"action":"shell","risk":"low","command":"echo $(git status)"})j", decision_kind::require_approval, ""},
      {R"j({"action":"shell","risk":"low","command":"echo $(whoami)"})j", decision_kind::deny, ""},
      {R"j({"action":"shell","risk":"low","command":"echo \"`rm -rf /`\""})j", decision_kind::deny, "no-rm-rf"},
      {R"j({"action":"shell","risk":"low","command":"rm $FLAGS /"})j", decision_kind::deny, "no-rm-rf"},
      {R"j({"action":"shell","risk":"low","command":"echo hi > /etc/motd"})j", decision_kind::deny, "etc-guard"},
      {R"j({"action":"shell","risk":"low","command":"echo hi > /tmp/out"})j", decision_kind::allow, ""},
      {R"j({"action":"shell","risk":"low","command":"cat /work/.env"})j", decision_kind::allow, "git-read"},
  };
  for (const auto& row : rows) {
    auto got = policy.evaluate(req(row.request));
    EXPECT_EQ(got.decision, row.expected) << row.request << ": " << got.reason;
    if (*row.rule != 0) {
      EXPECT_EQ(got.rule_id, row.rule) << row.request;
    }
  }
}

TEST(CapabilityPolicy, DenyCarriesTheRuleReason) {
  auto got = load().evaluate(req(R"j({"action":"shell","risk":"low","command":"git status && rm -rf build"})j"));
  EXPECT_EQ(got.decision, decision_kind::deny);
  EXPECT_EQ(got.reason, "recursive deletion is refused");
  ASSERT_EQ(got.parts.size(), 2u);
  EXPECT_EQ(got.parts[0].decision, decision_kind::allow);
  EXPECT_EQ(got.parts[1].rule_id, "no-rm-rf");
  auto none = load().evaluate(req(R"j({"action":"shell","risk":"low","command":"make"})j"));
  EXPECT_EQ(none.decision, decision_kind::deny);
  EXPECT_EQ(none.reason, "no rule covers segment 1: make");
}

TEST(CapabilityPolicy, NoRulesDeniesEverything) {
  auto empty = capability_policy::from_rules("empty", {});
  ASSERT_TRUE(empty);
  EXPECT_EQ(empty->evaluate(req(R"j({"action":"artifact_activation","risk":"low"})j")).decision, decision_kind::deny);
  EXPECT_EQ(empty->evaluate(req(R"j({"action":"shell","risk":"low","command":"ls"})j")).decision, decision_kind::deny);
}

TEST(CapabilityPolicy, CombinationOrder) {
  EXPECT_EQ(combine(decision_kind::allow, decision_kind::require_approval), decision_kind::require_approval);
  EXPECT_EQ(combine(decision_kind::require_approval, decision_kind::deny), decision_kind::deny);
  EXPECT_EQ(combine(decision_kind::allow, decision_kind::allow), decision_kind::allow);
  EXPECT_EQ(combine(decision_kind::deny, decision_kind::allow), decision_kind::deny);
}

TEST(CapabilityPolicy, WrongExamplesFailAtLoad) {
  json doc = json::parse(kRules);
  doc["examples"][0]["decision"] = "deny";
  auto bad = capability_policy::from_json(doc.dump());
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error_value().location, "/examples/0");
  EXPECT_NE(bad.error_value().message.find("expects deny, got allow"), std::string::npos);

  doc = json::parse(kRules);
  doc["rules"][0]["paths"] = {"/work/"};
  doc["rules"][0]["examples"]["not_match"][0]["resources"]["paths"] = {"/work/sub"};
  bad = capability_policy::from_json(doc.dump());
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error_value().location, "/rules/0/examples/not_match/0");

  doc = json::parse(kRules);
  doc["rules"][0]["examples"]["match"][0]["resources"]["paths"] = {"/elsewhere"};
  bad = capability_policy::from_json(doc.dump());
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error_value().location, "/rules/0/examples/match/0");
}

TEST(CapabilityPolicy, StrictReading) {
  struct row {
    const char* edit;  // JSON patch-like: path and value
    const char* location;
  } rows[] = {
      {R"j([{"op":"add","path":"/rules/0/allow","value":true}])j", "/rules/0/allow"},
      {R"j([{"op":"replace","path":"/rules/0/decision","value":"maybe"}])j", "/rules/0/decision"},
      {R"j([{"op":"replace","path":"/rules/1/id","value":"read-workspace"}])j", "/rules/1/id"},
      {R"j([{"op":"replace","path":"/rules/1/paths/0","value":"relative/*.pem"}])j", "/rules/1/paths/0"},
      {R"j([{"op":"replace","path":"/rules/5/hosts/0","value":"http://pypi.org/"}])j", "/rules/5/hosts/0"},
      {R"j([{"op":"replace","path":"/rules/0/actions/0","value":"read"}])j", "/rules/0/actions/0"},
      {R"j([{"op":"remove","path":"/rules/0/reason"}])j", "/rules/0/reason"},
      {R"j([{"op":"replace","path":"/schema_version","value":2}])j", "/schema_version"},
      {R"j([{"op":"add","path":"/examples/0/request/argv","value":["x"]}])j", "/examples/0/request/argv"},
  };
  for (const auto& row : rows) {
    json doc = json::parse(kRules).patch(json::parse(row.edit));
    auto bad = capability_policy::from_json(doc.dump());
    ASSERT_FALSE(bad) << row.edit;
    EXPECT_EQ(bad.error_value().location, row.location) << row.edit << ": " << bad.error_value().describe();
  }
}

TEST(CapabilityPolicy, DigestFollowsContent) {
  auto a = load();
  json doc = json::parse(kRules);
  doc["rules"][0]["reason"] = "changed";
  auto b = capability_policy::from_json(doc.dump());
  ASSERT_TRUE(b);
  EXPECT_NE(a.digest(), b->digest());
  EXPECT_EQ(a.digest(), load().digest());
}


// A deny list: every command may run except `rm`. The splitter must find the
// `rm` however the command line wraps it, or at least doubt.
constexpr const char* kDenyList = R"j({
  "schema_version": 1,
  "name": "deny-list",
  "rules": [
    {"id": "commands", "reason": "commands are fine", "decision": "allow", "actions": ["shell", "process"]},
    {"id": "no-rm", "reason": "no deletion", "decision": "deny", "actions": ["shell", "process"], "commands": ["rm"]}
  ]
})j";

void expect_not_allowed(const capability_policy& policy, const std::vector<std::string>& commands) {
  for (const auto& command : commands) {
    auto shell = policy.evaluate(req(json{{"action", "shell"}, {"risk", "low"}, {"command", command}}.dump()));
    EXPECT_NE(to_string(shell.decision), "allow") << "shell: " << command;
    auto argv = policy.evaluate(req(json{{"action", "process"}, {"risk", "low"},
                                         {"argv", {"bash", "-c", command}}}.dump()));
    EXPECT_NE(to_string(argv.decision), "allow") << "bash -c: " << command;
  }
}

// GNU env runs its -S string as a command however the option is spelled: an
// abbreviated long option, a cluster of short options, the value attached;
// and a cluster ending in -u or -C takes the next word as its value.
TEST(CapabilityPolicy, EnvOptionsCannotSmuggleACommand) {
  auto policy = capability_policy::from_json(kDenyList);
  ASSERT_TRUE(policy) << policy.error_value().describe();
  expect_not_allowed(*policy, {"env --split='rm -rf /work'", "env --split-s 'rm -rf /work'",
                               "env -iS 'rm -rf /work'", "env -S'rm -rf /work'", "env -vS'rm -rf /work'",
                               "env -iu HOME rm -rf /work", "env --unset HOME rm -rf /work", "env --ch /tmp rm -rf /work"});
}

// A shell option that takes a value (`-o NAME` inside a cluster, `--rcfile
// FILE`) must not end the option scan before `-c`: the script still runs.
TEST(CapabilityPolicy, ShellOptionValuesDoNotHideTheScript) {
  auto policy = capability_policy::from_json(kDenyList);
  ASSERT_TRUE(policy) << policy.error_value().describe();
  expect_not_allowed(*policy, {"bash -eo pipefail -c 'rm -rf /work'", "bash -euo pipefail -c 'rm -rf /work'",
                               "bash --rcfile /dev/null -c 'rm -rf /work'",
                               "bash --init-file /dev/null -c 'rm -rf /work'"});
}

// Wrappers whose options take a value in the next word: the value is not
// the command.
TEST(CapabilityPolicy, WrapperOptionValuesAreNotTheCommand) {
  auto policy = capability_policy::from_json(kDenyList);
  ASSERT_TRUE(policy) << policy.error_value().describe();
  expect_not_allowed(*policy, {"nice --adjustment 5 rm -rf /work", "stdbuf --output L rm -rf /work",
                               "stdbuf --error 0 rm -rf /work", "stdbuf --input 0 rm -rf /work",
                               "/usr/bin/time -f %e rm -rf /work", "/usr/bin/time -o /tmp/t rm -rf /work",
                               "/usr/bin/time --format %e rm -rf /work"});
}

// bash reads $"..." as a (translated) double-quoted string: $"rm" runs rm.
TEST(CapabilityPolicy, LocaleQuotingIsNotALiteralDollar) {
  auto policy = capability_policy::from_json(kDenyList);
  ASSERT_TRUE(policy) << policy.error_value().describe();
  auto argv = policy->evaluate(req(json{{"action", "process"}, {"risk", "low"},
                                        {"argv", {"bash", "-c", "$\"rm\" -rf /work"}}}.dump()));
  EXPECT_NE(to_string(argv.decision), "allow");
}

// bash runs the command of `coproc` (a keyword), and `hash -p PATH NAME`
// makes NAME run PATH: neither is the command the splitter names.
TEST(CapabilityPolicy, CoprocAndHashDashPAreNotHarmlessWords) {
  auto policy = capability_policy::from_json(kDenyList);
  ASSERT_TRUE(policy) << policy.error_value().describe();
  expect_not_allowed(*policy, {"coproc rm -rf /work", "hash -p /bin/rm ls; ls -rf /work"});
}

// A relative redirection target is resolved against the request's working
// directory; after a `cd` in the same command line it is somewhere else.
TEST(CapabilityPolicy, RelativeRedirectAfterCdIsNotInTheWorkingDirectory) {
  auto policy = capability_policy::from_json(R"j({
    "schema_version": 1, "name": "writes",
    "rules": [
      {"id": "commands", "reason": "commands are fine", "decision": "allow", "actions": ["shell"]},
      {"id": "work", "reason": "the workspace is writable", "decision": "allow", "actions": ["filesystem_write"], "paths": ["/work/**"]},
      {"id": "etc", "reason": "system configuration", "decision": "deny", "paths": ["/etc"]}
    ]})j");
  ASSERT_TRUE(policy) << policy.error_value().describe();
  auto plain = policy->evaluate(req(R"j({"action":"shell","risk":"low","command":"echo x > out","working_directory":"/work"})j"));
  EXPECT_EQ(to_string(plain.decision), "allow") << plain.reason;
  for (const char* command : {"cd /etc && echo x > passwd", "cd /etc; echo x >> passwd", "pushd /etc; echo x > passwd",
                              "cd .. && echo x > etc/passwd"}) {
    auto got = policy->evaluate(req(json{{"action", "shell"}, {"risk", "low"}, {"command", command},
                                         {"working_directory", "/work"}}.dump()));
    EXPECT_NE(to_string(got.decision), "allow") << command;
  }
}

// "/a/**" covers "/a" like "/a" does, so a deny rule on it covers what
// contains "/a" too ("/" for a rule on "/etc/**"), and a component glob
// covers the directories above what it matches.
TEST(CapabilityPolicy, DenyGlobCoversTheDirectoriesAboveIt) {
  auto policy = capability_policy::from_json(R"j({
    "schema_version": 1, "name": "writes",
    "rules": [
      {"id": "all", "reason": "writes are fine", "decision": "allow", "actions": ["filesystem_write"], "paths": ["/"]},
      {"id": "etc", "reason": "system configuration", "decision": "deny", "paths": ["/etc/**"]},
      {"id": "ssh", "reason": "ssh keys", "decision": "deny", "paths": ["/home/*/.ssh"]}
    ]})j");
  ASSERT_TRUE(policy) << policy.error_value().describe();
  auto write = [&](const char* path) {
    return policy->evaluate(req(json{{"action", "filesystem_write"}, {"risk", "low"},
                                     {"resources", {{"paths", {path}}}}}.dump())).decision;
  };
  EXPECT_EQ(to_string(write("/etc")), "deny") << "/etc";
  EXPECT_EQ(to_string(write("/")), "deny") << "/";
  EXPECT_EQ(to_string(write("/home/alice/.ssh")), "deny") << "/home/alice/.ssh";
  EXPECT_EQ(to_string(write("/home/alice")), "deny") << "/home/alice";
  EXPECT_EQ(to_string(write("/home")), "deny") << "/home";
  EXPECT_EQ(to_string(write("/srv/data")), "allow") << "/srv/data";
  EXPECT_EQ(to_string(write("/home/alice/src")), "allow") << "/home/alice/src";
}

// bash evaluates an array subscript in a variable name as arithmetic, with
// command substitution, even when the word was single-quoted: the builtins
// that take a variable name run the command inside it.
TEST(CapabilityPolicy, ArraySubscriptsInVariableNamesAreNotLiteral) {
  auto policy = capability_policy::from_json(kDenyList);
  ASSERT_TRUE(policy) << policy.error_value().describe();
  expect_not_allowed(*policy, {"let 'a[$(rm -rf /work)]=1'", "printf -v 'a[$(rm -rf /work)]' %s x",
                               "printf -v 'a[`rm -rf /work`]' %s x", "test -v 'a[$(rm -rf /work)]'",
                               "[ -v 'a[$(rm -rf /work)]' ]", "read 'a[$(rm -rf /work)]' <<< x",
                               "declare 'a[$(rm -rf /work)]=1'"});
}

// An allow list (docs/governance.md's example): the variables assigned before
// an allowed command can make it run another one (git runs GIT_EXTERNAL_DIFF
// through the shell, the loader runs LD_PRELOAD, bash sources BASH_ENV).
// Dropping them judges a command that is not the one that runs.
TEST(CapabilityPolicy, AssignmentsBeforeAnAllowedCommandAreJudged) {
  auto policy = capability_policy::from_json(R"j({
    "schema_version": 1, "name": "allow list",
    "rules": [
      {"id": "inspect", "reason": "inspecting is harmless", "decision": "allow", "actions": ["shell", "process"],
       "commands": ["git diff", "git status", "ls"]},
      {"id": "no-delete", "reason": "no deletion", "decision": "deny", "commands": ["rm"]}
    ]})j");
  ASSERT_TRUE(policy) << policy.error_value().describe();
  auto plain = policy->evaluate(req(R"j({"action":"shell","risk":"low","command":"git diff && ls"})j"));
  EXPECT_EQ(to_string(plain.decision), "allow") << plain.reason;
  for (const char* command : {"GIT_EXTERNAL_DIFF='rm -rf .; true' git diff", "env GIT_EXTERNAL_DIFF='rm -rf .' git diff",
                              "LD_PRELOAD=/tmp/evil.so ls", "BASH_ENV=./evil.sh bash -c ls"}) {
    auto got = policy->evaluate(req(json{{"action", "shell"}, {"risk", "low"}, {"command", command}}.dump()));
    EXPECT_NE(to_string(got.decision), "allow") << command;
  }
  // The command after the assignment is still read: a deny still denies.
  for (const char* command : {"FOO=1 rm -rf x", "env FOO=1 rm -rf x", "env X=1 sh -c 'rm -rf x'"}) {
    auto got = policy->evaluate(req(json{{"action", "shell"}, {"risk", "low"}, {"command", command}}.dump()));
    EXPECT_EQ(to_string(got.decision), "deny") << command;
  }
}

}  // namespace
}  // namespace cordon::governance
