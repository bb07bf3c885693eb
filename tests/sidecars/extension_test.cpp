// The extension manifest reader (src/sidecars/extension.h): strict keys with
// line numbers, grants as capability requests, files with digests.
#include "sidecars/extension.h"

#include <gtest/gtest.h>

#include "harness.h"

namespace cordon::sidecars {
namespace {

constexpr const char* kGood = R"([extension]
name = "notes"
version = "0.3"
command = ["python3", "server.py"]
protocol = "lsp"
sandbox_policy = "policies/notes.json"
handshake_timeout_sec = 2.5

[[grant]]
action = "filesystem_read"
paths = ["/srv/notes/./a/../b"]
tool = "notes.read"
risk = "low"

[[file]]
path = "server.py"
sha256 = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
)";

TEST(ExtensionManifest, ReadsEveryField) {
  auto r = parse_extension_manifest(kGood, "/pkg/notes/ext.toml");
  ASSERT_TRUE(r.manifest) << r.errors[0].message;
  const auto& m = *r.manifest;
  EXPECT_EQ(m.name, "notes");
  EXPECT_EQ(m.directory, "/pkg/notes");
  EXPECT_EQ(m.command, (std::vector<std::string>{"python3", "server.py"}));
  EXPECT_EQ(m.proto, protocol::lsp);
  EXPECT_EQ(m.handshake_timeout_sec, 2.5);
  EXPECT_EQ(m.sandbox_policy, "policies/notes.json");
  ASSERT_EQ(m.grants.size(), 1u);
  EXPECT_EQ(m.grants[0].paths, (std::vector<std::string>{"/srv/notes/b"}));  // normalized as requests are
  EXPECT_EQ(m.grants[0].subject_id, "notes");
  EXPECT_EQ(m.grants[0].risk, governance::risk_level::low);
  ASSERT_EQ(m.files.size(), 1u);
  EXPECT_TRUE(m.digest.starts_with("sha256:"));
}

TEST(ExtensionManifest, EveryProblemIsAnErrorWithItsLine) {
  auto r = parse_extension_manifest(R"([extension]
name = "bad name"
command = ["x"]
timeout = 3

[[grant]]
action = "shell"

[[file]]
path = "../escape.py"
sha256 = "ABC"

[extra]
)",
                                    "ext.toml");
  ASSERT_FALSE(r.manifest);
  std::vector<std::pair<int, std::string>> got;
  for (const auto& e : r.errors) got.emplace_back(e.line, e.message);
  ASSERT_EQ(got.size(), 7u) << got[0].second;
  EXPECT_EQ(got[0].first, 2);
  EXPECT_EQ(got[1], (std::pair<int, std::string>{4, "unknown key 'timeout' in [extension]"}));
  EXPECT_EQ(got[2].first, 6);  // [[grant]] needs 'action' (and shell is no grant, line 7)
  EXPECT_EQ(got[3].first, 7);
  EXPECT_EQ(got[4].first, 10);
  EXPECT_EQ(got[5].first, 11);
  EXPECT_EQ(got[6].first, 13);
}

TEST(ExtensionManifest, ATomlSyntaxErrorNamesItsLine) {
  auto r = parse_extension_manifest("[extension]\nname = \n", "ext.toml");
  ASSERT_FALSE(r.manifest);
  EXPECT_EQ(r.errors[0].line, 2);
}

TEST(ExtensionFiles, DigestsAreCheckedAndSymlinksAreNotFollowed) {
  test::temp_dir dir;
  dir.write("server.py", "hello");  // sha256("hello") is in kGood
  std::string text = std::string(kGood) + "\n[[file]]\npath = \"link.py\"\nsha256 = \"" + std::string(64, 'a') + "\"\n";
  ASSERT_EQ(::symlink("server.py", (dir.path() + "/link.py").c_str()), 0);
  auto r = parse_extension_manifest(text, dir.path() + "/ext.toml");
  ASSERT_TRUE(r.manifest);
  auto problems = verify_extension_files(*r.manifest);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_TRUE(problems[0].starts_with("link.py: cannot open: ")) << problems[0];
  dir.write("server.py", "hello!");
  problems = verify_extension_files(*r.manifest);
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_TRUE(problems[0].starts_with("server.py: sha256 is ")) << problems[0];
}

}  // namespace
}  // namespace cordon::sidecars
