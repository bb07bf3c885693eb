// A plan of the host-execution backend (cordon/selection.h, sandbox
// forbidden) for tests of the run API and prepared sandboxes: the one kind
// of policy it compiles, which accepts not_enforced for every control and
// leaves nothing to act on (tests/unit/core/selection_test.cpp shows why).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "cordon/cordon.h"
#include "cordon/selection.h"

namespace cordon {

// The plan points at its backend, which lives as long as the test program.
inline std::shared_ptr<const sandbox_plan> host_execution_plan(const std::string& workspace) {
  static const std::unique_ptr<sandbox_backend> backend = make_host_execution_backend();
  sandbox_policy policy;
  policy.isolation = isolation_level::none;
  for (control c : all_controls) policy.enforcement[c] = enforcement_level::not_enforced;
  policy.enforcement.erase(control::network_filter);
  policy.filesystem.read = read_mode::full;
  policy.network.mode = network_mode::unrestricted;
  compile_options options;
  options.workspace = workspace;
  auto compiled = backend->compile(policy, options);
  EXPECT_TRUE(compiled) << compiled.failure().describe();
  return compiled ? compiled.plan() : nullptr;
}

}  // namespace cordon
