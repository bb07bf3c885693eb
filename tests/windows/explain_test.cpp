// `cordon policy explain --platform windows` and `cordon probe --platform
// windows` through the real CLI (the one driver on the Windows backend's
// reference or recorded facts): the plan and its levels for workspace-write,
// the typed refusal for read-only, the probe as Linux's.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>
#include <unistd.h>

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
       {"windows_restricted_process v1, from a reference host shape", "facts:      reference facts (not this host)",
        "ACL changes", "writable             C:\\Users\\user\\work",
        "denied               C:\\Users\\user\\.ssh", "deny AC+AAP+ARAP 0x1f01ff OI CI", "DISABLE_MAX_PRIVILEGE",
        "denied               C:\\Users\\user\\AppData\\Roaming\\Microsoft\\Protect",
        "denied               C:\\Users\\user\\AppData\\Roaming\\GitHub CLI",
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

TEST(WindowsExplain, AcceptAllUnverifiedCompilesWorkspaceWriteAndWarnsOfEachRelaxation) {
  const auto r = run("policy explain --platform windows --profile workspace-write --accept all=unverified");
  EXPECT_EQ(r.status, 0) << r.text;
  EXPECT_NE(r.text.find("network_deny: policy accepts unverified (its content implies enforced)"), std::string::npos)
      << r.text;
  EXPECT_NE(r.text.find("filesystem_write: policy accepts unverified (its content implies enforced)"),
            std::string::npos)
      << r.text;
  const auto bad = run("policy explain --platform windows --profile workspace-write --accept all=enforced");
  EXPECT_EQ(bad.status, 125) << bad.text;
  EXPECT_NE(bad.text.find("all takes partial, unverified or not_enforced"), std::string::npos) << bad.text;
}

TEST(WindowsExplain, RecordedFactsAreCompiledOnWithTheirWorkspace) {
  const auto r = run("policy explain --platform windows --facts '" CORDON_SOURCE_DIR
                     "/tests/facts/windows-10-ntfs.json' --profile workspace-write --accept all=unverified");
  EXPECT_EQ(r.status, 0) << r.text;
  EXPECT_NE(r.text.find("workspace:  C:\\Users\\dev\\project (the facts' workspace)"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("facts:      recorded facts"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("Windows 10.0.19045"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("writable  C:\\Users\\dev\\project "), std::string::npos) << r.text;
}

// A recorded host without AppContainer (Windows 7) gets the low-integrity
// fallback: workspace-write is refused for what the fallback cannot confine,
// each control typed; accepting that, the plan shows the labels and the token.
TEST(WindowsExplain, ARecordWithoutAppContainerShowsTheLowIntegrityFallback) {
  const std::string facts = "policy explain --platform windows --facts '" CORDON_SOURCE_DIR
                            "/tests/facts/windows-7-no-appcontainer.json' --profile workspace-write";
  const auto refused = run(facts + " --accept all=unverified");
  EXPECT_EQ(refused.status, 1) << refused.text;
  EXPECT_NE(refused.text.find("appcontainer_unavailable"), std::string::npos) << refused.text;
  const auto r = run(facts + " --accept all=unverified --accept filesystem_read=not_enforced"
                             " --accept filesystem_deny=not_enforced --accept network_deny=not_enforced");
  EXPECT_EQ(r.status, 0) << r.text;
  for (const char* expected :
       {"mandatory labels", "LABEL", "writable  C:\\Users\\dev\\project ", "low integrity does not limit reads", "restricting SIDs: {user} {logon} S-1-1-0",
        "TokenIntegrityLevel S-1-16-4096", "low-integrity fallback", "AppContainer: no"}) {
    EXPECT_NE(r.text.find(expected), std::string::npos) << expected << "\n" << r.text;
  }
}

TEST(WindowsProbe, PrintsTheReferenceFactsProbeAsLinuxsAndIsNeverAvailableHere) {
  const auto r = run("probe --platform windows");
  EXPECT_EQ(r.status, 1) << r.text;
  const auto j = nlohmann::json::parse(r.text);
  EXPECT_EQ(j["platform"], "windows");
  EXPECT_EQ(j["backend"], "windows-appcontainer");
  EXPECT_EQ(j["available"], false);
  EXPECT_EQ(j["facts_source"], "reference");
  EXPECT_EQ(j["isolation"], "os_sandbox");
  ASSERT_FALSE(j["blockers"].empty());
  EXPECT_NE(j["blockers"][0]["reason"].get<std::string>().find("never launched"), std::string::npos);
  ASSERT_FALSE(j["best"].empty());
  for (const auto& [name, c] : j["best"].items()) {
    EXPECT_NE(c["level"], "enforced") << name;
    EXPECT_NE(c["level"], "partial") << name;
  }
  const auto human = run("probe --platform windows --human");
  EXPECT_EQ(human.status, 1) << human.text;
  EXPECT_NE(human.text.find("backend:    windows-appcontainer (unavailable)"), std::string::npos) << human.text;
  EXPECT_NE(human.text.find("BEST LEVEL"), std::string::npos) << human.text;
}

TEST(WindowsProbe, ARecordedFactsFileOfAnotherPlatformOrWithABadFieldIsATypedError) {
  const auto other = run("probe --platform windows --facts '" CORDON_SOURCE_DIR "/tests/facts/macos-14-arm64.json'");
  EXPECT_EQ(other.status, 125) << other.text;
  EXPECT_NE(other.text.find("unsupported_platform"), std::string::npos) << other.text;
  const auto missing = run("probe --platform windows --facts /nonexistent/facts.json");
  EXPECT_EQ(missing.status, 125) << missing.text;
  EXPECT_NE(missing.text.find("io_error"), std::string::npos) << missing.text;
  const std::string bad = "/tmp/cordon-windows-bad-facts-" + std::to_string(::getpid()) + ".json";
  {
    FILE* f = std::fopen(bad.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("{\"format\": \"cordon-host-facts-1\", \"platform\": \"windows\", \"job_objects\": \"yes\"}", f);
    std::fclose(f);
  }
  const auto typed = run("probe --platform windows --facts " + bad);
  std::remove(bad.c_str());
  EXPECT_EQ(typed.status, 125) << typed.text;
  EXPECT_NE(typed.text.find("parse_error"), std::string::npos) << typed.text;
  EXPECT_NE(typed.text.find("/job_objects"), std::string::npos) << typed.text;
  const auto good = run("probe --platform windows --facts '" CORDON_SOURCE_DIR "/tests/facts/windows-10-ntfs.json'");
  EXPECT_EQ(good.status, 1) << good.text;
  EXPECT_EQ(nlohmann::json::parse(good.text)["facts_source"], "recorded");
}

TEST(WindowsProbe, RecordPrintsTheFactsAsARecordThatFactsReadsBack) {
  const std::string file = "/tmp/cordon-windows-record-" + std::to_string(::getpid()) + ".json";
  const auto recorded = run("probe --platform windows --record > " + file);
  EXPECT_EQ(recorded.status, 0) << recorded.text;
  const auto reference = nlohmann::json::parse(run("probe --platform windows").text);
  const auto loaded = run("probe --platform windows --facts " + file);
  std::remove(file.c_str());
  const auto j = nlohmann::json::parse(loaded.text);
  EXPECT_EQ(j["facts_source"], "recorded");
  EXPECT_EQ(j["facts"], reference["facts"]);
  EXPECT_EQ(j["best"], reference["best"]);
}

}  // namespace
