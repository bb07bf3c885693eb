// default_rules.h — the built-in rules for coding agents, and "{workspace}"
// in rules files (docs/governance.md, "Rules" and "Default rules for coding
// agents"). Used by `cordon mcp`.
#pragma once

#include <string>
#include <string_view>

#include "cordon/governance/capability_policy.h"
#include "cordon/result.h"

namespace cordon::governance {

// capability_policy::from_json, where every "{workspace}" in the file's
// strings (path patterns, examples' paths and working directories) stands for
// `workspace`, an absolute path. Errors: invalid_policy (a workspace that is
// not absolute, or what from_json refuses), parse_error.
result<capability_policy> rules_from_json(std::string_view text, const std::string& workspace);

// The same for a file; io_error (errno) when it cannot be read.
result<capability_policy> load_rules(const std::string& path, const std::string& workspace);

// The built-in rules for coding agents: inspection, editing, builds and tests
// allowed; installs and pushes by approval; destructive commands denied;
// writes and redirections into `workspace` (and /tmp, /dev/null) allowed;
// anything else denied. Their examples are checked at load. Errors: as
// rules_from_json.
result<capability_policy> coding_agent_rules(const std::string& workspace);

// The same rules as JSON text, "{workspace}" unexpanded.
std::string_view coding_agent_rules_json() noexcept;

}  // namespace cordon::governance
