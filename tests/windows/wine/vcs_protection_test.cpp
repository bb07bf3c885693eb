// protect_vcs_metadata on the live host (docs/windows-backend.md,
// "protect_vcs_metadata"): the gatherer's walk finds every repository below a
// writable root (a `.git` directory or file) and probes its metadata, and the
// plan protects what exists. Whether the deny ACEs then stop a write from the
// AppContainer only a Windows runner shows (wine turns deny ACEs into chmod):
// scripts/windows-ci.ps1, "protect_vcs_metadata".
#include <algorithm>
#include <cstring>

#include "wine_support.h"

namespace cordon::windows {
namespace {

using namespace testing;

void write_file(const std::string& path, const char* text) {
  win32::unique_handle h(CreateFileW(win32::widen(path).c_str(), GENERIC_WRITE, 0, nullptr, CREATE_ALWAYS, 0, nullptr));
  ASSERT_TRUE(h) << path;
  DWORD written = 0;
  WriteFile(h.get(), text, static_cast<DWORD>(std::strlen(text)), &written, nullptr);
}

TEST(WindowsVcsProtection, TheGathererFindsEveryRepositoryAndThePlanProtectsItsMetadata) {
  temp_dir root;
  CreateDirectoryW(win32::widen(root.file(".git")).c_str(), nullptr);
  CreateDirectoryW(win32::widen(root.file(".git\\hooks")).c_str(), nullptr);
  write_file(root.file(".git\\config"), "[core]\n");
  CreateDirectoryW(win32::widen(root.file("sub")).c_str(), nullptr);
  write_file(root.file("sub\\.git"), "gitdir: ../.git/modules/sub\n");
  sandbox_policy p = plumbing_policy();
  p.filesystem.readable = {policy_path(root.path()), policy_path(exe_directory())};
  p.filesystem.writable = {policy_path(root.path())};
  p.filesystem.protect_vcs_metadata = true;
  const windows_compile_options o = options_for({});
  host_facts facts = gather_host_facts(paths_to_probe(p, gather_host_facts({}), o));
  const auto found = find_path(facts, root.path());
  ASSERT_TRUE(found);
  std::vector<std::string> repositories = found->repositories;
  std::sort(repositories.begin(), repositories.end());
  EXPECT_EQ(repositories, (std::vector<std::string>{root.path(), root.file("sub")}));
  // With an AppContainer (claimed here; wine has none) the metadata gets deny-write ACEs.
  facts.appcontainer_available = true;
  for (auto& v : facts.volumes) v.persistent_acls = true;
  auto compiled = compile_windows_plan(p, facts, o);
  ASSERT_TRUE(compiled) << describe(compiled);
  std::vector<std::string> protected_paths;
  for (const auto& c : compiled.plan->acl_changes()) {
    if (c.role == acl_role::protected_read_only) protected_paths.push_back(c.path);
  }
  std::sort(protected_paths.begin(), protected_paths.end());
  EXPECT_EQ(protected_paths,
            (std::vector<std::string>{root.file(".git\\config"), root.file(".git\\hooks"), root.file("sub\\.git")}));
  const control_status& deny = compiled.plan->contract().at(control::filesystem_deny);
  EXPECT_NE(deny.detail.find("2 repositories"), std::string::npos) << deny.detail;
  EXPECT_NE(deny.detail.find(root.file(".gitmodules")), std::string::npos) << deny.detail;  // absent: the gap
}

}  // namespace
}  // namespace cordon::windows
