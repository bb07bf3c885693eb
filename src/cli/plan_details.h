// plan_details.h — what a compiled plan will do beyond its controls: the
// mounts of the sandbox's root and the environment the command gets.
// `cordon policy explain` prints them always, `cordon -v run` before it runs.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "cordon/plan.h"

namespace cordon::cli {

// One line per mount, in the order they are applied (the backend's own
// description of its plan: "mount ..." lines); empty when the backend has no mount table.
std::vector<std::string> plan_mounts(const sandbox_plan& plan);

// One line per variable the command gets: "NAME  (inherited)", "NAME  (set
// by the policy)" or "NAME  (set by cordon: ...)". Values are never printed:
// an inherited one may be a secret. `host_environment`: "NAME=VALUE" entries.
std::vector<std::string> plan_environment(const sandbox_plan& plan, const std::vector<std::string>& host_environment);

// This process's environment as "NAME=VALUE" entries.
std::vector<std::string> host_environment();

}  // namespace cordon::cli
