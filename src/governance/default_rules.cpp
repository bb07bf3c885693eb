// default_rules.cpp — the built-in rules for coding agents and "{workspace}"
// in rules files (default_rules.h; docs/governance.md, "Default rules for
// coding agents").
//
// The rules say what an agent's tool call may attempt; the sandbox still
// confines everything that runs. deny beats require_approval beats allow, and
// a part no rule covers is denied, so the lists below need not be complete to
// be safe: an unlisted command is refused with "no rule covers ...".
#include "governance/default_rules.h"

#include <cerrno>
#include <fstream>
#include <sstream>

#include "governance/json_util.h"

namespace cordon::governance {
namespace {

using detail::json;

constexpr std::string_view kRules = R"json({
  "schema_version": 1,
  "name": "cordon-coding-agent-defaults",
  "rules": [
    {"id": "inspect", "decision": "allow",
     "reason": "inspection: listing, reading, searching and version-control queries",
     "actions": ["shell", "process"],
     "commands": ["ls", "cat", "head", "tail", "less", "wc", "grep", "rg", "find", "pwd", "echo", "printf", "true",
                  "false", "test", "[", "stat", "file", "diff", "cmp", "sort", "uniq", "cut", "tr", "awk", "jq", "tree",
                  "du", "df", "which", "env", "date", "basename", "dirname", "realpath", "readlink", "id", "uname", "cd",
                  "git status", "git log", "git diff", "git show", "git branch", "git rev-parse", "git ls-files",
                  "git blame", "git grep", "git remote", "git config --get", "git config --list", "git tag",
                  "git describe", "npm ls", "npm view", "npm outdated", "pip list", "pip show"]},
    {"id": "edit-build-test", "decision": "allow",
     "reason": "editing, building and testing in the workspace (confined by the sandbox)",
     "actions": ["shell", "process", "python"],
     "commands": ["make", "cmake", "ninja", "meson", "npm test", "npm run", "npm start", "npx", "node", "python3",
                  "python", "pytest", "cargo build", "cargo test", "cargo check", "cargo run", "go build", "go test",
                  "go vet", "gcc", "g++", "cc", "c++", "clang", "tsc", "mkdir", "touch", "cp", "mv", "ln", "rm",
                  "sed", "tee", "patch", "chmod", "git add", "git commit", "git checkout", "git switch",
                  "git stash", "git restore", "git apply", "git merge", "git rebase", "git init", "git mv",
                  "git rm"]},
    {"id": "installs", "decision": "require_approval",
     "reason": "installing dependencies fetches and runs code from the network: needs approval",
     "actions": ["shell", "process", "python"],
     "commands": ["npm install", "npm i", "npm ci", "npm add", "npm update", "yarn", "pnpm", "pip install",
                  "pip3 install", "python3 -m pip", "python -m pip", "cargo add", "cargo install", "cargo update",
                  "go get", "go install", "apt-get", "apt", "gem install", "bundle",
                  "npm in", "npm ins", "npm inst", "npm insta", "npm instal", "npm isnt", "npm isnta", "npm isntal",
                  "npm isntall", "npm clean-install", "npm ic", "npm install-clean", "npm isntall-clean",
                  "npm install-test", "npm it", "npm install-ci-test", "npm cit", "npm clean-install-test", "npm sit",
                  "npm up", "npm upgrade", "npm udpate", "npm link", "npm ln", "pip download", "pip3 download",
                  "uv pip install", "uv add", "uv sync", "uv tool install", "uvx", "pipx", "poetry add",
                  "poetry install", "bun add", "bun install", "bun i", "bunx", "go mod download",
                  {"command": "npx", "options": ["-y", "--yes", "-p", "--package"], "with_value": ["-c", "--call"]},
                  {"command": "npm exec", "options": ["-y", "--yes", "-p", "--package"], "with_value": ["-c", "--call"]},
                  {"command": "npm x", "options": ["-y", "--yes", "-p", "--package"], "with_value": ["-c", "--call"]},
                  "pnpm dlx", "yarn dlx"]},
    {"id": "pushes", "decision": "require_approval",
     "reason": "publishing or fetching leaves the workspace (a push, a fetch, a release, a registry upload): needs approval",
     "actions": ["shell", "process", "python"],
     "commands": ["git push", "git fetch", "git pull", "git clone", "git remote update", "git remote prune",
                  "git remote show", {"command": "git remote add", "options": ["-f", "--fetch"]},
                  "git ls-remote", "git submodule update", "git lfs fetch", "git lfs pull",
                  "npm publish", "cargo publish", "twine upload", "gh", "curl", "wget"]},
    {"id": "destructive", "decision": "deny",
     "reason": "destructive: recursive deletes, history rewrites and discarded work are refused; delete files one by one by name, or ask the user",
     "actions": ["shell", "process", "python"],
     "commands": [{"command": "rm", "options": ["-r", "-R", "--recursive", "-f", "--force"]},
                  {"command": "find", "options": ["-delete"]},
                  {"command": "git reset", "options": ["--hard"]}, "git clean",
                  {"command": "git push", "options": ["-f", "--force", "--force-with-lease", "--delete", "-d", "--mirror", "--prune"],
                   "with_value": ["-o", "--push-option", "--repo", "--receive-pack", "--exec"]},
                  {"command": "git push", "operands": ["+*", ":*"], "with_value": ["-o", "--push-option", "--repo", "--receive-pack", "--exec"]},
                  {"command": "git branch", "options": ["-D", "-f", "--force", "-M", "-C"]},
                  {"command": "git checkout", "options": ["-f", "--force", "-B"], "with_value": ["-b", "-B", "--orphan", "--conflict", "--pathspec-from-file"]},
                  {"command": "git checkout", "operands": [".", "./", ":/", "*/", "*/.", "..", "*/..", ":(*)", ":(*).", ":(*)./"],
                   "with_value": ["-b", "-B", "--orphan", "--conflict", "--pathspec-from-file"]},
                  {"command": "git switch", "options": ["-f", "--force", "--discard-changes", "-C", "--force-create"],
                   "with_value": ["-c", "-C", "--create", "--force-create", "--orphan", "--conflict"]},
                  {"command": "git restore", "operands": [".", "./", ":/", "*/", "*/.", "..", "*/..", ":(*)", ":(*).", ":(*)./"],
                   "with_value": ["-s", "--source", "--conflict", "--pathspec-from-file"]},
                  {"command": "git rm", "options": ["-f", "--force"], "with_value": ["--pathspec-from-file"]},
                  {"command": "git tag", "options": ["-d", "--delete", "-f", "--force"],
                   "with_value": ["-m", "--message", "-F", "--file", "-u", "--local-user", "--cleanup", "--contains",
                                  "--no-contains", "--merged", "--no-merged", "--points-at", "--sort", "--format", "--color"]},
                  {"command": "npx", "operands": ["rimraf", "rimraf@*", "del-cli", "del-cli@*"], "with_value": ["-c", "--call", "-p", "--package"]},
                  {"command": "npm exec", "operands": ["rimraf", "rimraf@*", "del-cli", "del-cli@*"], "with_value": ["-c", "--call", "-p", "--package"]},
                  {"command": "npm x", "operands": ["rimraf", "rimraf@*", "del-cli", "del-cli@*"], "with_value": ["-c", "--call", "-p", "--package"]},
                  {"command": "pnpm dlx", "operands": ["rimraf", "rimraf@*", "del-cli", "del-cli@*"]},
                  {"command": "yarn dlx", "operands": ["rimraf", "rimraf@*", "del-cli", "del-cli@*"]},
                  {"command": "bunx", "operands": ["rimraf", "rimraf@*", "del-cli", "del-cli@*"]},
                  "rimraf", "del-cli", "git stash drop", "git stash clear", "dd", "mkfs*", "shred", "truncate",
                  {"command": "chmod", "options": ["-R", "--recursive"]}, "chown", "sudo", "su"]},
    {"id": "workspace-write", "decision": "allow",
     "reason": "writes and redirections into the workspace",
     "actions": ["filesystem_write"], "paths": ["{workspace}", "/tmp", "/dev/null"]},
    {"id": "read", "decision": "allow",
     "reason": "reads: the sandbox decides what is visible",
     "actions": ["filesystem_read"], "paths": ["/"]}
  ],
  "examples": [
    {"name": "inspection runs", "request": {"risk": "medium", "action": "shell", "command": "git status && ls -la"}, "decision": "allow"},
    {"name": "a redirection into the workspace", "decision": "allow",
     "request": {"risk": "medium", "action": "shell", "command": "npm test > test.log 2>&1", "working_directory": "{workspace}"}},
    {"name": "a redirection outside", "decision": "deny",
     "request": {"risk": "medium", "action": "shell", "command": "echo x > /etc/motd", "working_directory": "{workspace}"}},
    {"name": "an install asks", "request": {"risk": "medium", "action": "shell", "command": "npm install left-pad"}, "decision": "require_approval"},
    {"name": "a push asks", "request": {"risk": "medium", "action": "shell", "command": "git push origin main"}, "decision": "require_approval"},
    {"name": "a force push is refused", "request": {"risk": "medium", "action": "shell", "command": "git push --force origin main"}, "decision": "deny"},
    {"name": "rm -rf is refused", "request": {"risk": "medium", "action": "shell", "command": "rm -rf src"}, "decision": "deny"},
    {"name": "rm of one file runs", "request": {"risk": "medium", "action": "shell", "command": "rm notes.txt"}, "decision": "allow"},
    {"name": "rm -R with other options is refused", "request": {"risk": "medium", "action": "shell", "command": "rm -v -R src"}, "decision": "deny"},
    {"name": "an abbreviated --recursive is refused", "request": {"risk": "medium", "action": "shell", "command": "rm --rec src"}, "decision": "deny"},
    {"name": "find -delete is a recursive delete", "request": {"risk": "medium", "action": "shell", "command": "find . -name '*.o' -delete"}, "decision": "deny"},
    {"name": "find -exec is judged as the command it runs", "request": {"risk": "medium", "action": "shell", "command": "find . -exec rm -rf {} +"}, "decision": "deny"},
    {"name": "git's global options do not hide the subcommand", "request": {"risk": "medium", "action": "shell", "command": "git -C . reset --hard"}, "decision": "deny"},
    {"name": "a wrapped command is judged as itself", "request": {"risk": "medium", "action": "shell", "command": "xargs rm -rf"}, "decision": "deny"},
    {"name": "sed's e command asks", "request": {"risk": "medium", "action": "shell", "command": "sed 's/x/y/e' f"}, "decision": "require_approval"},
    {"name": "git remote update asks like a fetch", "request": {"risk": "medium", "action": "shell", "command": "git remote update"}, "decision": "require_approval"},
    {"name": "an unknown command is refused", "request": {"risk": "medium", "action": "shell", "command": "nc -l 8080"}, "decision": "deny"},
    {"name": "the file tools write in the workspace", "decision": "allow",
     "request": {"risk": "medium", "action": "filesystem_write", "resources": {"paths": ["{workspace}/src/a.js"]}}},
    {"name": "and not outside", "decision": "deny",
     "request": {"risk": "medium", "action": "filesystem_write", "resources": {"paths": ["/etc/passwd"]}}}
  ]
})json";

// Every "{workspace}" in every string of `j` becomes `workspace`.
void expand(json& j, const std::string& workspace) {
  if (j.is_string()) {
    std::string text = j.get<std::string>();
    for (std::size_t at = text.find("{workspace}"); at != std::string::npos; at = text.find("{workspace}", at)) {
      text.replace(at, 11, workspace);
      at += workspace.size();
    }
    j = text;
  } else if (j.is_array() || j.is_object()) {
    for (auto& item : j) expand(item, workspace);
  }
}

}  // namespace

result<capability_policy> rules_from_json(std::string_view text, const std::string& workspace) {
  if (workspace.empty() || workspace.front() != '/') {
    return detail::invalid("", "the workspace that {workspace} stands for must be an absolute path");
  }
  auto doc = detail::parse_document(text);
  if (!doc) return std::move(doc).error_value();
  expand(*doc, workspace);
  return capability_policy::from_json(doc->dump());
}

result<capability_policy> load_rules(const std::string& path, const std::string& workspace) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(error_code::io_error, "cannot read " + path, {}, errno);
  std::ostringstream text;
  text << in.rdbuf();
  return rules_from_json(text.str(), workspace);
}

result<capability_policy> coding_agent_rules(const std::string& workspace) {
  return rules_from_json(kRules, workspace);
}

std::string_view coding_agent_rules_json() noexcept { return kRules; }

}  // namespace cordon::governance
