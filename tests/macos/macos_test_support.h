// macos_test_support.h — fixed facts and helpers shared by the macOS tests.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "macos/contract.h"
#include "macos/macos_plan.h"

namespace cordon::macos_test {

inline constexpr const char* example_home = "/Users/dev";
inline constexpr const char* example_workspace = "/Users/dev/project";

inline macos_impl::macos_host_facts example_facts() {
  return macos_impl::example_macos_host_facts(example_home, example_workspace);
}

// `policy` with every requirement explicitly lowered to what a Mac is
// designed to give, as the proof rule reports it: `unverified` where the
// design says enforced or partial, `not_enforced` where it gives nothing.
// Each is a relaxation the plan warns about (docs/policy.md).
inline sandbox_policy accept_unverified(sandbox_policy policy) {
  const auto design = macos_impl::macos_design_contract(policy, 3128);
  for (const auto& [which, required] : required_enforcement(policy)) {
    const auto level = design.at(which).level;
    if (level != enforcement_level::not_applicable && !level_satisfies(enforcement_level::unverified, required)) {
      policy.enforcement[which] = level == enforcement_level::enforced || level == enforcement_level::partial
                                    ? enforcement_level::unverified
                                    : enforcement_level::not_enforced;
    }
  }
  return policy;
}

// Compiles accept_unverified(policy) with the example facts; fails the test
// when compile fails.
inline std::shared_ptr<const macos_impl::macos_plan> compile_example(const sandbox_policy& policy) {
  auto compiled = macos_impl::compile_macos_plan(accept_unverified(policy), example_facts());
  EXPECT_TRUE(static_cast<bool>(compiled)) << (compiled ? "" : compiled.failure().message);
  return compiled ? compiled.plan() : nullptr;
}

inline std::map<std::string, std::string> parameter_values(const macos_impl::macos_plan& plan) {
  std::map<std::string, std::string> values;
  for (const auto& p : plan.parameters) values[p.key] = p.value;
  return values;
}

}  // namespace cordon::macos_test
