// The repository scan (posix/vcs_scan.h): the host's git configuration and
// the agent and editor files applied to a scan. The walk, one git
// directory, the stamps and the post-run check are in the files
// posix/vcs_scan_parts.h lists.
#include "posix/vcs_scan.h"

#include <algorithm>
#include <iterator>
#include <set>

#include "core/git_rules.h"
#include "core/git_sources.h"
#include "posix/vcs_scan_parts.h"

namespace cordon::vcs {
namespace {

using namespace scan_parts;


// Agent and editor configuration, relative to a project's top: what runs
// code with no review moment (agent hooks: .claude/settings*.json,
// .gemini/settings.json; MCP server lists: .mcp.json, .cursor/mcp.json,
// .vscode/mcp.json; slash commands and sub-agents that may run shell:
// .claude/commands, .claude/agents; editor tasks, launch configurations and
// settings naming executables: .vscode/, .idea/; direnv: .envrc; containers
// built and their postCreateCommand run on opening: .devcontainer/,
// .devcontainer.json; Codex's project configuration: .codex/)...
constexpr const char* kAgentRunsCode[] = {
    ".claude/settings.json", ".claude/settings.local.json", ".claude/commands", ".claude/agents",
    ".mcp.json",             ".cursor/mcp.json",            ".gemini/settings.json", ".codex",
    ".vscode",               ".idea",                       ".envrc",                ".devcontainer",
    ".devcontainer.json",
};
// ... and what an agent or CI reads as instructions or configuration, which
// a person is expected to review (reported when created or changed).
constexpr const char* kAgentInstructions[] = {
    "AGENTS.md",         "CLAUDE.md",        "CLAUDE.local.md",      "GEMINI.md",
    ".cursorrules",      ".cursor/rules",    ".windsurfrules",       ".github/copilot-instructions.md",
    ".github/instructions", ".github/workflows", ".gitlab-ci.yml",   ".pre-commit-config.yaml",
};


// Where git runs for each repository found: the directory holding its .git
// (a directory or a file), and a bare repository itself when `bare`.
std::set<std::string> work_trees_of(const vcs_scan& scan, bool bare) {
  std::set<std::string> out;
  for (const auto& [path, record] : scan.records) {
    const bool dot_git = path.size() > 5 && path.compare(path.size() - 5, 5, "/.git") == 0;
    if (bare && record.kind == "bare") out.insert(path);
    else if (dot_git && (record.kind == "git_directory" || record.kind == "git_file")) out.insert(parent(path));
  }
  return out;
}

}  // namespace

void apply_host_config(const std::string& root, const core::git_config_tree& host, const std::string& home,
                       vcs_scan& scan) {
  add_config_gaps(scan, host.unreadable, "the host's git config cordon cannot read");
  for (const auto& file : host.files) {
    if (within(file, root)) add_protect_or_watch(scan, file, true);
  }
  const std::set<std::string> work_trees = work_trees_of(scan, true);
  // Existing paths become read-only binds; absent ones are watched (creating
  // one is a repository_redirect_created finding after the run).
  std::set<std::string> named;
  for (const auto& entry : host.entries) {
    for (const auto& path : core::git_entry_paths(entry, "", home)) named.insert(path);  // absolute and ~/ paths
    for (const auto& work_tree : work_trees) {
      for (const auto& path : core::git_entry_paths(entry, work_tree, home)) named.insert(path);
    }
  }
  for (const auto& path : named) {
    // The root itself (or above it) is the work, not a program: never bound read-only whole.
    if (within(path, root) && path != root) add_protect_or_watch(scan, path, true);
  }
}

void watch_agent_config(const std::string& root, const std::vector<std::string>& opted_out, vcs_scan& scan) {
  std::set<std::string> tops = work_trees_of(scan, false);
  for (auto it = tops.begin(); it != tops.end();) it = within(*it, root) ? std::next(it) : tops.erase(it);
  tops.insert(root);
  for (const auto& top : tops) {
    for (const char* relative : kAgentRunsCode) {
      const std::string path = join(top, relative);
      const bool opted = std::find(opted_out.begin(), opted_out.end(), path) != opted_out.end();
      vcs_scan::agent_path entry{stamp_of(path), true};
      if (!opted && entry.stamp.present) scan.protect.push_back(path);
      scan.agent[path] = std::move(entry);
    }
    for (const char* relative : kAgentInstructions) {
      const std::string path = join(top, relative);
      scan.agent[path] = {stamp_of(path), false};
    }
  }
}

}  // namespace cordon::vcs
