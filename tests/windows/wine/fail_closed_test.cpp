// Fail closed: when a call the sandbox needs fails, nothing runs. wine's
// stubs are the fault injector here (the AppContainer exports are missing,
// PROC_THREAD_ATTRIBUTE_SECURITY_CAPABILITIES is refused), and a plan that
// is not this process's current one is refused.
#include "wine_support.h"

namespace cordon::windows {
namespace {

using namespace testing;

// Facts that claim AppContainer support, as a host might wrongly report it.
bool claim_appcontainer(host_facts& f) {
  f.appcontainer_available = true;
  for (auto& v : f.volumes) v.persistent_acls = true;
  return true;
}

// A provider that hands out a well-formed AppContainer SID without a profile,
// so that the launch reaches the attribute list.
class fixed_sid_provider final : public appcontainer_provider {
 public:
  result<std::string> create(const std::string&) const override { return std::string("S-1-15-2-1-2-3-4-5-6-7"); }
  result<void> remove(const std::string&) const override { return ok; }
};

sandbox_policy appcontainer_policy(const temp_dir& root) {
  sandbox_policy p = plumbing_policy();
  p.filesystem.readable = {policy_path(root.path())};
  for (control c : {control::filesystem_read, control::filesystem_write, control::network_deny}) {
    p.enforcement[c] = enforcement_level::unverified;
  }
  return p;
}

// The child copied into `root`, so that the AppContainer plan's command is readable.
std::string copy_child(const temp_dir& root) {
  const std::string to = root.file("cordon_wine_child.exe");
  CopyFileW(win32::widen(child_exe()).c_str(), win32::widen(to).c_str(), FALSE);
  return to;
}

windows_compile_result compile_with_appcontainer(const temp_dir& root, const std::string& marker) {
  const sandbox_policy p = appcontainer_policy(root);
  windows_compile_options o = options_for({copy_child(root), "write", marker});
  host_facts facts = gather_host_facts(paths_to_probe(p, gather_host_facts({}), o));
  claim_appcontainer(facts);
  return compile_windows_plan(p, facts, o);
}

TEST(WindowsFailClosed, MissingAppContainerFunctionsRefuseTheLaunch) {
  if (!running_on_wine()) GTEST_SKIP() << "this host has AppContainer: the refusal needs a host without it";
  temp_dir root, out;
  auto compiled = compile_with_appcontainer(root, out.file("ran"));
  ASSERT_TRUE(compiled) << describe(compiled);
  ASSERT_TRUE(compiled.plan->token().appcontainer);
  auto ran = launch_windows_plan(*compiled.plan, {});
  ASSERT_FALSE(ran) << "the launch went ahead without an AppContainer";
  EXPECT_EQ(ran.error_value().code, error_code::launch_failed);
  EXPECT_NE(ran.error_value().message.find("CreateAppContainerProfile"), std::string::npos) << ran.error_value().message;
  EXPECT_FALSE(exists(out.file("ran")));
}

TEST(WindowsFailClosed, RefusedSecurityCapabilitiesAttributeRefusesTheLaunch) {
  if (!running_on_wine()) GTEST_SKIP() << "Windows accepts SECURITY_CAPABILITIES: the refusal needs wine's stub";
  temp_dir root, out, leases;
  auto compiled = compile_with_appcontainer(root, out.file("ran"));
  ASSERT_TRUE(compiled) << describe(compiled);
  fixed_sid_provider provider;
  windows_launch_options options;
  options.appcontainer = &provider;
  options.lease_directory = leases.path();
  auto ran = launch_windows_plan(*compiled.plan, options);
  ASSERT_FALSE(ran) << "the child started outside any AppContainer";
  EXPECT_NE(ran.error_value().message.find("SECURITY_CAPABILITIES"), std::string::npos) << ran.error_value().message;
  EXPECT_FALSE(exists(out.file("ran")));
  // The lease taken before the failure is restored and its record removed.
  WIN32_FIND_DATAW data;
  HANDLE find = FindFirstFileW(win32::widen(leases.file("lease-*.json")).c_str(), &data);
  EXPECT_EQ(find, INVALID_HANDLE_VALUE) << "a lease record was left behind";
  if (find != INVALID_HANDLE_VALUE) FindClose(find);
}

TEST(WindowsFailClosed, PlansWithoutACommandOrFromAReferenceShapeAreRefused) {
  sandbox_policy on_c = plumbing_policy();
  on_c.filesystem.readable = {"/C:/Users/user/work"};  // the reference shape has C: only
  auto built = compile_windows_plan(on_c, reference_host_facts(), options_for({}));
  ASSERT_TRUE(built.plan);
  auto ran = launch_windows_plan(*built.plan, {});
  ASSERT_FALSE(ran);
  EXPECT_EQ(ran.error_value().code, error_code::backend_unavailable);
  auto live = compile_windows_plan(plumbing_policy(), gather_host_facts({}), options_for({}));
  ASSERT_TRUE(live) << describe(live);
  auto none = launch_windows_plan(*live.plan, {});
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error_value().code, error_code::plan_null);
}

// A library caller that records this host's facts and compiles on the loaded
// record gets a plan that never launches (plan_recorded_facts); the same
// policy on the live facts runs.
TEST(WindowsFailClosed, APlanCompiledOnLoadedFactsOfThisHostIsRefused) {
  temp_dir out;
  const sandbox_policy p = plumbing_policy();
  const windows_compile_options o = options_for({child_exe(), "write", out.file("ran")});
  const host_facts live = gather_host_facts(paths_to_probe(p, gather_host_facts({}), o));
  const windows_backend& backend = the_windows_backend();
  auto record = backend.record_host_facts(to_driver_facts(live, o));
  ASSERT_TRUE(record) << record.error_value().describe();
  auto loaded = backend.load_host_facts(*record, {});
  ASSERT_TRUE(loaded) << loaded.error_value().describe();
  const auto* recorded = backend_facts_as<windows_backend_facts>(*loaded);
  ASSERT_NE(recorded, nullptr);
  auto described = compile_windows_plan(p, recorded->host, o);
  ASSERT_TRUE(described) << describe(described);
  auto refused = launch_windows_plan(*described.plan, {});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error_value().code, error_code::plan_recorded_facts);
  EXPECT_FALSE(exists(out.file("ran")));
  auto compiled = compile_windows_plan(p, live, o);
  ASSERT_TRUE(compiled) << describe(compiled);
  auto ran = launch_windows_plan(*compiled.plan, {});
  ASSERT_TRUE(ran) << ran.error_value().describe();
  EXPECT_TRUE(exists(out.file("ran")));
}

}  // namespace
}  // namespace cordon::windows
