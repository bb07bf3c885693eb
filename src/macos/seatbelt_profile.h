// seatbelt_profile.h — the deny-default SBPL profile for one resolved policy.
//
// Layout and the reasons for it are in docs/macos-backend.md, "The profile".
// In short: every `allow` of a file operation carries the policy's exclusions
// as (require-not ...) filters, and the explicit `deny` rules for denied and
// protected paths match only what no allow matches. So every rule that matches
// a path gives the same verdict, and the verdict does not depend on rule order
// (SBPL's last-match precedence is then never exercised):
//   read  = (platform defaults | readable | writable | protected) - denied
//   write = (writable | /dev/null | /dev/fd) - denied - protected
//           - the directories between a writable root and a protected or
//             denied path below it (written only as themselves: a rename of
//             one would move the protected path out from under its rule)
//           - .git, .git/hooks, .git/config, .gitmodules below writable roots
//             when protect_vcs_metadata is set (in any letter case)
//   unix sockets: bind inside writable roots, connect there and to the
//           listed sockets, each minus denied (and, for bind, protected) paths
//   terminal: read and write of the one the command inherited, no ioctl
// Policy paths never appear in the text: each is a parameter (-D KEY=VALUE),
// in its /private spelling and, under /var, /tmp or /etc, its link spelling too.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cordon/policy.h"
#include "cordon/result.h"
#include "macos/host_facts.h"

namespace cordon::macos_impl {

// The key of the per-run temporary directory that "{run_tmp}" names; its
// value is known only at launch (the launcher creates the directory).
inline constexpr const char* run_tmp_parameter = "RUN_TMP";
// The key of the terminal the command inherits (the device of its stdout,
// stderr or stdin, "/dev/null" when none is one), chosen at launch.
inline constexpr const char* terminal_parameter = "TERMINAL";

struct sbpl_parameter {
  std::string key;      // e.g. "WRITE_0"
  std::string value;    // absolute path; for a launch-time parameter an example value
  bool at_launch = false;  // value chosen by the launcher (RUN_TMP, TERMINAL)
  std::string meaning;  // e.g. "writable /Users/dev/project"
};

struct profile_input {
  std::string policy_name;
  read_mode read = read_mode::restricted;
  bool platform_defaults = true;
  // Absolute, canonical (/private spelling), deduplicated.
  std::vector<std::string> readable, writable, protected_paths, denied;
  std::vector<std::string> unix_sockets;  // filesystem.unix_sockets: sockets the command may connect to
  bool run_tmp = false;  // "{run_tmp}" is writable: a (subpath (param "RUN_TMP")) write root
  std::string run_tmp_example;  // example value of RUN_TMP shown in plans and goldens
  bool protect_vcs_metadata = false;
  network_mode network = network_mode::denied;
  std::uint16_t broker_port = 0;  // filtered only; 1..65535
  std::vector<path_alias> aliases;
};

struct generated_profile {
  std::string text;
  std::vector<sbpl_parameter> parameters;
};

// Writes the profile. Errors (invalid_policy): a writable root that cannot be
// written into a regex (contains '"' or a newline) while protect_vcs_metadata
// is set; a filtered network with broker_port 0.
result<generated_profile> generate_seatbelt_profile(const profile_input& input);

}  // namespace cordon::macos_impl
