// manifest_test.cpp — the gate manifest parser: what it accepts, and each
// error with the line it names.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cordon/policy_json.h"
#include "gates/manifest.h"
#include "manifest/manifest_text.h"

namespace cordon::gates {
namespace {

manifest_result parse(const std::string& text) { return parse_manifest(text, "/w/gates.toml"); }

// The manifest is refused with exactly one error, at `line`, whose message contains `fragment`.
void expect_error(const std::string& text, int line, const std::string& fragment) {
  auto r = parse(text);
  EXPECT_FALSE(r.manifest.has_value());
  ASSERT_EQ(r.errors.size(), 1u) << text;
  EXPECT_EQ(r.errors[0].line, line) << r.errors[0].message;
  EXPECT_NE(r.errors[0].message.find(fragment), std::string::npos) << r.errors[0].message;
}

TEST(GateManifest, ReadsEveryField) {
  auto r = parse(R"([[gate]]
name = "unit"
cmd = ["make", "check"]
env = "linux"
timeout_sec = 1.5
sandbox_policy = "read-only"
workdir = "sub/dir"
needs = ["build"]
setenv = { CC = "gcc", LANG = "C" }

[[gate]]
name = "build"
cmd = "make -j2 && echo done"
shell = true
sandbox_policy = "policies/build.json"
)");
  ASSERT_TRUE(r.manifest.has_value()) << r.errors.at(0).message;
  const auto& g = r.manifest->gates;
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].name, "unit");
  EXPECT_EQ(g[0].argv, (std::vector<std::string>{"make", "check"}));
  EXPECT_EQ(g[0].os, target_os::linux_os);
  EXPECT_EQ(g[0].timeout_ms, 1500u);
  EXPECT_EQ(g[0].policy, policy_kind::profile);
  EXPECT_EQ(g[0].policy_ref, "read-only");
  EXPECT_EQ(g[0].workdir, "sub/dir");
  EXPECT_EQ(g[0].needs, std::vector<std::string>{"build"});
  ASSERT_EQ(g[0].setenv.size(), 2u);
  EXPECT_EQ(g[0].line, 1);
  EXPECT_EQ(g[1].argv, (std::vector<std::string>{"/bin/sh", "-c", "make -j2 && echo done"}));
  EXPECT_EQ(g[1].policy, policy_kind::file);
  EXPECT_EQ(g[1].os, target_os::any);
  EXPECT_FALSE(g[1].timeout_ms.has_value());
  EXPECT_EQ(g[1].line, 11);
  EXPECT_EQ(r.manifest->directory, "/w");
  EXPECT_EQ(r.manifest->digest.rfind("sha256:", 0), 0u);
  EXPECT_EQ(r.manifest->digest.size(), 7u + 64u);
}

TEST(GateManifest, InlinePolicyTableBecomesPolicyJson) {
  auto r = parse(R"([[gate]]
name = "vm"
cmd = ["true"]
[gate.sandbox_policy]
name = "needs-a-vm"
isolation = "vm"
)");
  ASSERT_TRUE(r.manifest.has_value()) << r.errors.at(0).message;
  const auto& g = r.manifest->gates.at(0);
  EXPECT_EQ(g.policy, policy_kind::inline_table);
  auto policy = load_gate_policy(g, "/w");
  ASSERT_TRUE(policy) << policy.error_value().describe();
  EXPECT_EQ(policy->name, "needs-a-vm");
  EXPECT_EQ(policy->isolation, isolation_level::vm);
}

TEST(GateManifest, InlinePolicyWithUnknownFieldIsRefusedWhenLoaded) {
  auto r = parse("[[gate]]\nname = \"x\"\ncmd = [\"true\"]\nsandbox_policy = { name = \"p\", isolaton = \"vm\" }\n");
  ASSERT_TRUE(r.manifest.has_value());
  auto policy = load_gate_policy(r.manifest->gates.at(0), "/w");
  ASSERT_FALSE(policy);
  EXPECT_EQ(policy.error_value().code, error_code::invalid_policy);
}

TEST(GateManifest, UnknownProfileIsAnErrorWhenLoaded) {
  auto r = parse("[[gate]]\nname = \"x\"\ncmd = [\"true\"]\nsandbox_policy = \"windows-worktree-no-secrets\"\n");
  ASSERT_TRUE(r.manifest.has_value());
  auto policy = load_gate_policy(r.manifest->gates.at(0), "/w");
  ASSERT_FALSE(policy);
  EXPECT_EQ(policy.error_value().code, error_code::unknown_profile);
}

TEST(GateManifest, DefaultPolicyIsWorkspaceWrite) {
  auto r = parse("[[gate]]\nname = \"x\"\ncmd = [\"true\"]\n");
  ASSERT_TRUE(r.manifest.has_value());
  auto policy = load_gate_policy(r.manifest->gates.at(0), "/w");
  ASSERT_TRUE(policy);
  EXPECT_EQ(policy->name, "workspace-write");
}

// The one rule for "absolute" (manifest::classify_path), under each platform's style.
TEST(ManifestPaths, AbsoluteOnTheTargetPlatform) {
  using manifest::classify_path;
  using manifest::path_kind;
  using manifest::path_style;
  for (const char* p : {"C:\\x\\p.json", "C:/x/p.json", "c:\\p.json", "\\\\server\\share\\p.json",
                        "//server/share/p.json", "\\\\?\\C:\\x\\p.json"}) {
    EXPECT_EQ(classify_path(p, path_style::windows), path_kind::absolute) << p;
  }
  for (const char* p : {"\\x\\p.json", "/x/p.json", "C:p.json"}) {
    EXPECT_EQ(classify_path(p, path_style::windows), path_kind::per_process) << p;
  }
  for (const char* p : {"p.json", "policies\\p.json", "policies/p.json", "./p.json"}) {
    EXPECT_EQ(classify_path(p, path_style::windows), path_kind::relative) << p;
  }
  EXPECT_EQ(classify_path("/x/p.json", path_style::posix), path_kind::absolute);
  EXPECT_EQ(classify_path("C:\\x\\p.json", path_style::posix), path_kind::relative);  // a file name on POSIX
  EXPECT_EQ(manifest::resolve_manifest_path("C:/w", "C:\\x\\p.json", path_style::windows), "C:\\x\\p.json");
  EXPECT_EQ(manifest::resolve_manifest_path("C:/w", "\\\\srv\\s\\p.json", path_style::windows), "\\\\srv\\s\\p.json");
  EXPECT_EQ(manifest::resolve_manifest_path("C:/w", "sub\\p.json", path_style::windows), "C:/w/sub\\p.json");
  EXPECT_EQ(manifest::resolve_manifest_path("C:/w", "C:p.json", path_style::windows), std::nullopt);
  EXPECT_EQ(manifest::resolve_manifest_path("/w", "/x/p.json", path_style::posix), "/x/p.json");
}

// The policy file of a `windows` gate named by an absolute Windows path is
// that file, not a name under the manifest's directory (read here, on Linux,
// it does not exist: io_error names the path as given).
TEST(GateManifest, WindowsGatePolicyFileGivenAbsoluteIsNotJoinedToTheManifestDirectory) {
  for (const std::string ref : {"C:\\x\\p.json", "C:/x/p.json", "\\\\server\\share\\p.json"}) {
    SCOPED_TRACE(ref);
    auto r = parse("[[gate]]\nname = \"x\"\nenv = \"windows\"\ncmd = [\"true\"]\nsandbox_policy = '" + ref + "'\n");
    ASSERT_TRUE(r.manifest.has_value()) << r.errors.at(0).message;
    const auto& g = r.manifest->gates.at(0);
    EXPECT_EQ(g.policy, policy_kind::file);
    auto policy = load_gate_policy(g, "C:/w");
    ASSERT_FALSE(policy);
    EXPECT_EQ(policy.error_value().code, error_code::io_error) << policy.error_value().describe();
    EXPECT_EQ(policy.error_value().message, "cannot open policy file " + ref);
  }
  // Relative to the current drive or a drive's current directory: refused, typed.
  for (const std::string ref : {"\\x\\p.json", "C:p.json"}) {
    auto r = parse("[[gate]]\nname = \"x\"\nenv = \"windows\"\ncmd = [\"true\"]\nsandbox_policy = '" + ref + "'\n");
    ASSERT_TRUE(r.manifest.has_value());
    auto policy = load_gate_policy(r.manifest->gates.at(0), "C:/w");
    ASSERT_FALSE(policy) << ref;
    EXPECT_EQ(policy.error_value().code, error_code::usage_error) << ref;
  }
  // A relative one is joined: the same gate for Linux reads the file under the manifest's directory.
  auto r = parse("[[gate]]\nname = \"x\"\ncmd = [\"true\"]\nsandbox_policy = \"profiles/workspace-write.json\"\n");
  ASSERT_TRUE(r.manifest.has_value());
  auto policy = load_gate_policy(r.manifest->gates.at(0), CORDON_SOURCE_DIR);
  ASSERT_TRUE(policy) << policy.error_value().describe();
  EXPECT_EQ(policy->name, "workspace-write");
}

struct error_case {
  const char* name;
  const char* text;
  int line;
  const char* fragment;
};

// Each manifest has exactly one problem, on the line given.
const error_case kErrorCases[] = {
    {"TomlSyntax1", "[[gate]]\nname = \"x\ncmd = [\"true\"]\n", 2, ""},
    {"TomlSyntax2", "[[gate]]\nname = \"x\"\n\ncmd = [\"true\" \"false\"]\n", 4, ""},
    {"UnknownKeyInGate", "[[gate]]\nname = \"x\"\ncmd = [\"true\"]\ntimeout = 5\n", 4, "unknown key 'timeout'"},
    {"UnknownTopLevelKey", "jobs = 2\n[[gate]]\nname = \"x\"\ncmd = [\"true\"]\n", 1, "unknown top-level key 'jobs'"},
    {"GateAsPlainTable", "[gate]\nname = \"x\"\ncmd = [\"true\"]\n", 1, "[[gate]] tables"},
    {"NoGates", "", 0, "no [[gate]]"},
    {"MissingName", "[[gate]]\ncmd = [\"true\"]\n", 1, "no 'name'"},
    {"BadName", "[[gate]]\nname = \"a/b\"\ncmd = [\"true\"]\n", 2, "must be 1-100 of"},
    {"MissingCmd", "[[gate]]\nname = \"x\"\n", 1, "no 'cmd'"},
    {"StringCmdWithoutShell", "[[gate]]\nname = \"x\"\ncmd = \"make check\"\n", 3, "set shell = true"},
    {"ShellWithArray", "[[gate]]\nname = \"x\"\nshell = true\ncmd = [\"make\"]\n", 4, "needs 'cmd' as one string"},
    {"EmptyCmd", "[[gate]]\nname = \"x\"\ncmd = []\n", 3, "must not be empty"},
    {"CmdNotStrings", "[[gate]]\nname = \"x\"\ncmd = [\"a\",\n  2]\n", 4, "array of strings"},
    {"UnknownEnv", "[[gate]]\nname = \"x\"\ncmd = [\"true\"]\nenv = \"freebsd\"\n", 4, "linux, macos, windows, any"},
    {"ZeroTimeout", "[[gate]]\nname = \"x\"\ncmd = [\"true\"]\ntimeout_sec = 0\n", 4, "at least 0.001"},
    {"TimeoutAsString", "[[gate]]\nname = \"x\"\ncmd = [\"true\"]\ntimeout_sec = \"5\"\n", 4, "number of seconds"},
    {"PolicyOfWrongType", "[[gate]]\nname = \"x\"\ncmd = [\"true\"]\nsandbox_policy = 3\n", 4, "profile name, a file or a table"},
    {"WorkdirEscapes1", "[[gate]]\nname = \"x\"\ncmd = [\"true\"]\nworkdir = \"a/../../etc\"\n", 4, "without '..'"},
    {"WorkdirEscapes2", "[[gate]]\nname = \"x\"\ncmd = [\"true\"]\nworkdir = \"/etc\"\n", 4, "relative path"},
    // A manifest is read on every platform: Windows' absolute and '..' spellings escape too.
    {"WorkdirEscapesWindowsDrive", "[[gate]]\nname = \"x\"\ncmd = [\"true\"]\nworkdir = 'C:\\x'\n", 4, "relative path"},
    {"WorkdirEscapesWindowsUnc", "[[gate]]\nname = \"x\"\ncmd = [\"true\"]\nworkdir = '\\\\srv\\share'\n", 4,
     "relative path"},
    {"WorkdirEscapesWindowsDotDot", "[[gate]]\nname = \"x\"\ncmd = [\"true\"]\nworkdir = 'a\\..\\..\\x'\n", 4,
     "without '..'"},
    {"SetenvValueNotString", "[[gate]]\nname = \"x\"\ncmd = [\"true\"]\nsetenv = { A = 1 }\n", 4, "setenv.A must be a string"},
    // A NUL cannot be in an environment entry: the gate would be refused at launch, not the manifest at load.
    {"SetenvNameWithNul", "[[gate]]\nname = \"x\"\ncmd = [\"true\"]\nsetenv = { \"A\\u0000B\" = \"1\" }\n", 4,
     "bad variable name"},
    {"SetenvValueWithNul", "[[gate]]\nname = \"x\"\ncmd = [\"true\"]\nsetenv = { A = \"x\\u0000y\" }\n", 4,
     "setenv.A must not contain NUL"},
    {"NeedsNotStrings", "[[gate]]\nname = \"x\"\ncmd = [\"true\"]\nneeds = \"y\"\n", 4, "'needs' must be an array"},
    {"DuplicateName", "[[gate]]\nname = \"x\"\ncmd = [\"true\"]\n\n[[gate]]\nname = \"x\"\ncmd = [\"false\"]\n", 5,
               "duplicate gate name 'x' (first at line 1)"},
    {"UnknownNeed", "[[gate]]\nname = \"x\"\ncmd = [\"true\"]\nneeds = [\"build\"]\n", 1, "needs 'build', which is not a gate"},
    {"NeedsCycle", R"([[gate]]
name = "a"
cmd = ["true"]
needs = ["c"]
[[gate]]
name = "b"
cmd = ["true"]
needs = ["a"]
[[gate]]
name = "c"
cmd = ["true"]
needs = ["b"]
)",
               1, "needs cycle: a -> c -> b -> a"},
    {"SelfNeed", "[[gate]]\nname = \"a\"\ncmd = [\"true\"]\nneeds = [\"a\"]\n", 1, "needs cycle: a -> a"}};

class GateManifestErrors : public ::testing::TestWithParam<error_case> {};

TEST_P(GateManifestErrors, NamesTheLine) {
  const error_case& c = GetParam();
  expect_error(c.text, c.line, c.fragment);
}

INSTANTIATE_TEST_SUITE_P(EachError, GateManifestErrors, ::testing::ValuesIn(kErrorCases),
                         [](const ::testing::TestParamInfo<error_case>& p) { return std::string(p.param.name); });

TEST(GateManifest, EveryStructuralErrorIsListed) {
  auto r = parse("[[gate]]\nname = \"x\"\ncmd = \"a\"\nenv = \"bsd\"\nbogus = 1\n");
  ASSERT_EQ(r.errors.size(), 3u);
  EXPECT_EQ(r.errors[0].line, 3);
  EXPECT_EQ(r.errors[1].line, 4);
  EXPECT_EQ(r.errors[2].line, 5);
}

}  // namespace
}  // namespace cordon::gates
