// `cordon policy explain --platform windows` through the real CLI: the plan
// and its levels for workspace-write, the typed refusal for read-only.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace {

struct output {
  int status = -1;
  std::string text;
};

output run(const std::string& args) {
  output out;
  FILE* p = ::popen((std::string(CORDON_CLI) + " " + args + " 2>&1").c_str(), "r");
  if (p == nullptr) return out;
  char buf[4096];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.text.append(buf, n);
  const int status = ::pclose(p);
  out.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

// workspace-write states its Windows relaxations (platform_enforcement.windows):
// it compiles, each relaxation and the Windows reading of its POSIX
// environment a warning (docs/windows-backend.md, "Built-in profiles on Windows").
TEST(WindowsExplain, WorkspaceWriteCompilesWithEveryRelaxationWarned) {
  const auto r = run("policy explain --platform windows --profile workspace-write");
  EXPECT_EQ(r.status, 0) << r.text;
  EXPECT_EQ(r.text.find("refused"), std::string::npos) << r.text;
  for (const char* expected :
       {"ACL changes", "  filesystem_read: policy accepts unverified on windows (its content implies enforced)",
        "  terminal: policy accepts unverified on windows (its content implies enforced)",
        "  environment: PATH names POSIX directories (/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin), "
        "which Windows has not; on Windows it is set to the system directories C:\\Windows\\System32;C:\\Windows",
        "  environment: TMPDIR names /tmp, the private /tmp of Linux; on Windows it is set to the per-run directory "}) {
    EXPECT_NE(r.text.find(expected), std::string::npos) << expected << "\n" << r.text;
  }
}

TEST(WindowsExplain, WorkspaceWriteAcceptingUnverifiedShowsThePlanAndItsLevels) {
  std::string accept;
  for (const char* c : {"filesystem_read", "filesystem_write", "filesystem_deny", "network_deny", "environment",
                        "privilege", "descriptor_hygiene", "terminal", "process_tree_cleanup"}) {
    accept += std::string(" --accept ") + c + "=unverified";
  }
  const auto r = run("policy explain --platform windows --profile workspace-write" + accept);
  EXPECT_EQ(r.status, 0) << r.text;
  for (const char* expected :
       {"plan windows_restricted_process v1", "ACL changes", "writable             C:\\Users\\user\\work",
        "denied               C:\\Users\\user\\.ssh", "deny AC+AAP+ARAP 0x1f01ff OI CI", "DISABLE_MAX_PRIVILEGE",
        "kill on close", "windows_appcontainer_intrinsic"}) {
    EXPECT_NE(r.text.find(expected), std::string::npos) << expected << "\n" << r.text;
  }
  // No control's LEVEL column says "enforced" (the REQUIRED column may).
  const auto at = r.text.find("\nfilesystem_read ");
  ASSERT_NE(at, std::string::npos);
  EXPECT_EQ(r.text.substr(at, 40).find("unverified"), 23u) << r.text.substr(at, 60);
}

TEST(WindowsExplain, ReadOnlyProfileGetsTheTypedRefusal) {
  const auto r = run("policy explain --platform windows --profile read-only");
  EXPECT_EQ(r.status, 1) << r.text;
  EXPECT_NE(r.text.find("full_read_unsupported"), std::string::npos) << r.text;
  // The refusal names what to do.
  EXPECT_NE(r.text.find("use \"read\": \"restricted\" with the roots the command reads"), std::string::npos) << r.text;
  EXPECT_EQ(r.text.find("ACL changes"), std::string::npos);
}

TEST(WindowsExplain, UnknownPlatformIsAUsageError) {
  const auto r = run("policy explain --platform plan9 --profile workspace-write");
  EXPECT_NE(r.status, 0);
  EXPECT_EQ(r.text.find("ACL changes"), std::string::npos);
}

}  // namespace
