// Golden tests of the mount table a plan applies, before anything runs.
#include "linux/mount_table.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace cordon::linux_impl {
namespace {

class MountTable : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/var/tmp/cordon-mt-XXXXXX";
    root_ = ::mkdtemp(tmpl);
    std::filesystem::create_directories(root_ + "/ws/.git/hooks");
    std::filesystem::create_directories(root_ + "/ws/private");
    std::filesystem::create_directories(root_ + "/data");
    std::ofstream(root_ + "/ws/secret.txt") << "s";
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  mount_table_result build(sandbox_policy& p) {
    mount_table_input in;
    in.policy = &p;
    return build_mount_table(in);
  }
  std::string root_;
};

std::vector<std::string> lines(const mount_table& t) {
  std::vector<std::string> out;
  for (const auto& op : t.ops) {
    if (op.why == "platform default") continue;
    const char* kind = op.kind == mount_kind::bind_read_only  ? "ro"
                       : op.kind == mount_kind::bind_writable ? "rw"
                       : op.kind == mount_kind::private_tmpfs ? "tmpfs"
                       : op.kind == mount_kind::mask          ? "mask"
                                                              : "symlink";
    out.push_back(std::string(kind) + " " + op.path + " " + op.why);
  }
  return out;
}

TEST_F(MountTable, PrecedenceOrderDeniedOverProtectedOverWritableOverReadable) {
  sandbox_policy p;
  p.filesystem.read = read_mode::restricted;
  p.filesystem.readable = {root_ + "/ws", root_ + "/data"};
  p.filesystem.writable = {root_ + "/ws", "{run_tmp}"};
  p.filesystem.protected_read_only = {root_ + "/ws/.git"};
  p.filesystem.denied = {root_ + "/ws/secret.txt", root_ + "/ws/private", root_ + "/elsewhere"};
  auto r = build(p);
  EXPECT_TRUE(r.blockers.empty());
  std::vector<std::string> expected = {
      "tmpfs /tmp {run_tmp}",
      "ro " + root_ + "/data readable",
      "rw " + root_ + "/ws writable",
      "ro " + root_ + "/ws/.git protected",
      "mask " + root_ + "/ws/secret.txt denied",
      "mask " + root_ + "/ws/private denied",
  };
  EXPECT_EQ(lines(r.table), expected);
  EXPECT_TRUE(r.table.private_tmp);
  EXPECT_FALSE(r.table.full_root);
  // The denied path nothing makes visible needs no mount.
  ASSERT_EQ(r.table.skipped.size(), 2u);
  EXPECT_NE(r.table.skipped[0].find("/ws: inside a writable root"), std::string::npos);
  EXPECT_NE(r.table.skipped[1].find("/elsewhere: not visible"), std::string::npos);
}

TEST_F(MountTable, AbsentDeniedOrProtectedPathInsideAWritableRootIsRefused) {
  sandbox_policy p;
  p.filesystem.writable = {root_ + "/ws"};
  p.filesystem.denied = {root_ + "/ws/not-yet"};
  p.filesystem.protected_read_only = {root_ + "/ws/.git/config"};
  auto r = build(p);
  ASSERT_EQ(r.blockers.size(), 2u);
  EXPECT_EQ(r.blockers[0].control, control::filesystem_deny);
  EXPECT_NE(r.blockers[0].reason.find(root_ + "/ws/.git/config does not exist"), std::string::npos);
  EXPECT_NE(r.blockers[1].reason.find(root_ + "/ws/not-yet does not exist"), std::string::npos);
}

TEST_F(MountTable, FullReadSkipsRedundantReadableBindsAndResolvesSymlinks) {
  std::filesystem::create_directory_symlink(root_ + "/data", root_ + "/link");
  sandbox_policy p;
  p.filesystem.read = read_mode::full;
  p.filesystem.readable = {root_ + "/data"};
  p.filesystem.writable = {root_ + "/link"};
  auto r = build(p);
  EXPECT_TRUE(r.table.full_root);
  EXPECT_EQ(lines(r.table), std::vector<std::string>{"rw " + root_ + "/data writable"});
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("resolved to " + root_ + "/data"), std::string::npos);
}

TEST_F(MountTable, LandlockRulesFollowTheTable) {
  sandbox_policy p;
  p.filesystem.read = read_mode::restricted;
  p.filesystem.readable = {root_ + "/data"};
  p.filesystem.writable = {root_ + "/ws"};
  p.filesystem.protected_read_only = {root_ + "/ws/.git"};
  auto r = build(p);
  auto rules = landlock_rules_for(r.table);
  auto find = [&](const std::string& path) {
    for (const auto& rule : rules) {
      if (rule.path == path) return static_cast<int>(rule.access);
    }
    return -1;
  };
  EXPECT_EQ(find(root_ + "/data"), static_cast<int>(landlock_access::read));
  EXPECT_EQ(find(root_ + "/ws"), static_cast<int>(landlock_access::read_write));
  EXPECT_EQ(find("/dev"), static_cast<int>(landlock_access::device));
  EXPECT_EQ(find("/"), static_cast<int>(landlock_access::list_directory));  // restricted: list, not read
}

}  // namespace
}  // namespace cordon::linux_impl
