// Bad input: a clear one-line error, the documented exit code, and nothing runs.
#include <filesystem>
#include <fstream>

#include "cli_capture.h"
#include "harness.h"

namespace cordon::test {
namespace {

constexpr int kRefused = 125;

struct BadInput : ::testing::Test {
  std::string policy(const std::string& text) { return dir_.write("policy.json", text); }
  // Runs a command that would leave a marker, and checks it did not run.
  run_result refused(const std::vector<std::string>& options) {
    auto r = run_cordon(options, {"sh", "-c", "touch ran-marker"}, ws_.path());
    EXPECT_EQ(r.exit_code, kRefused) << r.all();
    EXPECT_FALSE(std::filesystem::exists(ws_.path() + "/ran-marker"));
    EXPECT_EQ(r.out, "");
    return r;
  }
  temp_dir dir_, ws_;
};

// The first line of cordon's stderr, and how many lines there are.
std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

TEST_F(BadInput, MalformedJson) {
  const std::string file = policy("{\"schema_version\": 1,\n  \"name\": }");
  auto r = refused({"--policy", file});
  EXPECT_EQ(first_line(r.err).rfind("cordon: parse_error: " + file + ": line 2, column", 0), 0u) << r.err;
  EXPECT_EQ(r.report["outcome"], "refused");
  EXPECT_EQ(r.report["error"]["code"], "parse_error");
}

TEST_F(BadInput, UnknownFieldNamesItsLocation) {
  const std::string file = policy(R"({"schema_version": 1, "filesystem": {"writeable": ["/tmp"]}})");
  auto r = refused({"--policy", file});
  EXPECT_EQ(r.err, "cordon: invalid_policy: " + file + ": /filesystem/writeable: unknown field \"writeable\"\n");
}

TEST_F(BadInput, EveryProblemOfThePolicyFileIsOneLineNamingFileThenLocation) {
  // As `cordon policy validate` prints them: the file, then where in it (never "POINTER: FILE: reason").
  const std::string file =
      policy(R"({"schema_version": 1, "filesystem": {"writeable": ["/tmp"]}, "network": {"mode": "filterd"}})");
  auto r = refused({"--policy", file});
  EXPECT_EQ(r.err, "cordon: invalid_policy: " + file + ": /filesystem/writeable: unknown field \"writeable\"\n" +
                       "cordon: invalid_policy: " + file +
                       ": /network/mode: must be one of \"denied\", \"unrestricted\", \"filtered\"\n");
  EXPECT_EQ(r.report["error"]["code"], "invalid_policy");
  auto validated = run_cli({"policy", "validate", file}, "/");
  EXPECT_EQ(validated.exit_code, kRefused);
  EXPECT_EQ(validated.err, r.err);
  auto explained = run_cli({"policy", "explain", file}, ws_.path());
  EXPECT_EQ(explained.exit_code, 1);  // an invalid policy: refused, as when the compile finds the problem
  EXPECT_EQ(explained.err, r.err);
}

TEST_F(BadInput, AFileThatIsNotJsonIsTheSameParseErrorEverywhere) {
  const std::string file = policy("{,}");
  auto r = refused({"--policy", file});
  EXPECT_EQ(first_line(r.err).rfind("cordon: parse_error: " + file + ": line 1, column 2: not valid JSON", 0), 0u)
      << r.err;
  auto validated = run_cli({"policy", "validate", file}, "/");
  EXPECT_EQ(validated.exit_code, kRefused);
  EXPECT_EQ(validated.err, r.err);
}

// A problem the compile finds (not the reader) is named by file and location
// too; once a flag has edited the policy the location alone is printed, as
// it may point at the flag's change rather than into the file.
TEST_F(BadInput, RelativePath) {
  const std::string file = policy(R"({"schema_version": 1, "filesystem": {"writable": ["build/out"]}})");
  auto r = refused({"--policy", file});
  EXPECT_EQ(first_line(r.err).rfind("cordon: invalid_policy: " + file + ": /filesystem/writable/0: ", 0), 0u)
      << r.err;
  EXPECT_EQ(r.report["policy_errors"][0]["location"], "/filesystem/writable/0");
  auto edited = refused({"--policy", file, "--allow-host", "example.com"});
  EXPECT_EQ(first_line(edited.err).rfind("cordon: invalid_policy: /filesystem/writable/0: ", 0), 0u) << edited.err;
}

TEST_F(BadInput, MissingPolicyFile) {
  auto r = refused({"--policy", dir_.path() + "/does-not-exist.json"});
  EXPECT_EQ(first_line(r.err).rfind("cordon: io_error: ", 0), 0u) << r.err;
}

TEST_F(BadInput, UnknownProfile) {
  auto r = refused({"--profile", "no-such-profile"});
  EXPECT_EQ(first_line(r.err).rfind("cordon: unknown_profile: ", 0), 0u) << r.err;
}

TEST_F(BadInput, PolicyTheHostCannotEnforceIsRefusedWithBlockers) {
  // With the host's network, named unix sockets under visible roots stay connectable: `partial` at best.
  auto r = refused({"--policy", policy(R"({"schema_version": 1, "name": "needs-socket-filter",
      "filesystem": {"readable": ["{workspace}"], "writable": ["{workspace}"]}, "network": {"mode": "unrestricted"},
      "enforcement": {"unix_sockets": "enforced"}})")});
  EXPECT_EQ(first_line(r.err).rfind("cordon: enforcement_unavailable: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("cordon: blocker: unix_sockets: required enforced, available partial: "), std::string::npos)
      << r.err;
  EXPECT_EQ(r.report["outcome"], "refused");
  EXPECT_EQ(r.report["blockers"][0]["control"], "unix_sockets");
}

TEST_F(BadInput, ExplicitRelaxationRunsAndIsWarnedInTheReport) {
  auto p = policy(R"({"schema_version": 1, "name": "accepts-rlimit",
      "filesystem": {"readable": ["{workspace}"], "writable": ["{workspace}"]},
      "process": {"memory_bytes": 268435456}, "enforcement": {"memory": "partial"}})");
  auto r = run_cordon({"--policy", p}, {"sh", "-c", "echo ran"}, ws_.path());
  EXPECT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(r.out, "ran\n");
  // partial (an rlimit) or better (a cgroup, where this user may create one)
  EXPECT_NE(r.report["controls"]["memory"]["level"], "not_enforced");
  EXPECT_NE(r.report["warnings"].dump().find("memory: policy accepts partial"), std::string::npos)
      << r.report["warnings"].dump();
}

TEST_F(BadInput, AnInvalidAllowHostNamesTheFlagNotAPolicyPointer) {
  auto r = refused({"--allow-host", "bad_host!!:443"});
  EXPECT_EQ(r.err, "cordon: usage_error: --allow-host bad_host!!:443: host name may contain only letters, digits, "
                   "hyphens and dots (an international name is written in Unicode or as xn-- labels)\n");
  // The patterns the flag documents still pass the same check.
  for (const std::string host : {"*", "*.example.com", "**.example.com", "127.0.0.1:8080", "[::1]:8080", "::1"}) {
    auto ok = run_cordon({"--allow-host", host}, {"true"}, ws_.path());
    EXPECT_EQ(ok.exit_code, 0) << host << "\n" << ok.all();
  }
}

TEST_F(BadInput, AnUnknownControlInAcceptListsTheControls) {
  auto r = refused({"--accept", "memroy=partial"});
  EXPECT_EQ(first_line(r.err).rfind("cordon: usage_error: --accept: unknown control 'memroy' (filesystem_read, ", 0), 0u)
      << r.err;
  EXPECT_NE(r.err.find(", memory, "), std::string::npos) << r.err;
}

TEST_F(BadInput, UsageErrors) {
  auto none = run_cordon({}, {}, ws_.path());
  EXPECT_EQ(none.exit_code, kRefused);
  auto both = run_cordon({"--policy", "x.json", "--profile", "offline"}, {"true"}, ws_.path());
  EXPECT_EQ(both.exit_code, kRefused);
  EXPECT_EQ(first_line(both.err).rfind("cordon: usage_error: ", 0), 0u) << both.err;
}

}  // namespace
}  // namespace cordon::test
