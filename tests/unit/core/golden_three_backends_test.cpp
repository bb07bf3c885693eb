// Golden plans of the macOS and Windows backends, and of user policies on all
// three, from the one compile driver (sandbox_backend::compile) on recorded
// host facts: the imaginary Mac of example_macos_host_facts() and the
// Windows reference shape of reference_host_facts() (the facts
// `cordon policy explain --platform macos|windows` uses), and one Linux shape.
// Each built-in profile and each policy in tests/golden/policies/ is compiled
// and compared with tests/golden/plans/<platform>-<shape>__<name>.txt.
// Regenerate after a deliberate change: CORDON_UPDATE_GOLDEN=1.
//
// No control of a macOS or Windows plan may be `enforced` or `partial`: no
// proof run of either platform has passed (docs/architecture.md, "Proof runs").
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "cordon/backend.h"
#include "cordon/linux_backend.h"
#include "cordon/policy_json.h"
#include "cordon/profiles.h"
#include "cordon/windows/compile.h"
#include "cordon/windows/host_facts.h"
#include "golden_plan_text.h"
#include "linux/linux_plan.h"
#include "macos/backend.h"
#include "macos/host_facts.h"
#include "macos/macos_plan.h"

namespace cordon {
namespace {

namespace fs = std::filesystem;

const fs::path kGolden = fs::path(CORDON_SOURCE_DIR) / "tests/golden/plans";
const fs::path kPolicies = fs::path(CORDON_SOURCE_DIR) / "tests/golden/policies";

// One backend on one recorded host shape; `workspace` and `home` spelled for its platform.
struct recorded_host {
  std::string name;  // "<platform>-<shape>", the golden files' prefix
  const sandbox_backend* backend;
  host_facts facts;
  std::string workspace;
  std::string home;
};

// The Linux shape abi7-cgroup-v1-root of unit/linux/golden_plan_test.cpp,
// rooted where that test's files are.
host_facts linux_facts() {
  host_facts f;
  f.platform = "linux";
  f.uid = f.gid = 0;
  f.home = "/tmp/cordon-golden/home";
  f.user_namespaces = true;
  f.backend_available = true;
  f.landlock_abi = 7;
  f.seccomp = true;
  f.cgroups.memory_parent = "/sys/fs/cgroup/memory";
  f.cgroups.pids_parent = "/sys/fs/cgroup/pids";
  f.cgroups.cpu_parent = "/sys/fs/cgroup/cpu,cpuacct";
  return f;
}

std::vector<recorded_host> recorded_hosts() {
  static const std::unique_ptr<sandbox_backend> linux_backend = make_linux_backend();
  return {
      {"linux-abi7-cgroup-v1-root", linux_backend.get(), linux_facts(), "/tmp/cordon-golden/workspace",
       "/tmp/cordon-golden/home"},
      {"macos-example", &macos_impl::the_macos_backend(),
       macos_impl::to_host_facts(macos_impl::example_macos_host_facts("/Users/dev", "/Users/dev/project")),
       "/Users/dev/project", "/Users/dev"},
      {"windows-reference", &windows::the_windows_backend(),
       windows::to_driver_facts(windows::reference_host_facts(), {}), "C:\\Users\\user\\work", "C:\\Users\\user"},
  };
}

struct named_policy {
  std::string name;
  sandbox_policy policy;
};

// The built-in profiles (macOS and Windows only: Linux's are in
// unit/linux/golden_plan_test.cpp on five shapes) and the user policies.
std::vector<named_policy> policies_for(const recorded_host& host) {
  std::vector<named_policy> out;
  if (host.backend->platform() != "linux") {
    for (const auto& name : builtin_profile_names()) {
      auto p = builtin_profile(name);
      EXPECT_TRUE(p) << name;
      if (p) out.push_back({name, *p});
    }
  }
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(kPolicies)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    auto p = load_sandbox_policy(file.string());
    EXPECT_TRUE(p) << file << ": " << (p ? "" : p.error_value().describe());
    if (p) out.push_back({"policy-" + file.stem().string(), *p});
  }
  return out;
}

compile_result<std::shared_ptr<const sandbox_plan>> compile_on(const recorded_host& host,
                                                              const sandbox_policy& policy) {
  compile_options options;
  options.workspace = host.workspace;
  options.home = host.home;
  return host.backend->compile(policy, options, host.facts);
}

class GoldenThreeBackends : public ::testing::Test {
 protected:
  void SetUp() override {
    // The Linux backend looks at the roots it binds (symlinks, repositories).
    fs::create_directories("/tmp/cordon-golden/workspace");
    fs::create_directories("/tmp/cordon-golden/home");
  }
};

TEST_F(GoldenThreeBackends, PlansOnRecordedFactsMatchTheGoldenFiles) {
  int compared = 0;
  for (const auto& host : recorded_hosts()) {
    for (const auto& [name, policy] : policies_for(host)) {
      SCOPED_TRACE(host.name + " x " + name);
      std::string text = test::golden_plan_text(compile_on(host, policy), [](const std::string& line) {
        return line.rfind(linux_impl::mount_identities_prefix, 0) != 0;  // Linux: the binds' device and inode numbers
      });
      // Windows names {run_tmp} with a random part at compile time.
      text = std::regex_replace(text, std::regex("cordon-run-[0-9a-f]+-[0-9]+"), "cordon-run-RANDOM-N");
      const std::string differs = test::compare_with_golden(kGolden / (host.name + "__" + name + ".txt"), text);
      EXPECT_EQ(differs, "");
      ++compared;
    }
  }
  // 3 built-in profiles on 2 platforms, 3 user policies on 3.
  EXPECT_GE(compared, 15);
}

TEST_F(GoldenThreeBackends, NoMacosOrWindowsPlanClaimsEnforcedOrPartial) {
  int plans = 0;
  for (const auto& host : recorded_hosts()) {
    if (host.backend->platform() == "linux") continue;
    for (const auto& [name, policy] : policies_for(host)) {
      SCOPED_TRACE(host.name + " x " + name);
      auto compiled = compile_on(host, policy);
      if (!compiled) {
        // A refusal names what the platform delivers: never more than unverified.
        for (const auto& b : compiled.failure().blockers) {
          if (b.subject != blocker_subject::control) continue;
          EXPECT_NE(b.available, enforcement_level::enforced) << b.subject_name();
          EXPECT_NE(b.available, enforcement_level::partial) << b.subject_name();
        }
        continue;
      }
      ++plans;
      for (const auto& [which, status] : compiled.value()->contract()) {
        EXPECT_NE(status.level, enforcement_level::enforced) << to_string(which);
        EXPECT_NE(status.level, enforcement_level::partial) << to_string(which);
      }
    }
  }
  // The built-in profiles state their relaxations for macOS and Windows
  // (platform_enforcement): all three compile on macOS; on Windows only
  // workspace-write does, read-only and offline read everything, which an
  // AppContainer cannot (full_read_unsupported, their true answer, never a silent
  // downgrade). build-step compiles on both, filtered-network on macOS.
  EXPECT_EQ(plans, 7);
}

}  // namespace
}  // namespace cordon
