// find_delegated_v2_site() (cgroups.h): where a run's cgroup v2 goes without
// --cgroup-parent, read from a fake hierarchy of plain directories and files
// laid out as systemd delegates one (docs/kernels.md).
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "linux/cgroups.h"

namespace cordon::linux_impl {
namespace {

namespace fs = std::filesystem;

class CgroupDiscovery : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/cordon-cgroup-discovery-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    mount_ = tmpl;
    // Ownership is what shows a delegation: as root, hand the delegated
    // directories to a made-up user; otherwise they are this user's already.
    uid_ = ::getuid() == 0 ? 4242 : ::getuid();
  }

  // A cgroup directory with its interface files, owned by `owner`.
  std::string cgroup(const std::string& path, const std::string& controllers, const std::string& subtree,
                     const std::string& procs, uid_t owner) {
    std::string dir = mount_ + path;
    fs::create_directories(dir);
    write(dir + "/cgroup.controllers", controllers);
    write(dir + "/cgroup.subtree_control", subtree);
    write(dir + "/cgroup.procs", procs);
    write(dir + "/cgroup.threads", procs);
    if (::getuid() == 0) {
      for (const char* f : {"", "/cgroup.procs", "/cgroup.subtree_control", "/cgroup.threads"}) {
        EXPECT_EQ(::chown((dir + f).c_str(), owner, owner), 0) << dir << f;
      }
    }
    return dir;
  }
  // A parent that is not delegated: root's (as root), or one this user may not write.
  std::string not_delegated(const std::string& path) {
    std::string dir = cgroup(path, "cpu memory pids", "cpu memory pids", "", 0);
    if (::getuid() != 0) ::chmod(dir.c_str(), 0555);
    return dir;
  }
  void TearDown() override {
    for (auto& entry : fs::recursive_directory_iterator(mount_)) ::chmod(entry.path().c_str(), 0755);
    fs::remove_all(mount_);
  }
  static void write(const std::string& file, const std::string& text) { std::ofstream(file) << text << "\n"; }

  std::string mount_;
  uid_t uid_ = 0;
};

TEST_F(CgroupDiscovery, RootOfTheHierarchyWithControllersEnabledTakesRunsBelowIt) {
  cgroup("", "cpuset cpu io memory pids", "cpu memory pids", "1\n2\n", ::getuid());
  cgroup_site site = find_delegated_v2_site(mount_, "/", ::getuid(), 1);
  EXPECT_TRUE(site.v2);
  EXPECT_EQ(site.memory_parent, mount_);
  EXPECT_EQ(site.pids_parent, mount_);
  EXPECT_EQ(site.cpu_parent, mount_);
  EXPECT_TRUE(site.enter_leaf_of.empty());
  EXPECT_TRUE(site.blocker.empty()) << site.blocker;
}

TEST_F(CgroupDiscovery, RootWithoutCpuEnabledSaysWhichControllerIsMissing) {
  cgroup("", "cpu memory pids", "memory pids", "1\n", ::getuid());
  cgroup_site site = find_delegated_v2_site(mount_, "/", ::getuid(), 1);
  EXPECT_EQ(site.memory_parent, mount_);
  EXPECT_EQ(site.pids_parent, mount_);
  EXPECT_TRUE(site.cpu_parent.empty());
  EXPECT_NE(site.blocker.find("lacks cpu"), std::string::npos) << site.blocker;
}

TEST_F(CgroupDiscovery, SystemdUserManagerLayoutPutsRunsBesideTheCallersScope) {
  // user@UID.service/app.slice delegated with the controllers enabled below it;
  // the caller runs in app.slice/terminal.scope beside other programs.
  std::string slice = cgroup("/user.slice/user-1.slice/user@1.service/app.slice", "cpu memory pids",
                             "cpu memory pids", "", uid_);
  cgroup("/user.slice/user-1.slice/user@1.service/app.slice/terminal.scope", "cpu memory pids", "", "700\n701\n",
         uid_);
  cgroup_site site =
      find_delegated_v2_site(mount_, "/user.slice/user-1.slice/user@1.service/app.slice/terminal.scope", uid_, 701);
  EXPECT_EQ(site.memory_parent, slice);
  EXPECT_EQ(site.pids_parent, slice);
  EXPECT_EQ(site.cpu_parent, slice);
  EXPECT_TRUE(site.enter_leaf_of.empty());
}

TEST_F(CgroupDiscovery, ScopeOfItsOwnMeansMovingIntoALeafFirst) {
  std::string scope = cgroup("/user.slice/run-cordon.scope", "cpu memory pids", "", "777\n", uid_);
  not_delegated("/user.slice");
  cgroup_site site = find_delegated_v2_site(mount_, "/user.slice/run-cordon.scope", uid_, 777);
  EXPECT_EQ(site.enter_leaf_of, scope);
  EXPECT_EQ(site.memory_parent, scope);
  EXPECT_EQ(site.pids_parent, scope);
  EXPECT_EQ(site.cpu_parent, scope);
}

TEST_F(CgroupDiscovery, DelegatedScopeSharedWithOtherProcessesIsRefusedWithTheReason) {
  cgroup("/user.slice/shell.scope", "cpu memory pids", "", "777\n778\n", uid_);
  not_delegated("/user.slice");
  cgroup_site site = find_delegated_v2_site(mount_, "/user.slice/shell.scope", uid_, 777);
  EXPECT_FALSE(site.any());
  EXPECT_NE(site.blocker.find("other processes share it"), std::string::npos) << site.blocker;
}

TEST_F(CgroupDiscovery, CgroupNotDelegatedToTheCallerGivesNothing) {
  if (::getuid() != 0) GTEST_SKIP() << "needs root to make directories owned by another user";
  cgroup("/system.slice", "cpu memory pids", "cpu memory pids", "", 0);
  cgroup("/system.slice/cron.service", "cpu memory pids", "", "777\n", 0);
  cgroup_site site = find_delegated_v2_site(mount_, "/system.slice/cron.service", uid_, 777);
  EXPECT_FALSE(site.any());
  EXPECT_NE(site.blocker.find("nor its parent is delegated to uid " + std::to_string(uid_)), std::string::npos)
      << site.blocker;
}

TEST_F(CgroupDiscovery, RootOutsideTheHierarchysRootNeedsAnExplicitParent) {
  cgroup("/system.slice", "cpu memory pids", "cpu memory pids", "", ::getuid());
  cgroup("/system.slice/ssh.service", "cpu memory pids", "", "777\n", ::getuid());
  cgroup_site site = find_delegated_v2_site(mount_, "/system.slice/ssh.service", 0, 777);
  EXPECT_FALSE(site.any());
  EXPECT_NE(site.blocker.find("--cgroup-parent"), std::string::npos) << site.blocker;
}

TEST_F(CgroupDiscovery, NoUnifiedHierarchyGivesAnEmptySite) {
  cgroup_site site = find_delegated_v2_site("", "", uid_, 1);
  EXPECT_FALSE(site.any());
  EXPECT_FALSE(site.v2);
}

}  // namespace
}  // namespace cordon::linux_impl
