// The Windows plan compiler's gates and every rejection rule of
// docs/windows-backend.md ("What the compiler refuses"), on recorded host facts.
#include <gtest/gtest.h>

#include <algorithm>

#include "cordon/windows/compile.h"
#include "windows_test_support.h"

namespace cordon::windows {
namespace {

using namespace testing;

windows_compile_result compile(const sandbox_policy& p, const host_facts& f = sample_host(),
                               const windows_compile_options& o = sample_options()) {
  return compile_windows_plan(p, f, o);
}

std::string describe(const windows_compile_result& r) {
  if (!r.failure) return "compiled";
  std::string s = std::string(to_string(r.failure->code)) + ": " + r.failure->message;
  for (const auto& b : r.failure->blockers) s += "\n  " + b.cause + " " + b.subject_name() + ": " + b.reason;
  for (const auto& e : r.failure->errors) s += "\n  " + e.location + ": " + e.reason;
  return s;
}

TEST(WindowsCompiler, SamplePolicyCompilesWithIntrinsicDefaultsRecorded) {
  auto r = compile(sample_policy());
  ASSERT_TRUE(r) << describe(r);
  EXPECT_EQ(r.plan->format_version(), plan_format_version);
  EXPECT_EQ(r.plan->platform_defaults(), "windows_appcontainer_intrinsic");
  EXPECT_NE(r.plan->identity(), 0u);
  EXPECT_EQ(r.plan->process_token(), windows_process_token());
  EXPECT_TRUE(r.plan->token().appcontainer);
  EXPECT_TRUE(r.plan->token().capabilities.empty());
  EXPECT_EQ(r.plan->token().deny_only_sids, std::vector<std::string>{"S-1-5-32-544"});
  ASSERT_TRUE(r.plan->run_tmp());
  EXPECT_TRUE(r.plan->run_tmp()->starts_with("C:\\Users\\ada\\AppData\\Local\\Temp\\cordon-run-"));
  EXPECT_EQ(r.plan->intrinsic_readable().front(), "C:\\Windows");
}

TEST(WindowsCompiler, EveryControlIsUnverifiedOrWeakerNeverEnforced) {
  auto r = compile(sample_policy());
  ASSERT_TRUE(r) << describe(r);
  for (control c : all_controls) {
    ASSERT_TRUE(r.plan->contract().contains(c)) << to_string(c);
    EXPECT_NE(r.plan->contract().at(c).level, enforcement_level::enforced) << to_string(c);
    EXPECT_NE(r.plan->contract().at(c).level, enforcement_level::partial) << to_string(c);
  }
  EXPECT_EQ(r.plan->contract().at(control::filesystem_deny).level, enforcement_level::unverified);
  EXPECT_EQ(r.plan->contract().at(control::syscall_filter).level, enforcement_level::not_enforced);
}

TEST(WindowsCompiler, RequirementOfEnforcedIsNotMetByUnverified) {
  sandbox_policy p = sample_policy();
  p.enforcement.erase(control::network_deny);
  auto r = compile(p);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.failure->code, error_code::enforcement_unavailable);
  ASSERT_EQ(r.failure->blockers.size(), 1u) << describe(r);
  const auto& b = r.failure->blockers[0];
  EXPECT_TRUE(b.cause.empty());  // the driver's requirement gate
  EXPECT_EQ(b.subject, blocker_subject::control);
  EXPECT_EQ(b.control, control::network_deny);
  EXPECT_EQ(b.required_name(), "enforced");
  EXPECT_EQ(b.available_name(), "unverified");
}

TEST(WindowsCompiler, RejectsFullFilesystemRead) {
  sandbox_policy p = sample_policy();
  p.filesystem.read = read_mode::full;
  auto r = compile(p);
  EXPECT_TRUE(has_blocker(r, blocker_code::full_read_unsupported)) << describe(r);
}

TEST(WindowsCompiler, RejectsPoliciesWithoutPlatformDefaults) {
  sandbox_policy p = sample_policy();
  p.filesystem.include_platform_defaults = false;
  EXPECT_TRUE(has_blocker(compile(p), blocker_code::platform_defaults_required));
}

TEST(WindowsCompiler, RejectsUnrestrictedAndFilteredNetworkingAndLocalBinding) {
  sandbox_policy p = sample_policy();
  p.network.mode = network_mode::unrestricted;
  EXPECT_TRUE(has_blocker(compile(p), blocker_code::network_unrestricted_unsupported));
  p.network.mode = network_mode::filtered;
  p.network.rules = {{"example.com", 443, rule_action::allow}};
  p.enforcement[control::network_filter] = enforcement_level::unverified;
  EXPECT_TRUE(has_blocker(compile(p), blocker_code::network_filtered_unsupported));
  p = sample_policy();
  p.network.allow_local_binding = true;
  EXPECT_TRUE(has_blocker(compile(p), blocker_code::local_binding_unsupported));
}

TEST(WindowsCompiler, RejectsIsolationAboveOsSandbox) {
  sandbox_policy p = sample_policy();
  p.isolation = isolation_level::container;
  auto r = compile(p);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.failure->code, error_code::isolation_insufficient);
  EXPECT_EQ(r.failure->blockers.at(0).available_name(), "os_sandbox");
}

TEST(WindowsCompiler, BackendUnavailableWithoutJobObjectsAndForReferenceShapesThatLaunch) {
  host_facts f = sample_host();
  f.job_objects = false;
  auto r = compile(sample_policy(), f);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.failure->code, error_code::backend_unavailable);
  auto ref = compile(sample_policy(), reference_host_facts(), sample_options({"cmd.exe"}));
  ASSERT_FALSE(ref);
  EXPECT_EQ(ref.failure->code, error_code::backend_unavailable);
}

TEST(WindowsCompiler, RejectsMissingRoots) {
  sandbox_policy p = sample_policy();
  p.filesystem.readable.push_back("/C:/absent");
  EXPECT_TRUE(has_blocker(compile(p), blocker_code::root_missing));
}

TEST(WindowsCompiler, RejectsRootsWithAReparsePointComponent) {
  host_facts f = sample_host();
  f.paths["C:\\work"] = link();
  EXPECT_TRUE(has_blocker(compile(sample_policy(), f), blocker_code::root_reparse_point));
  f = sample_host();
  f.paths["C:\\Users"] = link();  // an ancestor of {home}/.ssh and of the temp directory
  EXPECT_TRUE(has_blocker(compile(sample_policy(), f), blocker_code::root_reparse_point));
}

TEST(WindowsCompiler, RejectsRootsOnVolumesWithoutPersistentAcls) {
  sandbox_policy p = sample_policy();
  p.filesystem.readable.push_back("/E:/stick");
  EXPECT_TRUE(has_blocker(compile(p), blocker_code::root_acls_not_persistent));
  p = sample_policy();
  p.filesystem.readable.push_back("/D:/");
  host_facts f = sample_host();
  f.paths["D:\\"] = dir();
  EXPECT_TRUE(has_blocker(compile(p, f), blocker_code::root_volume_unknown));
}

TEST(WindowsCompiler, RejectsGrantsThatReachFilesWithSeveralHardLinks) {
  sandbox_policy p = sample_policy();
  p.filesystem.writable.push_back("/C:/tools/build.exe");
  host_facts f = sample_host();
  f.paths["C:\\tools\\build.exe"] = file(2);
  EXPECT_TRUE(has_blocker(compile(p, f), blocker_code::hard_links));
  f = sample_host();
  f.paths["C:\\work\\run.exe"] = file(2);  // inside the writable workspace
  EXPECT_TRUE(has_blocker(compile(sample_policy(), f), blocker_code::hard_links));
  f = sample_host();
  f.paths["C:\\work"].multi_link_descendants = {"C:\\work\\src\\alias.txt"};
  EXPECT_TRUE(has_blocker(compile(sample_policy(), f), blocker_code::hard_links));
  f.paths["C:\\work"].multi_link_descendants = {};
  f.paths["C:\\work"].scan_truncated = true;
  EXPECT_TRUE(has_blocker(compile(sample_policy(), f), blocker_code::scan_truncated));
}

TEST(WindowsCompiler, HardLinkInsideADeniedSubtreeGetsNoGrantAndIsAccepted) {
  sandbox_policy p = sample_policy();
  p.filesystem.denied.push_back("{workspace}/src");
  host_facts f = sample_host();
  f.paths["C:\\work"].multi_link_descendants = {"C:\\work\\src\\alias.txt"};
  auto r = compile(p, f);
  EXPECT_TRUE(r) << describe(r);
}

TEST(WindowsCompiler, AbsentDeniedPathInsideAWritableRootIsRefusedElsewhereNoted) {
  sandbox_policy p = sample_policy();
  p.filesystem.denied.push_back("{workspace}/secrets");
  EXPECT_TRUE(has_blocker(compile(p), blocker_code::absent_inside_writable));
  p = sample_policy();
  p.filesystem.denied.push_back("{home}/.aws");
  auto r = compile(p);
  ASSERT_TRUE(r) << describe(r);
  const auto& notes = r.plan->acl_notes();
  EXPECT_TRUE(std::any_of(notes.begin(), notes.end(), [](const acl_note& n) {
    return n.entry == "C:\\Users\\ada\\.aws" && n.reason.find("does not exist") != std::string::npos;
  }));
}

TEST(WindowsCompiler, PosixOnlyPathsAreNotedForDenialsAndRefusedForGrants) {
  sandbox_policy p = sample_policy();
  p.filesystem.denied.push_back("/etc/shadow");
  auto r = compile(p);
  ASSERT_TRUE(r) << describe(r);
  EXPECT_EQ(r.plan->acl_notes().front().entry, "/etc/shadow");
  p.filesystem.readable.push_back("/usr/lib");
  EXPECT_TRUE(has_blocker(compile(p), blocker_code::not_a_windows_path));
}

TEST(WindowsCompiler, ComponentsWindowsWouldAliasAreInvalid) {
  for (const char* bad : {"/C:/work/file.txt:stream", "/C:/work/name.", "/C:/work/NUL", "/C:/work/com1.log",
                          "/C:/work/a|b"}) {
    sandbox_policy p = sample_policy();
    p.filesystem.readable.push_back(bad);
    auto r = compile(p);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.failure->code, error_code::invalid_policy) << bad;
    EXPECT_EQ(r.failure->errors.at(0).location, "/filesystem/readable/1") << bad;
  }
}

TEST(WindowsCompiler, WorkspaceTokenNeedsAWorkspace) {
  auto r = compile(sample_policy(), sample_host(), windows_compile_options{});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.failure->code, error_code::invalid_policy);
}

TEST(WindowsCompiler, InvalidPortablePolicyFailsAtGateOne) {
  sandbox_policy p = sample_policy();
  p.filesystem.readable.push_back("relative");
  auto r = compile(p);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.failure->code, error_code::invalid_policy);
}

// Without an AppContainer the low-integrity fallback gives writes only; a
// policy that requires reads, denials or the network confined is refused,
// each control once, with the typed reason.
TEST(WindowsCompiler, WithoutAppContainerTheFallbackRefusesWhatItCannotGiveTyped) {
  host_facts f = sample_host();
  f.appcontainer_available = false;
  auto r = compile(sample_policy(), f);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.failure->code, error_code::enforcement_unavailable);
  std::vector<control> refused;
  for (const auto& b : r.failure->blockers) {
    EXPECT_TRUE(has_cause(b, blocker_code::appcontainer_unavailable)) << describe(r);
    EXPECT_EQ(b.required, enforcement_level::unverified);
    EXPECT_EQ(b.available, enforcement_level::not_enforced);
    refused.push_back(b.control);
  }
  // Accepting "unverified" does not accept "nothing"; filesystem_write has its mechanism (the labels).
  EXPECT_EQ(refused, (std::vector<control>{control::filesystem_read, control::filesystem_deny, control::network_deny}))
      << describe(r);
}

TEST(WindowsCompiler, WithoutAppContainerAPolicyAcceptingTheFallbackRunsAtLowIntegrity) {
  host_facts f = sample_host();
  f.appcontainer_available = false;
  sandbox_policy p = sample_policy();
  for (control c : {control::filesystem_read, control::filesystem_deny, control::network_deny}) {
    p.enforcement[c] = enforcement_level::not_enforced;
  }
  auto r = compile(p, f);
  ASSERT_TRUE(r) << describe(r);
  const token_spec& token = r.plan->token();
  EXPECT_FALSE(token.appcontainer);
  EXPECT_TRUE(token.low_integrity);
  EXPECT_EQ(token.restricting_sids,
            (std::vector<std::string>{"{user}", "{logon}", "S-1-1-0", "S-1-5-32-545", "S-1-5-12"}));
  EXPECT_EQ(token.deny_only_sids, std::vector<std::string>{"S-1-5-32-544"});
  // Writable roots get the low label, the protected path inside one a medium
  // label; the denial outside every labelled root needs none.
  std::vector<std::pair<std::string, mandatory_label>> labels;
  for (const auto& c : r.plan->acl_changes()) {
    EXPECT_TRUE(c.aces.empty()) << c.path;
    EXPECT_FALSE(c.protect_dacl) << c.path;
    labels.emplace_back(c.path, c.label);
  }
  ASSERT_EQ(labels.size(), 3u);
  EXPECT_EQ(labels[0], std::make_pair(std::string("C:\\work"), mandatory_label::low));
  // Parents first: the workspace, the protected path inside it, then {run_tmp}.
  EXPECT_EQ(labels[1], std::make_pair(std::string("C:\\work\\.git\\hooks"), mandatory_label::medium));
  EXPECT_EQ(labels[2].first, *r.plan->run_tmp());
  EXPECT_EQ(labels[2].second, mandatory_label::low);
  const auto& notes = r.plan->acl_notes();
  EXPECT_TRUE(std::any_of(notes.begin(), notes.end(), [](const acl_note& n) {
    return n.entry == "C:\\Users\\ada\\.ssh" && n.reason.find("no-write-up") != std::string::npos;
  }));
  const auto& k = r.plan->contract();
  EXPECT_EQ(k.at(control::filesystem_write).level, enforcement_level::unverified);
  EXPECT_NE(k.at(control::filesystem_write).mechanism.find("low mandatory label"), std::string::npos);
  EXPECT_EQ(k.at(control::filesystem_read).level, enforcement_level::not_enforced);
  EXPECT_EQ(k.at(control::filesystem_deny).level, enforcement_level::not_enforced);
  EXPECT_EQ(k.at(control::network_deny).level, enforcement_level::not_enforced);
  const auto& warnings = r.plan->warnings();
  EXPECT_TRUE(std::any_of(warnings.begin(), warnings.end(), [](const std::string& w) {
    return w.find("low-integrity fallback") != std::string::npos;
  }));
  // The same policy with an AppContainer takes the DACL lease, no labels.
  auto with_ac = compile(p);
  ASSERT_TRUE(with_ac) << describe(with_ac);
  EXPECT_FALSE(with_ac.plan->token().low_integrity);
  for (const auto& c : with_ac.plan->acl_changes()) EXPECT_EQ(c.label, mandatory_label::none) << c.path;
}

TEST(WindowsCompiler, ResolvesTheCommandInThePlansPathNotTheHosts) {
  auto r = compile(sample_policy(), sample_host(), sample_options({"build", "--fast"}));
  ASSERT_FALSE(r);  // C:\tools is neither readable nor a platform directory
  EXPECT_TRUE(has_blocker(r, blocker_code::command_not_readable)) << describe(r);
  sandbox_policy p = sample_policy();
  p.filesystem.readable.push_back("/C:/tools");
  r = compile(p, sample_host(), sample_options({"build", "--fast"}));
  ASSERT_TRUE(r) << describe(r);
  EXPECT_EQ(r.plan->command()->application, "C:\\tools\\build.exe");
  EXPECT_EQ(r.plan->command()->command_line, "build --fast");
  EXPECT_EQ(r.plan->command()->working_directory, "C:\\work");
  r = compile(sample_policy(), sample_host(), sample_options({"cmd", "/c", "echo hi"}));
  ASSERT_TRUE(r) << describe(r);
  EXPECT_EQ(r.plan->command()->application, "C:\\Windows\\System32\\cmd.exe");
  EXPECT_EQ(r.plan->command()->command_line, "cmd /c \"echo hi\"");
}

TEST(WindowsCompiler, RefusesMissingCommandsDirectoriesAndBatchFiles) {
  sandbox_policy p = sample_policy();
  p.filesystem.readable.push_back("/C:/tools");
  EXPECT_TRUE(has_blocker(compile(p, sample_host(), sample_options({"absent"})), blocker_code::command_not_found));
  EXPECT_TRUE(has_blocker(compile(p, sample_host(), sample_options({"setup.bat"})),
                          blocker_code::command_not_executable));
  EXPECT_TRUE(has_blocker(compile(p, sample_host(), sample_options({"C:\\tools"})),
                          blocker_code::command_not_executable));
  // A relative path is taken from the working directory, never searched.
  auto r = compile(p, sample_host(), sample_options({".\\run.exe"}));
  ASSERT_TRUE(r) << describe(r);
  EXPECT_EQ(r.plan->command()->application, "C:\\work\\run.exe");
}

TEST(WindowsCompiler, CommandInsideADeniedTreeIsRefused) {
  sandbox_policy p = sample_policy();
  p.filesystem.denied.push_back("/C:/Windows/System32");
  EXPECT_TRUE(has_blocker(compile(p, sample_host(), sample_options({"cmd"})), blocker_code::command_not_readable));
}

TEST(WindowsCompiler, LimitsBecomeJobLimitsAndBoundEachRequest) {
  sandbox_policy p = sample_policy();
  p.process.max_processes = 8;
  p.process.memory_bytes = 256ull << 20;
  p.process.cpu_seconds = 30;
  p.process.timeout_ms = 60'000;
  accept_unverified(p);
  auto r = compile(p);
  ASSERT_TRUE(r) << describe(r);
  const job_limits& l = r.plan->limits();
  EXPECT_TRUE(l.kill_on_close);
  EXPECT_EQ(l.active_processes, 8u);
  EXPECT_EQ(l.job_memory_bytes, 256ull << 20);
  EXPECT_EQ(l.cpu_time_100ns, 300'000'000ull);
  EXPECT_EQ(l.timeout_ms, 60'000u);
  request_limits asks;
  asks.max_processes = 100;  // above the policy's: lowered to it
  asks.memory_bytes = 1 << 20;
  asks.cpu_seconds = 5;
  const job_limits req = limits_for_request(*r.plan, asks);
  EXPECT_EQ(req.active_processes, 8u);
  EXPECT_EQ(req.job_memory_bytes, 1u << 20);
  EXPECT_EQ(req.cpu_time_100ns, 50'000'000ull);
  EXPECT_EQ(req.timeout_ms, 60'000u);
  EXPECT_EQ(r.plan->contract().at(control::memory).level, enforcement_level::unverified);
}

TEST(WindowsCompiler, PlansHaveDistinctIdentitiesAndAppContainerNames) {
  auto a = compile(sample_policy());
  auto b = compile(sample_policy());
  ASSERT_TRUE(a && b);
  EXPECT_NE(a.plan->identity(), b.plan->identity());
  EXPECT_NE(a.plan->token().appcontainer_name, b.plan->token().appcontainer_name);
  EXPECT_LE(a.plan->token().appcontainer_name.size(), 64u);  // the profile name limit
}

TEST(WindowsCompiler, WineHostsAreWarnedAbout) {
  host_facts f = sample_host();
  f.wine = true;
  auto r = compile(sample_policy(), f);
  ASSERT_TRUE(r);
  EXPECT_TRUE(std::any_of(r.plan->warnings().begin(), r.plan->warnings().end(),
                          [](const std::string& w) { return w.starts_with("wine host"); }));
}

TEST(WindowsCompiler, ReferenceShapeExplainsTheBuiltInProfileShape) {
  sandbox_policy p = sample_policy();
  p.filesystem.denied.push_back("/etc/ssh");
  auto built = compile_windows_plan(p, reference_host_facts(), sample_options());
  ASSERT_TRUE(built.plan) << describe(built);
  EXPECT_TRUE(built.plan->from_reference_shape());
  EXPECT_FALSE(built.plan->acl_changes().empty());
}

TEST(WindowsCompiler, TheWorkspaceRuleRefusesADriveRootSystemDirectoriesAndTheProfile) {
  for (const char* ws : {"C:\\", "C:\\Windows", "c:\\users", "C:\\Users\\ada", "C:\\USERS\\ADA"}) {
    windows_compile_options o = sample_options();
    o.workspace = ws;
    auto r = compile_windows_plan(sample_policy(), sample_host(), o);
    ASSERT_FALSE(r) << ws;
    EXPECT_EQ(r.failure->code, error_code::invalid_policy) << ws << " " << describe(r);
  }
}

TEST(WindowsCompiler, AcceptingUnverifiedDoesNotAcceptAnAbsentMechanism) {
  using L = enforcement_level;
  // The one rule, core's (docs/policy.md).
  EXPECT_TRUE(level_satisfies(L::unverified, L::unverified));
  EXPECT_TRUE(level_satisfies(L::not_applicable, L::unverified));
  EXPECT_FALSE(level_satisfies(L::not_enforced, L::unverified));
  EXPECT_FALSE(level_satisfies(L::planned, L::unverified));
  EXPECT_FALSE(level_satisfies(L::unverified, L::enforced));
  EXPECT_FALSE(level_satisfies(L::unverified, L::partial));
  EXPECT_TRUE(level_satisfies(L::not_enforced, L::not_enforced));
}

}  // namespace
}  // namespace cordon::windows

namespace cordon::windows {
namespace {

using namespace testing;

// protect_vcs_metadata has no Windows mechanism: filesystem_deny is partial by
// design, stated unverified by the proof rule with the gap named (never the
// plain "unverified" of a complete mechanism); a requirement of enforced is
// refused, of unverified met with the gap in the plan's warnings.
// protect_vcs_metadata: the metadata of each repository the facts found below
// a writable root is protected like a protected path; metadata that does not
// exist (the command could create it) keeps filesystem_deny partial, named.
TEST(WindowsCompiler, VcsMetadataOfEveryRepositoryFoundIsProtectedAndTheAbsentIsTheGap) {
  sandbox_policy p = sample_policy();
  p.filesystem.protected_read_only.clear();
  p.filesystem.protect_vcs_metadata = true;
  host_facts f = sample_host();
  f.paths["C:\\work"].repositories = {"C:\\work", "C:\\work\\src"};
  f.paths["C:\\work\\.git\\config"] = file();
  f.paths["C:\\work\\src\\.git"] = file();  // a submodule's or worktree's link
  auto r = compile_windows_plan(p, f, sample_options());
  ASSERT_TRUE(r) << (r ? "" : r.failure->message);
  std::vector<std::string> protected_paths;
  for (const auto& c : r.plan->acl_changes()) {
    if (c.role == acl_role::protected_read_only) protected_paths.push_back(c.path);
  }
  std::sort(protected_paths.begin(), protected_paths.end());
  EXPECT_EQ(protected_paths, (std::vector<std::string>{"C:\\work\\.git\\config", "C:\\work\\.git\\hooks",
                                                       "C:\\work\\src\\.git"}));
  const control_status& deny = r.plan->contract().at(control::filesystem_deny);
  EXPECT_EQ(deny.level, enforcement_level::unverified);
  EXPECT_EQ(deny.detail,
            "no proof run on windows has passed yet (would be partial; protect_vcs_metadata: deny-write ACEs on the "
            "metadata of 2 repositories found below the writable roots; absent, so the command could create them: "
            "C:\\work\\.git\\config.worktree, C:\\work\\.git\\commondir, C:\\work\\.gitmodules and 1 more)");
  const auto& w = r.plan->warnings();
  EXPECT_NE(std::find(w.begin(), w.end(), "filesystem_deny is unverified: " + deny.detail), w.end());
  // Every metadata file present: no gap, the control is what its mechanism gives (unverified, not partial).
  for (const char* present : {"C:\\work\\.git\\config.worktree", "C:\\work\\.git\\commondir", "C:\\work\\.gitmodules",
                              "C:\\work\\src\\.gitmodules"}) {
    f.paths[present] = file();
  }
  auto whole = compile_windows_plan(p, f, sample_options());
  ASSERT_TRUE(whole) << (whole ? "" : whole.failure->message);
  EXPECT_EQ(whole.plan->contract().at(control::filesystem_deny).detail,
            "protect_vcs_metadata: deny-write ACEs on the metadata of 2 repositories found below the writable roots");
  p.filesystem.protect_vcs_metadata = false;
  auto without = compile_windows_plan(p, sample_host(), sample_options());
  ASSERT_TRUE(without);
  EXPECT_EQ(without.plan->contract().at(control::filesystem_deny).detail,
            "no Windows runner has verified this mechanism here");
}

}  // namespace
}  // namespace cordon::windows
