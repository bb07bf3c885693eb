// A workspace inside a system tree or a credential folder would hand the
// policy's workspace access ({workspace}, writable under the default
// profile) to what the host runs or trusts: /etc/cron.d, /usr/local/bin,
// /var/lib, ~/.ssh. `cordon run` refuses them unless --force-workspace
// (docs/cli.md); a project directory, also under /var/tmp, still works.
#include <filesystem>

#include "escape_support.h"

namespace cordon::test::escape {
namespace {
namespace fs = std::filesystem;

TEST(EscapeWorkspace, SystemSubdirectoriesAreRefused) {
  temp_dir cwd;
  for (const std::string dir : {"/etc/cron.d", "/etc/systemd/system", "/usr/local/bin", "/var/lib", "/run/lock",
                                "/usr/lib"}) {
    if (!fs::is_directory(dir)) continue;
    auto r = run_cordon({"--workspace", dir}, {"true"}, cwd.path());
    EXPECT_EQ(r.exit_code, 125) << dir << "\n" << r.all();
    EXPECT_NE(r.err.find("inside the system tree"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--force-workspace"), std::string::npos) << r.err;
  }
  // Forced explicitly (read-only here, so that the test itself changes nothing there).
  auto forced = run_cordon({"--profile", "read-only", "--force-workspace", "--workspace", "/usr/local/bin"},
                           {"sh", "-c", "echo forced"}, cwd.path());
  EXPECT_EQ(forced.exit_code, 0) << forced.all();
  EXPECT_EQ(forced.out, "forced\n");
  // The directories themselves stay refused, forced or not.
  auto etc = run_cordon({"--force-workspace", "--workspace", "/etc"}, {"true"}, cwd.path());
  EXPECT_EQ(etc.exit_code, 125) << etc.all();
}

TEST(EscapeWorkspace, CredentialFoldersOfTheHomeAreRefused) {
  temp_dir home, cwd;
  for (const std::string sub : {".ssh", ".gnupg", ".aws", ".config/systemd/user", ".local/bin"}) {
    std::string dir = home.mkdir(sub);
    auto r = run_cordon({"--workspace", dir}, {"true"}, cwd.path(), {"HOME=" + home.path()});
    EXPECT_EQ(r.exit_code, 125) << dir << "\n" << r.all();
    EXPECT_NE(r.err.find("credentials or files the host runs"), std::string::npos) << r.err;
  }
  // A project in the same home, and one under /var/tmp, are workspaces.
  std::string project = home.mkdir("src/project");
  auto r = run_cordon({}, {"sh", "-c", "touch made && echo ok"}, project, {"HOME=" + home.path()});
  EXPECT_EQ(r.exit_code, 0) << r.all();
  EXPECT_TRUE(fs::exists(project + "/made"));
  temp_dir var_tmp("/var/tmp");
  r = run_cordon({}, {"sh", "-c", "touch made"}, var_tmp.path());
  EXPECT_EQ(r.exit_code, 0) << r.all();
  EXPECT_TRUE(fs::exists(var_tmp.path() + "/made"));
}

}  // namespace
}  // namespace cordon::test::escape
