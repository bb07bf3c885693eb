// cordon/profiles.h — built-in profiles, embedded at build time from
// profiles/*.json.
//
//  workspace-write  read the system and the workspace, write only the
//                   workspace and a private /tmp, no network, minimal
//                   environment. The default of `cordon run`.
//  read-only        read everything but secrets, write nothing on the host
//                   (a private /tmp only), no network.
//  offline          as workspace-write, but reads everything but secrets.
// Every profile denies credentials (~/.ssh, ~/.gnupg, ~/.aws, ...), protects
// .git/hooks and .git/config, and gets a private /dev and /dev/shm.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cordon/policy.h"
#include "cordon/result.h"

namespace cordon {

inline constexpr std::string_view default_profile_name = "workspace-write";

// Names of the built-in profiles, sorted.
std::vector<std::string> builtin_profile_names();

// The profile's policy (not yet validated: tokens are resolved by compile).
// Error: error_code::unknown_profile when there is no such profile.
result<sandbox_policy> builtin_profile(std::string_view name);

// The profile's JSON text as shipped. Error: error_code::unknown_profile.
result<std::string> builtin_profile_json(std::string_view name);

}  // namespace cordon
