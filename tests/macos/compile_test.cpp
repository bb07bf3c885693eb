// compile_test.cpp — what compile_macos_plan() decides: levels off a Mac,
// refusals, token resolution, the /private spellings, the environment and
// the launcher's argv.
#include <gtest/gtest.h>

#include <sstream>

#include "cordon/profiles.h"
#include "macos/environment.h"
#include "macos/sbpl_check.h"
#include "macos_test_support.h"
#include "sbpl_model.h"

namespace cordon::macos_test {
namespace {

using L = enforcement_level;

sandbox_policy workspace_write() { return *builtin_profile("workspace-write"); }

bool has_blocker(const error& failure, const std::string& control) {
  for (const auto& b : failure.blockers) {
    if (b.subject_name() == control) return true;
  }
  return false;
}

// The driver's refusal of `policy` on the example Mac; fails the test when it compiles.
error refusal(const sandbox_policy& policy) {
  auto compiled = macos_impl::compile_macos_plan(policy, example_facts());
  EXPECT_FALSE(static_cast<bool>(compiled));
  return compiled ? error{} : compiled.failure();
}

TEST(MacosCompile, NothingIsEnforcedOnlyUnverifiedUntilAProofRun) {
  auto plan = compile_example(accept_unverified(workspace_write()));
  ASSERT_NE(plan, nullptr);
  EXPECT_FALSE(plan->launchable());
  for (const auto& [which, status] : plan->contract) {
    EXPECT_NE(status.level, L::enforced) << to_string(which);
    EXPECT_NE(status.level, L::partial) << to_string(which);
  }
  EXPECT_EQ(plan->contract.at(control::filesystem_write).level, L::unverified);
  EXPECT_EQ(plan->on_a_mac.at(control::filesystem_write).level, L::enforced);
  EXPECT_EQ(plan->contract.at(control::syscall_filter).level, L::not_enforced);  // true on any host
}

TEST(MacosCompile, NativeFactsStillReportUnverifiedWithoutAProofRun) {
  auto facts = example_facts();
  facts.native = true;
  auto compiled = macos_impl::compile_macos_plan(accept_unverified(workspace_write()), facts);
  ASSERT_TRUE(compiled);
  EXPECT_EQ(compiled.plan()->contract.at(control::filesystem_deny).level, L::unverified);
  EXPECT_EQ(compiled.plan()->on_a_mac.at(control::filesystem_deny).level, L::enforced);
  EXPECT_FALSE(platform_proven("macos"));
}

TEST(MacosCompile, BuiltinProfilesAreRefusedUntilTheyAcceptUnverified) {
  const error f = refusal(workspace_write());
  EXPECT_EQ(f.code, error_code::enforcement_unavailable);
  EXPECT_TRUE(has_blocker(f, "process_tree_cleanup"));
  EXPECT_TRUE(has_blocker(f, "privilege"));
  EXPECT_TRUE(has_blocker(f, "filesystem_write"));
  auto accepted = compile_example(accept_unverified(workspace_write()));
  ASSERT_NE(accepted, nullptr);
  EXPECT_FALSE(accepted->launchable());  // still not a Mac
  // Every acceptance is a warning of the plan.
  EXPECT_NE(std::find_if(accepted->warnings.begin(), accepted->warnings.end(),
                         [](const std::string& w) { return w.rfind("filesystem_write: policy accepts unverified", 0) == 0; }),
            accepted->warnings.end());
}

TEST(MacosCompile, MemoryCeilingProcessCountAndLocalBindingAreRefusedNeverApproximated) {
  sandbox_policy p = workspace_write();
  p.process.memory_bytes = 1 << 30;
  p.process.max_processes = 32;
  p.network.allow_local_binding = true;
  const error f = refusal(accept_unverified(p));
  EXPECT_FALSE(has_blocker(f, "memory"));  // accepted as not_enforced
  EXPECT_TRUE(has_blocker(f, "network_deny"));
  EXPECT_EQ(f.blockers.size(), 1u);
  const error strict = refusal(p);
  EXPECT_TRUE(has_blocker(strict, "memory"));
  EXPECT_TRUE(has_blocker(strict, "process_count"));
  // Accepting not_enforced removes the blocker but keeps the level.
  p.network.allow_local_binding = false;
  auto relaxed = compile_example(accept_unverified(p));
  ASSERT_NE(relaxed, nullptr);
  EXPECT_EQ(relaxed->on_a_mac.at(control::memory).level, L::not_enforced);
  EXPECT_EQ(relaxed->contract.at(control::memory).level, L::not_enforced);
  EXPECT_EQ(relaxed->contract.at(control::process_count).level, L::not_enforced);
  EXPECT_EQ(relaxed->profile.find("network-bind"), std::string::npos);
}

TEST(MacosCompile, CpuIsAPerProcessRlimitAndPartialOnAMac) {
  sandbox_policy p = workspace_write();
  p.process.cpu_seconds = 5;
  p.process.timeout_ms = 2000;
  auto plan = compile_example(accept_unverified(p));
  ASSERT_NE(plan, nullptr);
  EXPECT_EQ(plan->rlimit_cpu_seconds, 5u);
  EXPECT_EQ(plan->timeout_ms, 2000u);
  EXPECT_EQ(plan->on_a_mac.at(control::cpu).level, L::partial);
  const error f = refusal(p);
  EXPECT_TRUE(has_blocker(f, "cpu"));
  EXPECT_TRUE(has_blocker(f, "timeout"));
}

TEST(MacosCompile, TheWorkspaceRuleRefusesRootSystemDirectoriesAndTheHome) {
  for (const char* ws : {"/", "/Users", "/Users/dev", "/USERS/DEV", "/private/var", "/Applications"}) {
    auto facts = macos_impl::example_macos_host_facts("/Users/dev", ws);
    auto compiled = macos_impl::compile_macos_plan(accept_unverified(workspace_write()), facts);
    ASSERT_FALSE(compiled) << ws;
    EXPECT_EQ(compiled.failure().code, error_code::invalid_policy) << ws;
  }
}

TEST(MacosCompile, UnknownWorkspaceIsAPolicyError) {
  auto facts = macos_impl::example_macos_host_facts("/Users/dev", "");
  auto compiled = macos_impl::compile_macos_plan(workspace_write(), facts);
  ASSERT_FALSE(compiled);
  EXPECT_EQ(compiled.failure().code, error_code::invalid_policy);
  ASSERT_FALSE(compiled.failure().errors.empty());
  EXPECT_EQ(compiled.failure().errors[0].location, "/filesystem/readable/0");
}

TEST(MacosCompile, FilteredNetworkWithoutABrokerPortIsRefused) {
  sandbox_policy p = workspace_write();
  p.network.mode = network_mode::filtered;
  auto facts = example_facts();
  facts.broker_port = 0;
  auto compiled = macos_impl::compile_macos_plan(p, facts);
  ASSERT_FALSE(compiled);
  EXPECT_EQ(compiled.failure().code, error_code::enforcement_unavailable);
}

TEST(MacosCompile, FilteredNetworkOpensOnlyTheBrokerPortAndSetsProxies) {
  sandbox_policy p = workspace_write();
  p.network.mode = network_mode::filtered;
  p.network.rules.push_back({"example.com", 443, rule_action::allow});
  auto plan = compile_example(p);
  ASSERT_NE(plan, nullptr);
  EXPECT_NE(plan->profile.find("(allow network-outbound (remote ip \"localhost:3128\"))"), std::string::npos);
  EXPECT_EQ(plan->profile.find("*:*"), std::string::npos);
  EXPECT_EQ(plan->profile.find("dnssd"), std::string::npos);  // the broker resolves names
  auto env = macos_impl::build_environment(plan->environment, {}, "/private/var/folders/zz/cordon/T/run");
  EXPECT_NE(std::find(env.begin(), env.end(), "HTTPS_PROXY=http://127.0.0.1:3128"), env.end());
  EXPECT_NE(std::find(env.begin(), env.end(), "all_proxy=socks5h://127.0.0.1:3128"), env.end());
}

TEST(MacosCompile, EnvironmentFollowsThePolicyAndReRootsTmp) {
  auto plan = compile_example(workspace_write());
  ASSERT_NE(plan, nullptr);
  auto env = macos_impl::build_environment(plan->environment, {"TERM=xterm", "SECRET=1", "LANG=C", "broken"},
                                           "/private/var/folders/zz/cordon/T/cordon-run-1");
  EXPECT_NE(std::find(env.begin(), env.end(), "TERM=xterm"), env.end());
  EXPECT_EQ(std::find(env.begin(), env.end(), "SECRET=1"), env.end());
  EXPECT_NE(std::find(env.begin(), env.end(), "TMPDIR=/private/var/folders/zz/cordon/T/cordon-run-1"), env.end());
  EXPECT_NE(std::find(env.begin(), env.end(), "HOME=/private/var/folders/zz/cordon/T/cordon-run-1"), env.end());
  EXPECT_NE(std::find(env.begin(), env.end(), "PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"),
            env.end());
}

TEST(MacosCompile, BothSpellingsOfPrivatePathsAreRules) {
  sandbox_policy p = workspace_write();
  p.filesystem.denied.push_back("/var/db/secret");
  auto plan = compile_example(p);
  ASSERT_NE(plan, nullptr);
  const auto values = parameter_values(*plan);
  bool canonical = false, link = false;
  for (const auto& [key, value] : values) {
    canonical = canonical || value == "/private/var/db/secret";
    link = link || value == "/var/db/secret";
  }
  EXPECT_TRUE(canonical);
  EXPECT_TRUE(link);
  sbpl_model model(plan->profile, values);
  EXPECT_FALSE(model.allows("file-read-data", "/private/var/db/secret/x"));
  EXPECT_FALSE(model.allows("file-read-data", "/var/db/secret"));
  EXPECT_TRUE(model.allows("file-read-data", "/private/etc/hosts"));  // platform default
  EXPECT_FALSE(model.allows("file-read-data", "/private/etc/ssh/ssh_host_rsa_key"));  // denied /etc/ssh
}

TEST(MacosCompile, ProtectedDirectoryCannotBeCreatedTheFirstTime) {
  sandbox_policy p = workspace_write();
  p.filesystem.protected_read_only.push_back("{workspace}/.github/workflows");
  auto plan = compile_example(p);
  ASSERT_NE(plan, nullptr);
  sbpl_model model(plan->profile, parameter_values(*plan));
  EXPECT_FALSE(model.allows("file-write-create", "/Users/dev/project/.github/workflows"));
  EXPECT_FALSE(model.allows("file-write-create", "/Users/dev/project/.github/workflows/ci.yml"));
  EXPECT_FALSE(model.allows("file-write-unlink", "/Users/dev/project/.github"));  // no rename of the parent
  EXPECT_TRUE(model.allows("file-write-create", "/Users/dev/project/.github/other.yml"));
  EXPECT_TRUE(model.allows("file-write-create", "/Users/dev/project/src/main.c"));
}

TEST(MacosCompile, VcsMetadataIsProtectedInEveryRepositoryEvenNewOnes) {
  auto plan = compile_example(workspace_write());
  ASSERT_NE(plan, nullptr);
  sbpl_model model(plan->profile, parameter_values(*plan));
  for (const char* path : {"/Users/dev/project/.git/hooks/pre-commit", "/Users/dev/project/.git/config",
                           "/Users/dev/project/sub/.git/hooks", "/Users/dev/project/.gitmodules",
                           "/Users/dev/project/vendor/x/.git", "/Users/dev/project/.git/modules/m/hooks/post",
                           "/Users/dev/project/.git/commondir"}) {
    EXPECT_FALSE(model.allows("file-write-create", path)) << path;
    EXPECT_TRUE(model.allows("file-read-data", path)) << path;
  }
  EXPECT_TRUE(model.allows("file-write-data", "/Users/dev/project/.git/index"));
  EXPECT_TRUE(model.allows("file-write-create", "/Users/dev/project/.git/objects/ab/cdef"));
  EXPECT_TRUE(model.allows("file-write-create", "/Users/dev/project/.github/x"));
}

TEST(MacosCompile, DeniedCredentialsStayDeniedUnderFullRead) {
  auto plan = compile_example(*builtin_profile("read-only"));
  ASSERT_NE(plan, nullptr);
  sbpl_model model(plan->profile, parameter_values(*plan));
  EXPECT_FALSE(model.allows("file-read-data", "/Users/dev/.ssh/id_ed25519"));
  EXPECT_FALSE(model.allows("file-read-metadata", "/Users/dev/.ssh"));
  EXPECT_TRUE(model.allows("file-read-data", "/Users/dev/notes.txt"));
  EXPECT_FALSE(model.allows("file-write-create", "/Users/dev/project/x"));
  EXPECT_TRUE(model.allows("file-write-create", "/private/var/folders/zz/cordon/T/cordon-run-XXXXXX/x"));
}

TEST(MacosCompile, ProfileHasNoGlobalGrants) {
  for (const auto& name : builtin_profile_names()) {
    auto plan = compile_example(*builtin_profile(name));
    ASSERT_NE(plan, nullptr);
    EXPECT_EQ(plan->profile.rfind("(version 1)\n(deny default)\n", 0), 0u) << name;
    EXPECT_EQ(plan->profile.find("(allow default"), std::string::npos) << name;
    EXPECT_EQ(plan->profile.find("(allow mach-lookup)"), std::string::npos) << name;
    EXPECT_EQ(plan->profile.find("sysctl-write"), std::string::npos) << name;
    // Policy paths are parameters; only the repository-metadata regexes
    // (protect_vcs_metadata) must spell a writable root in the text.
    std::istringstream lines(plan->profile);
    for (std::string line; std::getline(lines, line);) {
      if (line.find("/Users/dev") != std::string::npos) {
        EXPECT_NE(line.find("(regex #\"^/Users/dev"), std::string::npos) << line;
      }
    }
  }
}

TEST(MacosCompile, SandboxExecArgvCarriesEveryParameter) {
  auto plan = compile_example(workspace_write());
  ASSERT_NE(plan, nullptr);
  auto argv = macos_impl::sandbox_exec_argv(*plan, "/private/var/folders/zz/cordon/T/cordon-run-7", {"/usr/bin/true"});
  ASSERT_GE(argv.size(), 5u);
  EXPECT_EQ(argv[0], "/usr/bin/sandbox-exec");
  EXPECT_EQ(argv[1], "-p");
  EXPECT_EQ(argv[2], plan->profile);
  EXPECT_EQ(argv[argv.size() - 2], "--");
  EXPECT_EQ(argv.back(), "/usr/bin/true");
  EXPECT_NE(std::find(argv.begin(), argv.end(), "-DRUN_TMP=/private/var/folders/zz/cordon/T/cordon-run-7"), argv.end());
  EXPECT_EQ(argv.size(), 3 + plan->parameters.size() + 2);
}

TEST(MacosProbe, OffAMacTheBackendIsUnavailableAndLevelsUnverified) {
  auto caps = macos_impl::probe_macos(example_facts());
  EXPECT_EQ(caps.platform, "macos");
  EXPECT_FALSE(caps.available);
  ASSERT_FALSE(caps.blockers.empty());
  EXPECT_EQ(caps.blockers[0].subject, blocker_subject::backend);
  EXPECT_EQ(caps.best.at(control::network_filter).level, L::unverified);
  EXPECT_EQ(caps.best.at(control::memory).level, L::not_enforced);
}

}  // namespace
}  // namespace cordon::macos_test
