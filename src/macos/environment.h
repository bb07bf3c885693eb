// environment.h — the command's environment on macOS, built from the plan.
#pragma once

#include <string>
#include <vector>

#include "macos/macos_plan.h"

namespace cordon::macos_impl {

// "NAME=VALUE" entries for execve(2): with inherit = all every host entry,
// with none only the host entries named in `allow`; then each `set` entry in
// order (replacing an earlier one of the same name); then every variable in
// `rerooted` whose value is "/tmp" or under it is moved to `run_tmp`. Host
// entries without '=' are dropped. Order: host order, then new names in the
// order first set.
std::vector<std::string> build_environment(const environment_spec& spec, const std::vector<std::string>& host,
                                           const std::string& run_tmp);

}  // namespace cordon::macos_impl
