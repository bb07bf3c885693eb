// What wine fakes: each of these passes its call and does nothing, so under
// wine they are skipped with the reason (docs/windows-backend.md, "Tests");
// on a Windows runner they run. A DACL denial is never counted under wine.
#include <aclapi.h>

#include "windows/launcher/job_object.h"
#include "windows/launcher/path_boundary.h"
#include "windows/launcher/restricted_token.h"
#include "wine_support.h"

namespace cordon::windows {
namespace {

using namespace testing;

TEST(WindowsOnly, JobMemoryLimitStopsACommit) {
  CORDON_SKIP_ON_WINE("JOB_OBJECT_LIMIT_JOB_MEMORY is accepted and ignored (a child commits 512 MiB under 64 MiB)");
  job_limits limits;
  limits.job_memory_bytes = 64ull << 20;
  auto job = launcher::create_job(limits);
  ASSERT_TRUE(job);
  EXPECT_TRUE(launcher::read_back_job(job->get(), limits).memory);
}

TEST(WindowsOnly, ActiveProcessLimitReadsBack) {
  CORDON_SKIP_ON_WINE("JOB_OBJECT_LIMIT_ACTIVE_PROCESS is accepted and ignored; limits read back as 0");
  job_limits limits;
  limits.active_processes = 1;
  auto job = launcher::create_job(limits);
  ASSERT_TRUE(job);
  EXPECT_TRUE(launcher::read_back_job(job->get(), limits).active_processes);
}

TEST(WindowsOnly, RestrictedTokenHasOnlyChangeNotify) {
  CORDON_SKIP_ON_WINE("NtFilterToken ignores DISABLE_MAX_PRIVILEGE: the token keeps every privilege");
  auto token = launcher::create_restricted_token(token_spec{});
  ASSERT_TRUE(token);
  const auto r = launcher::read_back_token(token->get());
  EXPECT_TRUE(r.read);
  EXPECT_TRUE(r.only_change_notify);
  EXPECT_TRUE(r.administrators_deny_only);
}

TEST(WindowsOnly, AppContainerChildIsLowIntegrityAndDenied) {
  CORDON_SKIP_ON_WINE("userenv.dll has no AppContainer exports; SECURITY_CAPABILITIES is refused");
  temp_dir root;
  sandbox_policy p = plumbing_policy();
  const std::string child = root.file("cordon_wine_child.exe");
  CopyFileW(win32::widen(child_exe()).c_str(), win32::widen(child).c_str(), FALSE);
  p.filesystem.readable = {policy_path(root.path())};
  for (control c : {control::filesystem_read, control::filesystem_write, control::network_deny}) p.enforcement[c] = enforcement_level::unverified;
  windows_compile_options o = options_for({child, "token"});
  auto compiled = compile_windows_plan(p, gather_host_facts(paths_to_probe(p, gather_host_facts({}), o)), o);
  ASSERT_TRUE(compiled) << describe(compiled);
  auto ran = launch_windows_plan(*compiled.plan, {});
  ASSERT_TRUE(ran) << ran.error_value().describe();
  EXPECT_NE(ran->stdout_text.find("appcontainer=1"), std::string::npos) << ran->stdout_text;
}

TEST(WindowsOnly, DeniedPathIsUnreadableFromTheAppContainer) {
  CORDON_SKIP_ON_WINE("DACLs become unix permission bits (a deny ACE is a chmod); a denial here would prove nothing");
  temp_dir root;
  const std::string child = root.file("cordon_wine_child.exe");
  CopyFileW(win32::widen(child_exe()).c_str(), win32::widen(child).c_str(), FALSE);
  const std::string secret = root.file("secret");
  CreateDirectoryW(win32::widen(secret).c_str(), nullptr);
  sandbox_policy p = plumbing_policy();
  p.filesystem.readable = {policy_path(root.path())};
  p.filesystem.writable = {policy_path(root.path())};
  p.filesystem.denied = {policy_path(secret)};
  for (control c : {control::filesystem_read, control::filesystem_write, control::filesystem_deny, control::network_deny}) {
    p.enforcement[c] = enforcement_level::unverified;
  }
  windows_compile_options o = options_for({child, "write", secret + "\\x"});
  auto compiled = compile_windows_plan(p, gather_host_facts(paths_to_probe(p, gather_host_facts({}), o)), o);
  ASSERT_TRUE(compiled) << describe(compiled);
  auto ran = launch_windows_plan(*compiled.plan, {});
  ASSERT_TRUE(ran) << ran.error_value().describe();
  EXPECT_EQ(ran->stdout_text.rfind("write failed 5", 0), 0u) << ran->stdout_text;  // ERROR_ACCESS_DENIED
  EXPECT_FALSE(exists(secret + "\\x"));
}

TEST(WindowsOnly, ReparsePointRootIsRefused) {
  CORDON_SKIP_ON_WINE("CreateSymbolicLinkW is a stub and unix symlinks show no reparse attribute");
  temp_dir dir;
  const std::string target = dir.file("target"), link = dir.file("link");
  CreateDirectoryW(win32::widen(target).c_str(), nullptr);
  if (!CreateSymbolicLinkW(win32::widen(link).c_str(), win32::widen(target).c_str(),
                           SYMBOLIC_LINK_FLAG_DIRECTORY | SYMBOLIC_LINK_FLAG_ALLOW_UNPRIVILEGED_CREATE)) {
    GTEST_SKIP() << "this user may not create symbolic links (no developer mode)";
  }
  auto opened = launcher::open_path(link, 0);
  ASSERT_FALSE(opened);
  EXPECT_NE(opened.error_value().message.find("reparse point"), std::string::npos);
}

TEST(WindowsOnly, HeldAncestorsCannotBeRenamed) {
  CORDON_SKIP_ON_WINE("share modes do not stop renaming a held directory (measured: MoveFileW succeeds)");
  temp_dir dir;
  const std::string sub = dir.file("sub");
  ASSERT_TRUE(CreateDirectoryW(win32::widen(sub).c_str(), nullptr));
  auto opened = launcher::open_path(sub, 0);
  ASSERT_TRUE(opened) << opened.error_value().describe();
  EXPECT_FALSE(MoveFileW(win32::widen(sub).c_str(), win32::widen(dir.file("moved")).c_str()))
      << "a directory held without FILE_SHARE_DELETE was renamed";
  opened->chain.clear();
  EXPECT_TRUE(MoveFileW(win32::widen(sub).c_str(), win32::widen(dir.file("moved")).c_str()));
}

}  // namespace
}  // namespace cordon::windows
