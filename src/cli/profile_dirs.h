// profile_dirs.h — profiles by name: the built-in ones, then the user's
// ($XDG_CONFIG_HOME/cordon/profiles/NAME.json, default ~/.config), then the
// system's (SYSCONFDIR/cordon/profiles/NAME.json, /etc/cordon/profiles for a
// /usr install). Built-in names are reserved: a file that has one is listed
// as ignored and never replaces the built-in (`--profile read-only` always
// means the profile this cordon ships). A user profile hides a system one of
// the same name. A name is [a-z0-9][a-z0-9._-]*, so that it stays a file
// name in those directories.
#pragma once

#include <string>
#include <vector>

#include "cordon/policy.h"
#include "cordon/result.h"

namespace cordon::cli {

struct profile_entry {
  std::string name;
  std::string origin;  // "built-in", "user" or "system"
  std::string file;    // the JSON file; empty for a built-in profile
  std::string note;    // why it is not used ("ignored: a built-in name", "hidden by the user profile"); empty when used
};

// The user and the system directory.
std::string user_profile_dir();
std::string system_profile_dir();
// The user directory as the man page spells it.
std::string user_profile_dir_help();

// Every profile found, built-in ones first, then by name; entries that are
// not used carry a note.
std::vector<profile_entry> list_profiles();

struct named_profile {
  sandbox_policy policy;
  std::string source;  // "built-in profile NAME" or "user profile FILE" / "system profile FILE"
};

// The profile `name` resolves to. Errors: unknown_profile (no such profile,
// or a name that is not [a-z0-9][a-z0-9._-]*); those of load_sandbox_policy
// for a file that cannot be read or is not a policy.
result<named_profile> load_named_profile(const std::string& name);

// The policy of a command's `--policy FILE` or, when `file` is empty, its
// `--profile NAME` (`profile` empty: the default, workspace-write), with
// `source` set to FILE or the profile's source. Errors as load_sandbox_policy
// and load_named_profile.
result<named_profile> load_policy_or_profile(const std::string& file, const std::string& profile);

// The JSON text of profile `name` (the file as it is, or the built-in's). Errors as load_named_profile.
result<std::string> named_profile_json(const std::string& name);

}  // namespace cordon::cli
