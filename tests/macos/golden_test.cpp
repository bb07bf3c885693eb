// golden_test.cpp — the exact profile, parameters and levels compiled for each
// built-in profile and each edge-case policy in tests/macos/policies/.
//
// Regenerate after an intended change (then review the diff):
//   CORDON_UPDATE_GOLDEN=1 build/tests/macos/cordon_macos_tests --gtest_filter='*Golden*'
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "cordon/policy_json.h"
#include "cordon/profiles.h"
#include "macos/sbpl_check.h"
#include "macos_test_support.h"

namespace cordon::macos_test {
namespace {

namespace fs = std::filesystem;

const fs::path golden_dir = fs::path(CORDON_SOURCE_DIR) / "tests/macos/golden";
const fs::path policy_dir = fs::path(CORDON_SOURCE_DIR) / "tests/macos/policies";

// The golden file: a header of `;;` lines (parameters, levels, the driver's
// blockers for the policy as written) that scripts/macos-runner.sh reads, then
// the profile exactly as generated for the policy made runnable (every
// requirement lowered by accept_unverified, isolation at most os_sandbox, no
// local binding).
std::string golden_text(const std::string& name, const macos_impl::macos_plan& plan, const std::vector<blocker>& blockers) {
  std::ostringstream out;
  out << ";; cordon macos golden: " << name << "\n";
  out << ";; regenerate: CORDON_UPDATE_GOLDEN=1 build/tests/macos/cordon_macos_tests --gtest_filter='*Golden*'\n";
  for (const auto& p : plan.parameters) {
    out << ";; param " << p.key << "=" << p.value << (p.at_launch ? " (at launch)" : "") << "\n";
  }
  for (const auto& [which, status] : plan.on_a_mac) {
    out << ";; level " << to_string(which) << " on-a-mac=" << to_string(status.level)
        << " here=" << to_string(plan.contract.at(which).level) << "\n";
  }
  for (const auto& b : blockers) {
    out << ";; blocker " << b.subject_name() << " required=" << b.required_name() << " available=" << b.available_name()
        << "\n";
  }
  out << ";; compiles-as-written: " << (blockers.empty() ? "yes" : "no (blocked)") << "\n";
  out << plan.profile;
  return out.str();
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void check_golden(const std::string& name, const sandbox_policy& policy) {
  // The profile is that of the policy made runnable: requirements accepted
  // at what a Mac can state, isolation at most os_sandbox, no local binding.
  sandbox_policy runnable = policy;
  if (runnable.isolation > isolation_level::os_sandbox) runnable.isolation = isolation_level::os_sandbox;
  runnable.network.allow_local_binding = false;
  auto plan = compile_example(runnable);
  ASSERT_NE(plan, nullptr);
  EXPECT_TRUE(macos_impl::check_sbpl_profile(plan->profile, parameter_values(*plan)).empty());
  auto as_written = macos_impl::compile_macos_plan(policy, example_facts());
  const std::string actual =
      golden_text(name, *plan, as_written ? std::vector<blocker>{} : as_written.failure().blockers);
  const fs::path file = golden_dir / (name + ".sb");
  if (const char* update = std::getenv("CORDON_UPDATE_GOLDEN"); update != nullptr && std::string(update) == "1") {
    std::ofstream(file, std::ios::binary) << actual;
    return;
  }
  ASSERT_TRUE(fs::exists(file)) << file << " is missing; regenerate with CORDON_UPDATE_GOLDEN=1";
  EXPECT_EQ(read_file(file), actual) << "golden " << file << " differs; if intended, regenerate and review";
}

class GoldenBuiltin : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenBuiltin, ProfileParametersAndLevelsMatch) {
  auto policy = builtin_profile(GetParam());
  ASSERT_TRUE(policy) << policy.error_value().describe();
  check_golden("builtin-" + GetParam(), *policy);
}

INSTANTIATE_TEST_SUITE_P(Builtins, GoldenBuiltin, ::testing::ValuesIn(builtin_profile_names()),
                         [](const auto& i) {
                           std::string n = i.param;
                           for (auto& c : n) c = c == '-' ? '_' : c;
                           return n;
                         });

std::vector<std::string> edge_policies() {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(policy_dir)) {
    if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

class GoldenEdge : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenEdge, ProfileParametersAndLevelsMatch) {
  auto policy = load_sandbox_policy((policy_dir / (GetParam() + ".json")).string());
  ASSERT_TRUE(policy) << policy.error_value().describe();
  check_golden(GetParam(), *policy);
}

INSTANTIATE_TEST_SUITE_P(EdgeCases, GoldenEdge, ::testing::ValuesIn(edge_policies()), [](const auto& i) {
  std::string n = i.param;
  for (auto& c : n) c = c == '-' ? '_' : c;
  return n;
});

// Every golden file on disk belongs to a test (no stale files).
TEST(GoldenFiles, EveryFileHasAPolicy) {
  std::set<std::string> expected;
  for (const auto& n : builtin_profile_names()) expected.insert("builtin-" + n);
  for (const auto& n : edge_policies()) expected.insert(n);
  for (const auto& entry : fs::directory_iterator(golden_dir)) {
    EXPECT_TRUE(expected.contains(entry.path().stem().string())) << "stale golden " << entry.path();
  }
  EXPECT_GE(expected.size(), 9u);
}

}  // namespace
}  // namespace cordon::macos_test
