// overrides.h — the shortcut flags of `cordon run` and `cordon policy
// explain` (--ro, --rw, --deny, --net, --env, --setenv, --memory,
// --max-procs, --cpu, --timeout, --accept). They edit the chosen policy or profile
// before its one compile; there is no second launch path (docs/architecture.md).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cordon/policy.h"
#include "cordon/result.h"
#include "core/shortcuts.h"

namespace cordon::cli {

using policy_overrides = core::policy_shortcuts;
using core::parse_host_port;
using core::parse_publish;
using core::parse_size;

// Declares the flags on `app`, storing into `out`. Values are checked by
// CLI11 validators, so a malformed value is a usage error before anything
// runs.
void add_policy_flags(CLI::App& app, policy_overrides& out);

// core::apply_shortcuts() with $HOME.
result<void> apply_overrides(sandbox_policy& policy, const policy_overrides& flags, const std::string& cwd);

}  // namespace cordon::cli
