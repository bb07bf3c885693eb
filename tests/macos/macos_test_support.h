// macos_test_support.h — fixed facts and helpers shared by the macOS tests.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "macos/macos_plan.h"

namespace cordon::macos_test {

inline constexpr const char* example_home = "/Users/dev";
inline constexpr const char* example_workspace = "/Users/dev/project";

inline macos_impl::macos_host_facts example_facts() {
  return macos_impl::example_macos_host_facts(example_home, example_workspace);
}

// Compiles with the example facts; fails the test when compile fails.
inline std::shared_ptr<const macos_impl::macos_plan> compile_example(const sandbox_policy& policy) {
  auto compiled = macos_impl::compile_macos_plan(policy, example_facts());
  EXPECT_TRUE(static_cast<bool>(compiled)) << (compiled ? "" : compiled.failure().message);
  return compiled ? compiled.plan() : nullptr;
}

inline std::map<std::string, std::string> parameter_values(const macos_impl::macos_plan& plan) {
  std::map<std::string, std::string> values;
  for (const auto& p : plan.parameters) values[p.key] = p.value;
  return values;
}

}  // namespace cordon::macos_test
