// git_config.h — the lines of one git config file, as far as cordon reads
// them (git-config(1), "CONFIGURATION FILE"): the Linux backend for
// core.hooksPath and [include] sections, the CLI for user.name and
// user.email. Not a full reader: no includes are followed, no escapes
// decoded, no subsection case rules.
#pragma once

#include <string>
#include <vector>

namespace cordon::core {

struct git_config_line {
  bool header = false;  // a "[section]" line; key and value are empty
  std::string section;  // lowercased, trimmed: "core", "include", `url "https://x"`
  std::string key;      // lowercased, trimmed
  std::string value;    // trimmed, one pair of surrounding double quotes removed
};

// Every section header and `key = value` line of `file`, in order; comments
// and blank lines are skipped, a key without '=' is skipped. A file that
// cannot be read gives no lines.
std::vector<git_config_line> read_git_config(const std::string& file);

}  // namespace cordon::core
