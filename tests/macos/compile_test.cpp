// compile_test.cpp — what compile_macos_plan() decides: levels off a Mac,
// refusals, token resolution, the /private spellings, the environment and
// the launcher's argv.
#include <gtest/gtest.h>

#include <map>
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

TEST(MacosCompile, APolicyWithoutMacosEntriesIsRefusedUntilItAcceptsUnverified) {
  sandbox_policy policy = workspace_write();
  policy.platform_enforcement.clear();
  const error f = refusal(policy);
  EXPECT_EQ(f.code, error_code::enforcement_unavailable);
  EXPECT_TRUE(has_blocker(f, "process_tree_cleanup"));
  EXPECT_TRUE(has_blocker(f, "privilege"));
  EXPECT_TRUE(has_blocker(f, "filesystem_write"));
  auto accepted = compile_example(accept_unverified(policy));
  ASSERT_NE(accepted, nullptr);
  EXPECT_FALSE(accepted->launchable());  // still not a Mac
  // Every acceptance is a warning of the plan.
  EXPECT_NE(std::find_if(accepted->warnings.begin(), accepted->warnings.end(),
                         [](const std::string& w) { return w.rfind("filesystem_write: policy accepts unverified", 0) == 0; }),
            accepted->warnings.end());
}

bool has_warning(const macos_impl::macos_plan& plan, const std::string& text) {
  return std::find(plan.warnings.begin(), plan.warnings.end(), text) != plan.warnings.end();
}

// The built-in profiles state what they require on macOS (profiles/*.json,
// "platform_enforcement"): they compile there as they are, and every
// relaxation is a warning of the plan, never silent.
TEST(MacosCompile, BuiltinProfilesCompileWithEveryMacosRelaxationWarned) {
  for (const auto& name : builtin_profile_names()) {
    SCOPED_TRACE(name);
    const sandbox_policy policy = *builtin_profile(name);
    auto compiled = macos_impl::compile_macos_plan(policy, example_facts());
    ASSERT_TRUE(compiled) << compiled.failure().describe();
    const auto& plan = *compiled.plan();
    const auto& entries = policy.platform_enforcement.at("macos");
    for (const auto& [which, level] : entries) {
      EXPECT_TRUE(has_warning(plan, std::string(to_string(which)) + ": policy accepts " + std::string(to_string(level)) +
                                        " on macos (its content implies enforced)"))
          << to_string(which);
    }
    EXPECT_TRUE(entries.contains(control::process_tree_cleanup));
    EXPECT_TRUE(entries.contains(control::privilege));
    // Nothing is accepted that the mechanism is designed not to give.
    for (const auto& [which, level] : entries) EXPECT_EQ(level, L::unverified) << to_string(which);
  }
}

// The macOS entries of each built-in profile are exactly what the proof rule
// and the design leave: while no macOS proof run has passed, `unverified` for
// every implied control the mechanism is designed to enforce or give in part.
// When platform_proven("macos") changes, this test asks for the designed
// levels instead (partial for process_tree_cleanup and privilege, no entry
// where the design gives enforced), so the profiles change in the same commit.
TEST(MacosCompile, BuiltinMacosEntriesFollowTheProofRuleAndTheDesign) {
  for (const auto& name : builtin_profile_names()) {
    SCOPED_TRACE(name);
    const sandbox_policy policy = *builtin_profile(name);
    const auto design = macos_impl::macos_design_contract(policy, 3128);
    std::map<control, enforcement_level> expected;
    for (const auto& [which, required] : required_enforcement(policy)) {
      const auto designed = design.at(which).level;
      if (required != L::enforced) continue;
      if (!platform_proven("macos") && (designed == L::enforced || designed == L::partial)) {
        expected[which] = L::unverified;
      } else if (platform_proven("macos") && designed == L::partial) {
        expected[which] = L::partial;
      }
    }
    EXPECT_EQ(policy.platform_enforcement.at("macos"), expected);
    EXPECT_FALSE(policy.platform_enforcement.contains("linux"));
  }
}

// A relaxation for macOS is not one on Linux: the Linux requirement stays.
TEST(MacosCompile, MacosEntriesDoNotRelaxOtherPlatforms) {
  const sandbox_policy policy = workspace_write();
  EXPECT_EQ(required_enforcement(policy, "linux").at(control::process_tree_cleanup), L::enforced);
  EXPECT_EQ(required_enforcement(policy, "macos").at(control::process_tree_cleanup), L::unverified);
  EXPECT_TRUE(relaxation_warnings(policy, "linux").empty());
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
  EXPECT_EQ(relaxed->profile.find("(local ip"), std::string::npos);  // no IP listener; unix sockets only
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
  EXPECT_NE(std::find(env.begin(), env.end(),
                      "PATH=/opt/homebrew/bin:/opt/homebrew/sbin:/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"),
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

// APFS is case-insensitive by default: ".GIT/hooks" is ".git/hooks".
TEST(MacosCompile, VcsMetadataIsProtectedInEveryLetterCase) {
  auto plan = compile_example(workspace_write());
  ASSERT_NE(plan, nullptr);
  sbpl_model model(plan->profile, parameter_values(*plan));
  for (const char* path : {"/Users/dev/project/.GIT/hooks/pre-commit", "/Users/dev/project/.Git/Config",
                           "/Users/dev/project/.GITMODULES", "/Users/dev/project/sub/.git/HOOKS/post",
                           "/Users/dev/project/.git/Modules/m/hooks/x", "/USERS/DEV/PROJECT/.git/config",
                           "/Users/dev/project/.git/COMMONDIR", "/Users/dev/project/.git/config.WORKTREE"}) {
    EXPECT_FALSE(model.allows("file-write-create", path)) << path;
  }
  EXPECT_TRUE(model.allows("file-write-create", "/Users/dev/project/.GITHUB/x"));
  EXPECT_TRUE(model.allows("file-write-data", "/Users/dev/project/.GIT/index"));
  EXPECT_EQ(plan->profile.find("\\.git|"), std::string::npos);  // no lower-case-only alternative left
  EXPECT_NE(plan->profile.find("\\.[gG][iI][tT]"), std::string::npos);
}

// What Apple's /usr/bin shims, Homebrew, dyld and libinfo read before main
// (docs/macos-backend.md, "Everyday tools").
TEST(MacosCompile, PlatformDefaultsCoverToolchainsHomebrewAndTheLoader) {
  auto plan = compile_example(workspace_write());
  ASSERT_NE(plan, nullptr);
  sbpl_model model(plan->profile, parameter_values(*plan));
  for (const char* path : {"/private/var/db/xcode_select_link", "/Library/Developer/CommandLineTools/usr/bin/git",
                           "/Applications/Xcode.app/Contents/Developer/usr/bin/clang", "/opt/homebrew/bin/python3",
                           "/usr/local/Cellar/node/22/bin/node", "/usr/local/bin/git", "/usr/local/etc/ca.pem",
                           "/private/var/db/DarwinDirectory/local/recordStore.data", "/Library/Apple/usr/libexec/oah",
                           "/"}) {
    EXPECT_TRUE(model.allows("file-read-data", path)) << path;
  }
  EXPECT_TRUE(model.allows("process-exec", "/Library/Developer/CommandLineTools/usr/bin/clang"));
  for (const char* path : {"/usr/local/private.key", "/Applications/Other.app/x", "/Library/Keychains/System.keychain",
                           "/private/var/db/DarwinDirectory/local/other", "/Library/Developer/Other",
                           "/private/var/db/sudo/ts"}) {
    EXPECT_FALSE(model.allows("file-read-data", path)) << path;
  }
  // The root directory's own entries, nothing below it.
  EXPECT_FALSE(model.allows("file-read-data", "/Users/other/x"));
  for (const char* dir : {"/Library", "/Library/Developer", "/Applications", "/opt", "/usr/local", "/private/var/db"}) {
    EXPECT_TRUE(model.allows("file-read-metadata", dir)) << dir;
  }
  // Nothing here is writable.
  EXPECT_FALSE(model.allows("file-write-create", "/opt/homebrew/bin/git"));
  EXPECT_FALSE(model.allows("file-write-data", "/private/var/db/xcode_select_link"));
}

TEST(MacosCompile, SemaphoresPreferencesAndUnixSocketsInWritableRoots) {
  sandbox_policy policy = workspace_write();
  policy.filesystem.unix_sockets = {"/var/run/docker.sock"};
  auto plan = compile_example(policy);
  ASSERT_NE(plan, nullptr);
  const std::string& text = plan->profile;
  EXPECT_NE(text.find("\n(allow ipc-posix-sem)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\n(allow user-preference-read)\n"), std::string::npos);
  EXPECT_NE(text.find("\n(allow system-socket (socket-domain AF_UNIX))\n"), std::string::npos);
  EXPECT_EQ(text.find("(allow ipc-posix-shm)"), std::string::npos);
  // bind/accept: writable roots only, minus denied and protected paths.
  const auto bind = text.find("(allow network-bind network-inbound");
  ASSERT_NE(bind, std::string::npos) << text;
  const std::string bind_rule = text.substr(bind, text.find("\n(", bind + 1) - bind);
  EXPECT_NE(bind_rule.find("(local unix-socket (subpath (param \"WRITE_0\")))"), std::string::npos) << bind_rule;
  EXPECT_NE(bind_rule.find("(local unix-socket (subpath (param \"RUN_TMP\")))"), std::string::npos) << bind_rule;
  EXPECT_NE(bind_rule.find("(require-not (local unix-socket (subpath (param \"DENY_0\"))))"), std::string::npos);
  EXPECT_NE(bind_rule.find("(require-not (local unix-socket (literal (param \"PROTECT_0\"))))"), std::string::npos);
  EXPECT_EQ(bind_rule.find("SOCKET_"), std::string::npos);
  // connect: the same roots and the listed socket, in both spellings, minus denied paths.
  const auto connect = text.find("(allow network-outbound");
  ASSERT_NE(connect, std::string::npos);
  const std::string connect_rule = text.substr(connect, text.find("\n(", connect + 1) - connect);
  EXPECT_NE(connect_rule.find("(remote unix-socket (subpath (param \"WRITE_0\")))"), std::string::npos);
  EXPECT_NE(connect_rule.find("(remote unix-socket (literal (param \"SOCKET_0\")))"), std::string::npos);
  EXPECT_NE(connect_rule.find("(remote unix-socket (literal (param \"SOCKET_1\")))"), std::string::npos);
  EXPECT_NE(connect_rule.find("(require-not (remote unix-socket (subpath (param \"DENY_0\"))))"), std::string::npos);
  EXPECT_EQ(connect_rule.find("PROTECT_"), std::string::npos);
  EXPECT_EQ(connect_rule.find("remote ip"), std::string::npos);  // network denied: no IP at all
  const auto values = parameter_values(*plan);
  EXPECT_EQ(values.at("SOCKET_0"), "/private/var/run/docker.sock");
  EXPECT_EQ(values.at("SOCKET_1"), "/var/run/docker.sock");
}

TEST(MacosCompile, TheInheritedTerminalIsReadAndWrittenNeverIoctled) {
  auto plan = compile_example(workspace_write());
  ASSERT_NE(plan, nullptr);
  EXPECT_NE(plan->profile.find("(allow file-read-data file-write-data\n"), std::string::npos) << plan->profile;
  EXPECT_NE(plan->profile.find("(literal (param \"TERMINAL\"))"), std::string::npos);
  EXPECT_NE(plan->profile.find("(vnode-type CHARACTER-DEVICE)"), std::string::npos);
  std::istringstream lines(plan->profile);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(";;", 0) != 0) {
      EXPECT_EQ(line.find("file-ioctl"), std::string::npos) << line;  // in no rule
    }
  }
  EXPECT_EQ(plan->profile.find("ttys[0-9]"), std::string::npos);  // one terminal, not every one
  const auto terminal = std::find_if(plan->parameters.begin(), plan->parameters.end(),
                                     [](const auto& p) { return p.key == "TERMINAL"; });
  ASSERT_NE(terminal, plan->parameters.end());
  EXPECT_TRUE(terminal->at_launch);
  auto argv = macos_impl::sandbox_exec_argv(*plan, "/private/var/folders/zz/cordon/T/r", {"/bin/echo"}, "/dev/ttys003");
  EXPECT_NE(std::find(argv.begin(), argv.end(), "-DTERMINAL=/dev/ttys003"), argv.end());
  argv = macos_impl::sandbox_exec_argv(*plan, "/private/var/folders/zz/cordon/T/r", {"/bin/echo"});
  EXPECT_NE(std::find(argv.begin(), argv.end(), "-DTERMINAL=/dev/null"), argv.end());
}

TEST(MacosCompile, HomebrewGoesFirstOnThePolicysPathWhenPresent) {
  auto plan = compile_example(workspace_write());
  ASSERT_NE(plan, nullptr);
  std::string path;
  for (const auto& [name, value] : plan->environment.set) {
    if (name == "PATH") path = value;
  }
  EXPECT_EQ(path, "/opt/homebrew/bin:/opt/homebrew/sbin:/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin");
  EXPECT_NE(std::find_if(plan->warnings.begin(), plan->warnings.end(),
                         [](const std::string& w) { return w.rfind("environment: PATH starts with Homebrew's", 0) == 0; }),
            plan->warnings.end());
  auto facts = example_facts();
  facts.homebrew_bin.clear();  // an Intel Mac, or none installed
  auto compiled = macos_impl::compile_macos_plan(accept_unverified(workspace_write()), facts);
  ASSERT_TRUE(compiled);
  for (const auto& [name, value] : compiled.plan()->environment.set) {
    if (name == "PATH") {
      EXPECT_EQ(value, "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin");
    }
  }
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
