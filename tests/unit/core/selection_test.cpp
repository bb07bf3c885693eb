// Backend selection (cordon/selection.h): forbid is host execution, allowed
// only for a policy that accepts not_enforced for every control it has
// something for; automatic/require give the platform sandbox.
#include <gtest/gtest.h>

#include <algorithm>

#include "cordon/cordon.h"
#include "cordon/selection.h"

namespace cordon {
namespace {

TEST(Selection, ForbidRefusesARestrictedPolicyAndSaysSoForAnAcceptedOne) {
  auto selected = select_backend(sandbox_preference::forbid);
  ASSERT_TRUE(selected);
  const sandbox_backend& host = **selected;
  EXPECT_EQ(host.name(), host_execution_backend_name);
  sandbox_policy p;
  p.filesystem.writable = {"/tmp"};
  auto refused = host.compile(p, {});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.failure().code, error_code::isolation_insufficient);

  p.isolation = isolation_level::none;
  refused = host.compile(p, {});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.failure().code, error_code::enforcement_unavailable);
  for (const auto& b : refused.failure().blockers) EXPECT_EQ(b.available, enforcement_level::not_enforced);

  for (control c : all_controls) p.enforcement[c] = enforcement_level::not_enforced;
  p.filesystem.read = read_mode::full;
  p.network.mode = network_mode::unrestricted;
  p.enforcement.erase(control::network_filter);
  auto compiled = host.compile(p, {});
  ASSERT_TRUE(compiled) << compiled.failure().describe();
  EXPECT_EQ(compiled.plan()->backend_name(), "host-execution");
  EXPECT_EQ(compiled.plan()->contract().at(control::filesystem_write).level, enforcement_level::not_enforced);
  const auto& warnings = compiled.plan()->warnings();
  EXPECT_NE(std::find(warnings.begin(), warnings.end(), "host execution (sandbox forbidden): nothing is confined"),
            warnings.end());
  run_report r = run_in_this_process(*compiled.plan(), {{"/bin/sh", "-c", "exit 7"}, "/", {}});
  ASSERT_TRUE(r.outcome);
  EXPECT_EQ(r.outcome->exit_code, 7);
  EXPECT_NE(r.json.find("host-execution"), std::string::npos);
}

TEST(Selection, RequireGivesThePlatformSandboxOrFailsClosed) {
  auto selected = select_backend(sandbox_preference::require);
  if (!selected) {
    EXPECT_EQ(selected.error_value().code, error_code::backend_unavailable);
    return;
  }
  EXPECT_EQ((*selected)->name(), "linux-namespaces");
  auto automatic = select_backend(sandbox_preference::automatic);
  ASSERT_TRUE(automatic);
  EXPECT_EQ((*automatic)->name(), "linux-namespaces");
}

}  // namespace
}  // namespace cordon
