// Golden plans: each built-in profile compiled by the Linux backend on
// recorded host shapes (host facts built by hand: Landlock ABI 0/2/4/7,
// cgroup v1 root / v2 delegated / none, user namespaces on/off), compared
// with checked-in text in tests/golden/plans/. The plan is a pure function of
// policy and facts, so nothing here depends on this machine's kernel.
// Regenerate after a deliberate change: CORDON_UPDATE_GOLDEN=1.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cordon/cordon.h"
#include "golden_plan_text.h"
#include "linux/linux_plan.h"

namespace cordon {
namespace {

const std::filesystem::path kGolden = std::filesystem::path(CORDON_SOURCE_DIR) / "tests/golden/plans";
// Fixed roots, so the expected text names the same paths on every machine.
const std::string kWorkspace = "/tmp/cordon-golden/workspace";
const std::string kHome = "/tmp/cordon-golden/home";

struct host_shape {
  const char* name;
  host_facts facts;
};

host_facts linux_host(unsigned uid, int landlock_abi, bool userns) {
  host_facts f;
  f.platform = "linux";
  f.uid = f.gid = uid;
  f.home = kHome;
  f.user_namespaces = userns;
  f.backend_available = userns;
  if (!userns) {
    f.user_namespace_blocker = "user namespaces disabled by sysctl user.max_user_namespaces=0";
    f.backend_blocker = f.user_namespace_blocker;
  }
  f.landlock_abi = landlock_abi;
  if (landlock_abi == 0) f.landlock_blocker = "Landlock not available (not built or not in the LSM list)";
  f.seccomp = true;
  return f;
}

std::vector<host_shape> shapes() {
  host_facts v1_root = linux_host(0, 7, true);
  v1_root.cgroups.memory_parent = "/sys/fs/cgroup/memory";
  v1_root.cgroups.pids_parent = "/sys/fs/cgroup/pids";
  v1_root.cgroups.cpu_parent = "/sys/fs/cgroup/cpu,cpuacct";
  host_facts v2_delegated = linux_host(1000, 4, true);
  v2_delegated.cgroups.v2 = true;
  v2_delegated.cgroups.memory_parent = v2_delegated.cgroups.pids_parent = v2_delegated.cgroups.cpu_parent =
      "/sys/fs/cgroup/user.slice/user-1000.slice/cordon";
  host_facts no_cgroup = linux_host(1000, 2, true);
  no_cgroup.cgroups.blocker = "no writable cgroup for uid 1000";
  host_facts no_landlock = linux_host(1000, 0, true);
  no_landlock.cgroups.blocker = "no writable cgroup for uid 1000";
  host_facts no_userns = linux_host(1000, 7, false);
  return {{"abi7-cgroup-v1-root", v1_root},
          {"abi4-cgroup-v2-delegated", v2_delegated},
          {"abi2-no-cgroup", no_cgroup},
          {"abi0-no-cgroup", no_landlock},
          {"abi7-no-userns", no_userns}};
}

// The plan (or the refusal) as text (golden_plan_text.h), without the digest of
// the binds' device and inode numbers, which differ from host to host.
std::string render(const compile_result<std::shared_ptr<const sandbox_plan>>& compiled) {
  return test::golden_plan_text(compiled, [](const std::string& line) {
    return line.rfind(linux_impl::mount_identities_prefix, 0) != 0;
  });
}

class GoldenPlan : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(kWorkspace);
    std::filesystem::create_directories(kHome);
  }
};

TEST_F(GoldenPlan, BuiltInProfilesOnRecordedHostShapes) {
  auto backend = make_linux_backend();
  const bool update = std::getenv("CORDON_UPDATE_GOLDEN") != nullptr;
  int compared = 0;
  for (const auto& shape : shapes()) {
    for (const auto& profile : builtin_profile_names()) {
      SCOPED_TRACE(std::string(shape.name) + " x " + profile);
      auto policy = builtin_profile(profile);
      ASSERT_TRUE(policy);
      compile_options options;
      options.workspace = kWorkspace;
      options.home = kHome;
      const std::string actual = render(backend->compile(*policy, options, shape.facts));
      const auto file = kGolden / (std::string(shape.name) + "__" + profile + ".txt");
      if (update) {
        std::ofstream(file) << actual;
        continue;
      }
      std::ifstream in(file);
      ASSERT_TRUE(in) << "missing golden file " << file << " (CORDON_UPDATE_GOLDEN=1 writes it)";
      std::stringstream expected;
      expected << in.rdbuf();
      EXPECT_EQ(actual, expected.str()) << "plan differs from " << file;
      ++compared;
    }
  }
  if (!update) {
    EXPECT_GE(compared, 12);
  }
}

// probe() is build() of the strictest policy on the same facts: what it
// promises is what a compile on those facts delivers.
TEST_F(GoldenPlan, ProbeIsBuildOfAStrictPolicyOnTheSameFacts) {
  auto backend = make_linux_backend();
  for (const auto& shape : shapes()) {
    SCOPED_TRACE(shape.name);
    host_capabilities caps = backend->probe(shape.facts);
    EXPECT_EQ(caps.available, shape.facts.backend_available);
    if (!caps.available) continue;
    sandbox_policy strict;
    strict.filesystem.read = read_mode::restricted;
    strict.network.mode = network_mode::denied;
    strict.process.memory_bytes = 1 << 20;
    strict.process.max_processes = 8;
    strict.process.cpu_seconds = 1;
    for (control c : {control::memory, control::process_count, control::cpu}) {
      strict.enforcement[c] = enforcement_level::not_enforced;  // accept whatever the host has
    }
    auto compiled = backend->compile(strict, {}, shape.facts);
    ASSERT_TRUE(compiled) << compiled.failure().describe();
    for (control c : {control::memory, control::process_count, control::filesystem_write}) {
      EXPECT_EQ(caps.best.at(c).level, compiled.value()->contract().at(c).level) << to_string(c);
    }
  }
}

}  // namespace
}  // namespace cordon
