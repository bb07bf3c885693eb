// Unit tests: the built-in profiles parse, validate clean, and keep their
// documented denials and protections.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "cordon/policy_json.h"
#include "cordon/profiles.h"
#include "cordon/validation.h"

namespace cordon {
namespace {

const std::vector<std::string> secrets = {
    "{home}/.ssh", "{home}/.gnupg", "{home}/.aws", "{home}/.config/gcloud", "{home}/.kube",
    "{home}/.docker/config.json", "{home}/.netrc", "{home}/.git-credentials", "{home}/.bash_history",
    "{home}/.zsh_history", "{home}/.python_history", "{home}/.npmrc", "{home}/.pypirc", "{home}/.config/gh",
    "{home}/.config/hub", "{home}/.cargo/credentials", "{home}/.cargo/credentials.toml", "{home}/.gem/credentials",
    "{home}/.m2/settings.xml", "{home}/.terraform.d", "{home}/.azure", "{home}/.config/containers/auth.json",
    "{home}/.password-store", "{home}/.local/share/keyrings", "{home}/.vault-token", "{home}/.config/rclone",
    "{home}/.s3cfg", "{home}/.boto", "{home}/.pgpass", "{home}/.my.cnf", "{home}/.Xauthority", "{home}/.mozilla",
    "{home}/.config/google-chrome", "{home}/.config/chromium", "{home}/.node_repl_history",
    "{home}/.psql_history", "{home}/.mysql_history", "/etc/shadow", "/etc/gshadow", "/etc/ssh"};

// The same credential stores where Windows keeps them (under %USERPROFILE%,
// docs/windows-backend.md, "Built-in profiles on Windows"); the ones Windows
// keeps where Linux does (.ssh, .aws, .azure, .git-credentials, ...) are above.
const std::vector<std::string> windows_secrets = {
    "{home}/AppData/Roaming/GitHub CLI", "{home}/AppData/Roaming/gcloud", "{home}/AppData/Roaming/gnupg",
    "{home}/AppData/Roaming/Microsoft/Credentials", "{home}/AppData/Local/Microsoft/Credentials",
    "{home}/AppData/Roaming/Microsoft/Protect", "{home}/AppData/Roaming/Microsoft/Windows/PowerShell/PSReadLine",
    "{home}/AppData/Roaming/rclone", "{home}/AppData/Roaming/postgresql", "{home}/AppData/Roaming/terraform.d",
    "{home}/AppData/Roaming/Mozilla", "{home}/AppData/Local/Google/Chrome/User Data",
    "{home}/AppData/Local/Microsoft/Edge/User Data"};

const std::vector<std::string> shell_startup = {
    "{home}/.bashrc", "{home}/.bash_profile", "{home}/.bash_login", "{home}/.profile",
    "{home}/.zshrc",  "{home}/.zprofile",     "{home}/.zshenv"};

bool contains(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

sandbox_policy load(const std::string& name) {
  auto p = builtin_profile(name);
  EXPECT_TRUE(p) << name << ": " << (p ? "" : p.error_value().describe());
  return p ? *p : sandbox_policy{};
}

TEST(Profiles, NamesAreSortedAndComplete) {
  const std::vector<std::string> expected = {"offline", "read-only", "workspace-write"};
  EXPECT_EQ(builtin_profile_names(), expected);
  EXPECT_TRUE(contains(builtin_profile_names(), std::string(default_profile_name)));
}

TEST(Profiles, UnknownProfile) {
  auto p = builtin_profile("workspace_write");
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error_value().code, error_code::unknown_profile);
  EXPECT_NE(p.error_value().message.find("workspace-write"), std::string::npos);
  auto j = builtin_profile_json("nope");
  ASSERT_FALSE(j);
  EXPECT_EQ(j.error_value().code, error_code::unknown_profile);
}

TEST(Profiles, EveryProfileParsesValidatesAndIsNormalized) {
  for (const auto& name : builtin_profile_names()) {
    SCOPED_TRACE(name);
    const auto p = load(name);
    EXPECT_EQ(p.name, name);
    const auto v = validate_sandbox_policy(p);
    for (const auto& e : v.errors) ADD_FAILURE() << e.location << ": " << e.reason;
    EXPECT_EQ(v.policy, p) << "a shipped profile should already be in normal form";
    EXPECT_TRUE(relaxation_warnings(p).empty());
    EXPECT_EQ(p.metadata.at("origin"), "builtin");
  }
}

TEST(Profiles, EmbeddedTextIsTheFileAndCanonical) {
  for (const auto& name : builtin_profile_names()) {
    SCOPED_TRACE(name);
    std::ifstream in(std::string(CORDON_SOURCE_DIR) + "/profiles/" + name + ".json");
    std::stringstream file;
    file << in.rdbuf();
    auto text = builtin_profile_json(name);
    ASSERT_TRUE(text);
    EXPECT_EQ(*text, file.str());
    // Profiles are stored exactly as sandbox_policy_to_json writes them, so
    // `cordon` can print them and diffs stay meaningful.
    EXPECT_EQ(sandbox_policy_to_json(load(name)), *text)
        << "store profiles exactly as sandbox_policy_to_json writes them "
           "(2-space indent, one array item per line)";
  }
}

TEST(Profiles, CommonProtections) {
  for (const auto& name : builtin_profile_names()) {
    SCOPED_TRACE(name);
    const auto p = load(name);
    EXPECT_EQ(p.isolation, isolation_level::os_sandbox);
    for (const auto& s : secrets) EXPECT_TRUE(contains(p.filesystem.denied, s)) << s;
    for (const auto& s : windows_secrets) EXPECT_TRUE(contains(p.filesystem.denied, s)) << s;
    EXPECT_EQ(p.filesystem.protected_read_only, shell_startup);
    EXPECT_TRUE(p.filesystem.include_platform_defaults);
    EXPECT_EQ(p.network.mode, network_mode::denied);
    EXPECT_FALSE(p.network.allow_local_binding);
    EXPECT_TRUE(p.network.rules.empty());
    EXPECT_EQ(p.environment.inherit, environment_inherit::none);
    EXPECT_TRUE(contains(p.environment.allow, "TERM"));
    EXPECT_FALSE(contains(p.environment.allow, "SSH_AUTH_SOCK"));
    const std::vector<std::pair<std::string, std::string>> set = {
        {"PATH", "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"},
        {"HOME", "/tmp"},
        {"TMPDIR", "/tmp"}};
    EXPECT_EQ(p.environment.set, set);
    EXPECT_TRUE(p.process.tree_cleanup);
    EXPECT_TRUE(contains(p.filesystem.writable, "{run_tmp}"));
    EXPECT_TRUE(p.enforcement.empty());
    const auto req = required_enforcement(p);
    EXPECT_EQ(req.at(control::filesystem_deny), enforcement_level::enforced);
    EXPECT_EQ(req.at(control::network_deny), enforcement_level::enforced);
  }
}

TEST(Profiles, WorkspaceWrite) {
  const auto p = load("workspace-write");
  EXPECT_EQ(p.filesystem.read, read_mode::restricted);
  EXPECT_EQ(p.filesystem.readable, std::vector<std::string>{"{workspace}"});
  EXPECT_EQ(p.filesystem.writable, (std::vector<std::string>{"{workspace}", "{run_tmp}"}));
  EXPECT_TRUE(p.filesystem.protect_vcs_metadata);
  // The home's stores, their Windows places, then the system's (/etc/...).
  std::vector<std::string> denied(secrets.begin(), secrets.end() - 3);
  denied.insert(denied.end(), windows_secrets.begin(), windows_secrets.end());
  denied.insert(denied.end(), secrets.end() - 3, secrets.end());
  EXPECT_EQ(p.filesystem.denied, denied);
  EXPECT_EQ(required_enforcement(p).at(control::filesystem_read), enforcement_level::enforced);
}

TEST(Profiles, Offline) {
  const auto p = load("offline");
  EXPECT_EQ(p.filesystem.read, read_mode::full);
  EXPECT_EQ(p.filesystem.writable, (std::vector<std::string>{"{workspace}", "{run_tmp}"}));
  EXPECT_TRUE(p.filesystem.protect_vcs_metadata);
  EXPECT_TRUE(contains(p.filesystem.denied, "/run"));
  EXPECT_FALSE(required_enforcement(p).contains(control::filesystem_read));
}

TEST(Profiles, ReadOnly) {
  const auto p = load("read-only");
  EXPECT_EQ(p.filesystem.read, read_mode::full);
  EXPECT_EQ(p.filesystem.writable, std::vector<std::string>{"{run_tmp}"});
  EXPECT_FALSE(p.filesystem.protect_vcs_metadata);
  EXPECT_EQ(p.filesystem.denied, load("offline").filesystem.denied);
  EXPECT_TRUE(contains(p.filesystem.denied, "/run"));
}

}  // namespace
}  // namespace cordon
