// The fixture of the prepared-sandbox tests (tests/prepared): the host
// backend (skipped, with the reason, where it is not available), a
// workspace of the test's own, and plans of the built-in profiles for it.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "cordon/cordon.h"
#include "../host_expect.h"

namespace cordon {

class prepared_fixture : public ::testing::Test {
 protected:
  void SetUp() override {
    backend_ = make_host_backend();
    if (!backend_->probe().available) CORDON_SKIP_UNLESS_DECLARED("userns", 1, "the host backend is not available here");
    workspace_ = std::filesystem::temp_directory_path() / ("cordon-prepared-" + std::to_string(::getpid()));
    std::filesystem::create_directories(workspace_);
  }
  void TearDown() override {
    if (!workspace_.empty()) std::filesystem::remove_all(workspace_);
  }

  std::shared_ptr<const sandbox_plan> compile_profile(const char* name) {
    auto policy = builtin_profile(name);
    EXPECT_TRUE(policy);
    compile_options options;
    options.workspace = workspace_.string();
    auto compiled = backend_->compile(*policy, options);
    EXPECT_TRUE(compiled) << compiled.failure().describe();
    return compiled ? compiled.plan() : nullptr;
  }

  std::unique_ptr<sandbox_backend> backend_;
  std::filesystem::path workspace_;
};

}  // namespace cordon
