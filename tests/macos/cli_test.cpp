// cli_test.cpp — `cordon policy explain --platform macos` and
// `cordon probe --platform macos` through the real binary.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>

namespace cordon::macos_test {
namespace {

struct output {
  int status = -1;
  std::string text;
};

// Runs the CLI with `args` (shell words, already quoted) in a fresh workspace.
output run_cli(const std::string& args) {
  const std::filesystem::path ws = std::filesystem::temp_directory_path() / ("cordon-macos-cli-" + std::to_string(::getpid()));
  std::filesystem::create_directories(ws / "project");
  const std::string command = "cd '" + (ws / "project").string() + "' && HOME='" + ws.string() + "' '" CORDON_CLI "' " +
                              args + " 2>&1";
  output out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  std::array<char, 4096> buffer{};
  while (std::fgets(buffer.data(), static_cast<int>(buffer.size()), pipe) != nullptr) out.text += buffer.data();
  const int status = ::pclose(pipe);
  out.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::filesystem::remove_all(ws);
  return out;
}

// Every control workspace-write requires, accepted at `unverified`: the most
// a macOS plan can state before a macOS proof run has passed (docs/policy.md).
std::string accept_unverified() {
  std::string args;
  for (const char* c : {"filesystem_read", "filesystem_write", "filesystem_deny", "network_deny", "environment",
                        "privilege", "descriptor_hygiene", "terminal", "process_tree_cleanup", "unix_sockets"}) {
    args += std::string(" --accept ") + c + "=unverified";
  }
  return args;
}

// Each built-in profile states what it requires on macOS: explain compiles
// it as it is and lists each macOS relaxation among the report's warnings.
TEST(MacosCli, ExplainCompilesEveryBuiltInProfileWithItsMacosRelaxationsWarned) {
  for (const char* profile : {"offline", "read-only", "workspace-write"}) {
    const output out = run_cli(std::string("policy explain --platform macos --profile ") + profile);
    EXPECT_EQ(out.status, 0) << out.text;
    EXPECT_NE(out.text.find("result:     compiles; cannot launch on this host"), std::string::npos) << out.text;
    EXPECT_NE(out.text.find("process_tree_cleanup: policy accepts unverified on macos (its content implies enforced)"),
              std::string::npos)
        << out.text;
    EXPECT_NE(out.text.find("privilege: policy accepts unverified on macos"), std::string::npos) << out.text;
    EXPECT_NE(out.text.find("unverified (set for macos)"), std::string::npos) << out.text;
  }
}

// A policy of its own that says nothing for macOS is held to `enforced`.
TEST(MacosCli, ExplainRefusesAPolicyWithoutMacosEntries) {
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("cordon-macos-cli-policy-" + std::to_string(::getpid()) + ".json");
  {
    std::FILE* f = std::fopen(file.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("{\"schema_version\": 1, \"filesystem\": {\"read\": \"restricted\", \"writable\": [\"{workspace}\"]}}\n", f);
    std::fclose(f);
  }
  const output out = run_cli("policy explain --platform macos '" + file.string() + "'");
  std::filesystem::remove(file);
  EXPECT_EQ(out.status, 1) << out.text;
  EXPECT_NE(out.text.find("refused (enforcement_unavailable)"), std::string::npos) << out.text;
  EXPECT_NE(out.text.find("filesystem_write"), std::string::npos) << out.text;
  EXPECT_NE(out.text.find("unverified"), std::string::npos) << out.text;
}

TEST(MacosCli, ExplainAcceptingUnverifiedPrintsThePlanAndNoEnforcedLevel) {
  const output out = run_cli("policy explain --platform macos --profile workspace-write" + accept_unverified());
  EXPECT_EQ(out.status, 0) << out.text;
  EXPECT_NE(out.text.find("backend:    macos-seatbelt"), std::string::npos) << out.text;
  EXPECT_NE(out.text.find("result:     compiles; cannot launch on this host"), std::string::npos) << out.text;
  EXPECT_NE(out.text.find("platform defaults"), std::string::npos);
  // The LEVEL column of every control row: never enforced or partial; the
  // level the mechanism is designed to give is in the row's "why".
  std::istringstream lines(out.text.substr(out.text.find("CONTROL ")));
  std::string line;
  std::getline(lines, line);  // header
  int rows = 0;
  std::string current;
  while (std::getline(lines, line) && !line.empty()) {
    if (line.front() == ' ') {  // a "why:" note of the row above
      if (current == "filesystem_write") {
        EXPECT_NE(line.find("no proof run on macos has passed yet (would be enforced"), std::string::npos) << line;
      }
      continue;
    }
    std::istringstream words(line);
    std::string level;
    words >> current >> level;
    EXPECT_NE(level, "enforced") << line;
    EXPECT_NE(level, "partial") << line;
    if (current == "filesystem_write") {
      EXPECT_EQ(level, "unverified") << line;
    }
    ++rows;
  }
  EXPECT_EQ(rows, 17);
}

TEST(MacosCli, ShowProfilePrintsTheSbpl) {
  const output out =
      run_cli("policy explain --platform macos --profile workspace-write --show-profile" + accept_unverified());
  EXPECT_NE(out.text.find(";; -DWRITE_0="), std::string::npos) << out.text;
  EXPECT_NE(out.text.find("(version 1)\n(deny default)\n"), std::string::npos) << out.text;
}

TEST(MacosCli, ShowProfileOfAPlanWithoutProfileTextIsAUsageError) {
  // The Windows backend's plans have no profile text (neither have Linux's).
  const output out =
      run_cli("policy explain --platform windows --profile workspace-write --show-profile --accept all=unverified");
  EXPECT_EQ(out.status, 125) << out.text;
  EXPECT_NE(out.text.find("--show-profile: plans of windows-appcontainer have no profile text"), std::string::npos)
      << out.text;
}

TEST(MacosCli, ProbeShowsTheBackendUnavailableHere) {
  const output out = run_cli("probe --platform macos");
  EXPECT_EQ(out.status, 1) << out.text;
  EXPECT_NE(out.text.find("\"platform\": \"macos\""), std::string::npos) << out.text;
  EXPECT_NE(out.text.find("\"available\": false"), std::string::npos) << out.text;
  EXPECT_NE(out.text.find("unverified"), std::string::npos) << out.text;
}

TEST(MacosCli, ExplainOnRecordedFactsUsesTheirWorkspaceAndSaysTheyAreNotThisHost) {
  const output out = run_cli("policy explain --platform macos --facts '" CORDON_SOURCE_DIR
                             "/tests/facts/macos-14-arm64.json' --profile workspace-write");
  EXPECT_EQ(out.status, 0) << out.text;
  EXPECT_NE(out.text.find("workspace:  /Users/dev/project (the facts' workspace)"), std::string::npos) << out.text;
  EXPECT_NE(out.text.find("facts:      recorded facts"), std::string::npos) << out.text;
  EXPECT_NE(out.text.find("assumed macOS 14.5"), std::string::npos) << out.text;
  EXPECT_NE(out.text.find("result:     compiles; cannot launch on this host"), std::string::npos) << out.text;
  EXPECT_NE(out.text.find("launcher:\n  macOS 14.5 (assumed facts: this host is not a Mac)"), std::string::npos)
      << out.text;
}

TEST(MacosCli, ExplainAcceptAllUnverifiedCompilesAUserPolicyWithoutMacosEntries) {
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("cordon-macos-cli-all-" + std::to_string(::getpid()) + ".json");
  {
    FILE* f = std::fopen(file.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("{\"schema_version\": 1, \"filesystem\": {\"read\": \"restricted\", \"writable\": [\"{workspace}\"]}}\n", f);
    std::fclose(f);
  }
  const output refused = run_cli("policy explain --platform macos '" + file.string() + "'");
  const output out = run_cli("policy explain --platform macos '" + file.string() + "' --accept all=unverified");
  std::filesystem::remove(file);
  EXPECT_EQ(refused.status, 1) << refused.text;
  EXPECT_EQ(out.status, 0) << out.text;
  EXPECT_NE(out.text.find("filesystem_write: policy accepts unverified (its content implies enforced)"),
            std::string::npos)
      << out.text;
}

}  // namespace
}  // namespace cordon::macos_test
