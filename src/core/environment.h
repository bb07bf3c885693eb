// environment.h — the environment a confined command gets.
#pragma once

#include <string>
#include <vector>

#include "cordon/policy.h"

namespace cordon::core {

// The environment the command gets: inherited (all, or the allowlist), then
// the explicit values. Returns "NAME=VALUE" entries, first occurrence wins for
// inherited names, explicit values replace. Filtered network: HTTP_PROXY,
// HTTPS_PROXY, ALL_PROXY (and lower case) point at the broker and NO_PROXY is
// empty, unless the policy sets them explicitly.
std::vector<std::string> build_environment(const sandbox_policy& policy,
                                           const std::vector<std::string>& host_environment);

}  // namespace cordon::core
