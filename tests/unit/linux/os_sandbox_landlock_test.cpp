// The os_sandbox backend's filesystem rules (linux/os_sandbox_landlock.h):
// how a root that holds a denied or protected path is granted entry by
// entry. Pure compile-time rules over a temporary tree; the confinement
// itself is tests/escape/os_sandbox_escape_test.cpp's.
#include "linux/os_sandbox_landlock.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace cordon::linux_impl {
namespace {

namespace fs = std::filesystem;

struct tree {
  std::string root;
  tree() {
    char templ[] = "/tmp/cordon-osl-XXXXXX";
    root = ::mkdtemp(templ);
    fs::create_directories(root + "/src");
    fs::create_directories(root + "/secret");
    fs::create_directories(root + "/.git/hooks");
    std::ofstream(root + "/README") << "r";
    std::ofstream(root + "/.git/config") << "c";
    std::ofstream(root + "/.git/HEAD") << "h";
    fs::create_symlink("/etc", root + "/etc-link");
  }
  ~tree() {
    std::error_code ignored;
    fs::remove_all(root, ignored);
  }
};

sandbox_policy writable_workspace(const std::string& root) {
  sandbox_policy p;
  p.filesystem.read = read_mode::restricted;
  p.filesystem.include_platform_defaults = false;
  p.filesystem.readable = {root};
  p.filesystem.writable = {root};
  return p;
}

// The access of the rule on exactly `path`, or "none".
std::string access_of(const os_sandbox_fs_rules& rules, const std::string& path) {
  std::string found = "none";
  for (const auto& rule : rules.rules) {
    if (rule.path != path) continue;
    const std::string name = landlock_access_name(rule.access);
    // read_write dominates read when a root is both readable and writable.
    if (found == "none" || name == "read_write") found = name;
  }
  return found;
}

TEST(OsSandboxLandlock, ARootWithoutExceptionsIsOneRule) {
  tree t;
  auto rules = build_os_sandbox_fs_rules(writable_workspace(t.root), {});
  EXPECT_EQ(access_of(rules, t.root), "read_write");
  EXPECT_EQ(access_of(rules, t.root + "/src"), "none");
  EXPECT_TRUE(rules.split.empty());
  EXPECT_TRUE(rules.blockers.empty());
}

TEST(OsSandboxLandlock, ADeniedPathSplitsItsRootAndGetsNothing) {
  tree t;
  sandbox_policy p = writable_workspace(t.root);
  p.filesystem.denied = {t.root + "/secret"};
  auto rules = build_os_sandbox_fs_rules(p, {});
  EXPECT_EQ(access_of(rules, t.root), "none");  // READ_DIR would be inherited by secret/
  EXPECT_EQ(access_of(rules, t.root + "/secret"), "none");
  EXPECT_EQ(access_of(rules, t.root + "/src"), "read_write");
  EXPECT_EQ(access_of(rules, t.root + "/README"), "read_write");
  EXPECT_EQ(access_of(rules, t.root + "/etc-link"), "none");  // a symlink's target is never granted
  EXPECT_EQ(rules.split, std::vector<std::string>{t.root});
}

TEST(OsSandboxLandlock, ProtectedPathsAreReadOnlyAndTheirDirectoriesGetNoWriteRight) {
  tree t;
  auto rules = build_os_sandbox_fs_rules(writable_workspace(t.root), {t.root + "/.git/hooks", t.root + "/.git/config"});
  // The readable grant of the root stays whole (read is all a protected path
  // may have); the writable one is split, so the root's own level gets no
  // write right and .git only READ_DIR from that grant.
  EXPECT_EQ(access_of(rules, t.root), "read");
  EXPECT_EQ(access_of(rules, t.root + "/.git"), "list_directory");
  EXPECT_EQ(access_of(rules, t.root + "/.git/hooks"), "read");
  EXPECT_EQ(access_of(rules, t.root + "/.git/config"), "read");
  EXPECT_EQ(access_of(rules, t.root + "/.git/HEAD"), "read_write");
  EXPECT_EQ(access_of(rules, t.root + "/src"), "read_write");
}

TEST(OsSandboxLandlock, ARootInsideADeniedPathIsDropped) {
  tree t;
  sandbox_policy p = writable_workspace(t.root + "/secret");
  p.filesystem.denied = {t.root};
  auto rules = build_os_sandbox_fs_rules(p, {});
  EXPECT_EQ(access_of(rules, t.root + "/secret"), "none");
}

TEST(OsSandboxLandlock, ADeniedFileWithAnotherNameIsRefused) {
  tree t;
  ASSERT_EQ(::link((t.root + "/README").c_str(), (t.root + "/src/alias").c_str()), 0);
  sandbox_policy p = writable_workspace(t.root);
  p.filesystem.denied = {t.root + "/README"};
  auto rules = build_os_sandbox_fs_rules(p, {});
  ASSERT_EQ(rules.blockers.size(), 1U);
  EXPECT_EQ(rules.blockers[0].control, control::filesystem_deny);
  EXPECT_NE(rules.blockers[0].reason.find("hard links"), std::string::npos);
}

}  // namespace
}  // namespace cordon::linux_impl
