// The DACL lease set for a nested tree: precedence denied > protected > writable
// > readable, parents before descendants, and the ACEs of each role.
#include <gtest/gtest.h>

#include "windows/acl_plan.h"
#include "windows_test_support.h"

namespace cordon::windows {
namespace {

using detail::acl_entry;
using detail::decide_acl_changes;
using namespace testing;

host_facts nested_host() {
  host_facts f = sample_host();
  for (const char* d : {"C:\\work\\secret", "C:\\work\\secret\\pub", "C:\\work\\.git\\hooks\\sub", "C:\\work\\docs",
                        "C:\\work\\docs\\drafts"}) {
    f.paths[d] = dir();
  }
  return f;
}

const acl_change* find(const detail::acl_decision& d, const std::string& path) {
  for (const auto& c : d.changes) {
    if (c.path == path) return &c;
  }
  return nullptr;
}

TEST(WindowsAclPlan, NestedTreeFollowsThePrecedenceOrder) {
  const std::vector<acl_entry> entries = {
      {"C:\\work", acl_role::readable, "/filesystem/readable/0"},
      {"C:\\work", acl_role::writable, "/filesystem/writable/0"},
      {"C:\\work\\docs", acl_role::readable, "/filesystem/readable/1"},            // inside writable: decided by it
      {"C:\\work\\secret\\pub", acl_role::readable, "/filesystem/readable/2"},     // inside denied
      {"C:\\work\\.git\\hooks\\sub", acl_role::writable, "/filesystem/writable/1"},  // inside protected
      {"C:\\work\\.git\\hooks", acl_role::protected_read_only, "/filesystem/protected_read_only/0"},
      {"C:\\work\\secret", acl_role::denied, "/filesystem/denied/0"},
      {"C:\\WORK\\Secret", acl_role::readable, "/filesystem/readable/3"},          // same path, other case
  };
  const auto d = decide_acl_changes(entries, nested_host());
  ASSERT_TRUE(d.blockers.empty());
  ASSERT_EQ(d.changes.size(), 3u);
  EXPECT_EQ(d.changes[0].path, "C:\\work");
  EXPECT_EQ(d.changes[0].role, acl_role::writable);
  // Parents first, so that a descendant's protected DACL is set after the grant propagated.
  EXPECT_EQ(d.changes[1].path, "C:\\work\\secret");
  EXPECT_EQ(d.changes[1].role, acl_role::denied);
  EXPECT_EQ(d.changes[2].path, "C:\\work\\.git\\hooks");
  EXPECT_EQ(d.changes[2].role, acl_role::protected_read_only);
  ASSERT_EQ(d.notes.size(), 5u);
  const auto decided_by = [&](const std::string& source) {
    for (const auto& n : d.notes) {
      if (n.source == source) return n.reason;
    }
    return std::string("(no note)");
  };
  EXPECT_EQ(decided_by("/filesystem/readable/0"), "decided by writable C:\\work (/filesystem/writable/0)");
  EXPECT_EQ(decided_by("/filesystem/readable/1"), "decided by writable C:\\work (/filesystem/writable/0)");
  EXPECT_EQ(decided_by("/filesystem/readable/2"), "decided by denied C:\\work\\secret (/filesystem/denied/0)");
  EXPECT_EQ(decided_by("/filesystem/writable/1"),
            "decided by protected_read_only C:\\work\\.git\\hooks (/filesystem/protected_read_only/0)");
  EXPECT_EQ(decided_by("/filesystem/readable/3"), "decided by denied C:\\work\\secret (/filesystem/denied/0)");
}

TEST(WindowsAclPlan, WritableInsideReadableAndDeniedInsideProtectedBothApply) {
  host_facts f = nested_host();
  const std::vector<acl_entry> entries = {
      {"C:\\work", acl_role::readable, "r0"},
      {"C:\\work\\docs", acl_role::writable, "w0"},
      {"C:\\work\\.git", acl_role::protected_read_only, "p0"},
      {"C:\\work\\.git\\hooks", acl_role::denied, "d0"},
  };
  const auto d = decide_acl_changes(entries, f);
  ASSERT_EQ(d.changes.size(), 4u);
  EXPECT_TRUE(d.notes.empty());
}

TEST(WindowsAclPlan, WritableGrantHasDataRightsAndSelfDeleteOnlyBelowTheRoot) {
  const auto aces = detail::aces_for(acl_role::writable, true);
  ASSERT_EQ(aces.size(), 2u);
  for (const auto& ace : aces) {
    EXPECT_TRUE(ace.allow);
    EXPECT_EQ(ace.who, trustee::appcontainer);
    EXPECT_EQ(ace.mask & access::forbidden_in_grant, 0u) << "no WRITE_DAC, WRITE_OWNER or FILE_DELETE_CHILD";
  }
  EXPECT_EQ(aces[0].mask, 0x1201bfu);  // FILE_GENERIC_READ | EXECUTE | WRITE_DATA | APPEND | WRITE_EA | WRITE_ATTRIBUTES
  EXPECT_FALSE(aces[0].inherit_only);
  EXPECT_EQ(aces[1].mask, access::delete_self);
  EXPECT_TRUE(aces[1].inherit_only) << "the root itself cannot be deleted";
  const auto file_aces = detail::aces_for(acl_role::writable, false);
  ASSERT_EQ(file_aces.size(), 1u);
  EXPECT_FALSE(file_aces[0].inherit);
}

TEST(WindowsAclPlan, DeniedAndProtectedPathsGetProtectedDaclsAndDenyAcesForThreeTrustees) {
  const std::vector<acl_entry> entries = {{"C:\\work", acl_role::writable, "w0"},
                                          {"C:\\work\\secret", acl_role::denied, "d0"},
                                          {"C:\\work\\.git\\hooks", acl_role::protected_read_only, "p0"}};
  const auto d = decide_acl_changes(entries, nested_host());
  for (const char* path : {"C:\\work\\secret", "C:\\work\\.git\\hooks"}) {
    const acl_change* c = find(d, path);
    ASSERT_NE(c, nullptr) << path;
    EXPECT_TRUE(c->protect_dacl) << path;
    EXPECT_TRUE(c->mask_package_allows) << path;
    std::vector<trustee> denied;
    for (const auto& ace : c->aces) {
      if (!ace.allow) denied.push_back(ace.who);
      EXPECT_TRUE(ace.inherit);
    }
    EXPECT_EQ(denied, (std::vector<trustee>{trustee::appcontainer, trustee::all_application_packages,
                                            trustee::all_restricted_application_packages}))
        << path;
  }
  EXPECT_EQ(find(d, "C:\\work\\secret")->aces[0].mask, access::all);
  const acl_change* hooks = find(d, "C:\\work\\.git\\hooks");
  EXPECT_EQ(hooks->aces[0].mask & access::write_data, access::write_data);
  EXPECT_EQ(hooks->aces[0].mask & access::read_data, 0u);
  EXPECT_TRUE(hooks->aces.back().allow);  // still readable
  EXPECT_FALSE(find(d, "C:\\work")->protect_dacl);
  EXPECT_EQ(well_known_sid(trustee::all_application_packages), "S-1-15-2-1");
  EXPECT_EQ(well_known_sid(trustee::all_restricted_application_packages), "S-1-15-2-2");
}

TEST(WindowsAclPlan, AProtectedPathIsReadableOnlyInsideAGrant) {
  const std::vector<acl_entry> entries = {{"C:\\Users\\ada\\.ssh", acl_role::protected_read_only, "p0"}};
  const auto d = decide_acl_changes(entries, nested_host());
  ASSERT_EQ(d.changes.size(), 1u);
  for (const auto& ace : d.changes[0].aces) EXPECT_FALSE(ace.allow) << "being protected grants no read";
}

TEST(WindowsAclPlan, RunTmpIsCreatedAtLaunchAndCheckedThroughItsParent) {
  host_facts f = sample_host();
  const std::vector<acl_entry> entries = {
      {"C:\\Users\\ada\\AppData\\Local\\Temp\\cordon-run-1", acl_role::writable, "w1", true}};
  auto d = decide_acl_changes(entries, f);
  ASSERT_EQ(d.changes.size(), 1u);
  EXPECT_TRUE(d.changes[0].created_at_launch);
  f.paths["C:\\Users\\ada\\AppData"] = link();
  d = decide_acl_changes(entries, f);
  ASSERT_EQ(d.blockers.size(), 1u);
  EXPECT_TRUE(has_cause(d.blockers[0], blocker_code::root_reparse_point));
  EXPECT_EQ(d.blockers[0].object, "C:\\Users\\ada\\AppData");
}

}  // namespace
}  // namespace cordon::windows
