// git_sources.h — the git configuration a host user's git reads besides a
// repository's own (git-config(1), FILES and ENVIRONMENT), and the paths a
// variable names, so that the scan can protect or watch those that land in
// a writable root (docs/deferred-execution.md, "Configuration outside the
// repository").
//
// Whose configuration: the user who runs cordon, with cordon's own
// environment (HOME, XDG_CONFIG_HOME, GIT_CONFIG_*): the host user who will
// run git in the workspace after the run. A git started later with another
// environment reads other files; the set read here is a superset of the
// defaults and what the environment names (both the default global file and
// GIT_CONFIG_GLOBAL's, for instance), never fewer.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/git_rules.h"

namespace cordon::core {

// Every file and variable git reads outside a repository: the system file
// (/etc/gitconfig and $GIT_CONFIG_SYSTEM), the global ones (~/.gitconfig,
// $XDG_CONFIG_HOME/git/config or ~/.config/git/config, $GIT_CONFIG_GLOBAL),
// each with its includes (read_git_config_tree, with its bounds), then the
// variables of GIT_CONFIG_COUNT / GIT_CONFIG_KEY_<n> / GIT_CONFIG_VALUE_<n>
// and GIT_CONFIG_PARAMETERS (what `git -c` passes to its children), whose
// `file` is the variable's name, and the files their include.path names.
// `environment` is "NAME=value" strings; `home` is $HOME ("": no ~ paths).
// A bad GIT_CONFIG_COUNT, a missing KEY_<n> or a GIT_CONFIG_PARAMETERS git
// could not parse is in `unreadable`, like a bad file.
git_config_tree read_host_git_config(const std::string& home, const std::vector<std::string>& environment);

// GIT_CONFIG_PARAMETERS as git writes it (sq_quote): space-separated
// single-quoted items, 'key=value' (older git) or 'key'='value', with '\''
// for a quote inside. The (key, value) pairs, or nullopt on text git would
// reject.
std::optional<std::vector<std::pair<std::string, std::string>>> parse_config_parameters(std::string_view text);

// "section.subsection.name" split as git does (first and last dot; section
// and name lowercased), labelled `file`; nullopt when it has no dot.
std::optional<git_config_entry> config_entry_from_key(const std::string& key, std::string value,
                                                      const std::string& file);

// The paths a variable names, for a repository whose work tree is
// `work_tree` ("" when unknown: relative paths are then skipped): a path
// key's value (core.hooksPath, core.attributesFile: which filter and diff
// drivers run), or the
// program of a key git runs (git_key_runs_code: core.fsmonitor,
// core.pager, an alias's "!cmd", ...) when its first word holds a '/'.
// `~/` is `home`; a relative path is relative to the work tree (where git
// runs hooks and commands). Lexically normalized. Includes are not here:
// read_git_config_tree follows them; nor is core.worktree, which names a
// work tree (data), not code.
std::vector<std::string> git_entry_paths(const git_config_entry& entry, const std::string& work_tree,
                                         const std::string& home);

}  // namespace cordon::core
