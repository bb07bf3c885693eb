// Filesystem confinement under the default profile (workspace-write):
// each forbidden access fails with its exact error, its allowed twin works.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "harness.h"

namespace cordon::test {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST(Filesystem, WriteInsideWorkspaceSucceedsOutsideFails) {
  temp_dir ws;
  temp_dir outside;
  auto r = run_sh(ws.path(),
                  "echo inside > in.txt && echo ok-inside; "
                  "echo x > " + outside.path() + "/out.txt 2>/dev/null || echo refused-outside; "
                  "echo x > /etc/cordon-probe 2>&1; echo x > /usr/cordon-probe 2>&1; true");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.all().find("ok-inside"), std::string::npos);
  EXPECT_NE(r.all().find("refused-outside"), std::string::npos);
  EXPECT_EQ(slurp(ws.path() + "/in.txt"), "inside\n");
  EXPECT_FALSE(std::filesystem::exists(outside.path() + "/out.txt"));
  EXPECT_NE(r.all().find("/etc/cordon-probe: Read-only file system"), std::string::npos) << r.all();
  EXPECT_NE(r.all().find("/usr/cordon-probe: Read-only file system"), std::string::npos) << r.all();
  EXPECT_FALSE(std::filesystem::exists("/etc/cordon-probe"));
}

TEST(Filesystem, HostPathsOutsideTheProfileAreInvisible) {
  temp_dir ws;
  temp_dir outside;
  outside.write("secret.txt", "host secret\n");
  auto r = run_sh(ws.path(), "cat " + outside.path() + "/secret.txt 2>&1; ls /home 2>&1; ls /root 2>&1; "
                  "cat /etc/hostname >/dev/null && echo etc-readable");
  EXPECT_EQ(r.out.find("host secret"), std::string::npos) << r.all();
  EXPECT_NE(r.all().find("No such file or directory"), std::string::npos) << r.all();
  EXPECT_NE(r.all().find("etc-readable"), std::string::npos) << r.all();
}

// A policy with one denied file and one denied directory inside the workspace.
std::string deny_policy(const std::string& dir) {
  std::string path = dir + "/policy.json";
  std::ofstream(path) << R"({
  "schema_version": 1,
  "name": "deny-test",
  "filesystem": {
    "read": "restricted",
    "readable": ["{workspace}"],
    "writable": ["{workspace}", "{run_tmp}"],
    "protected_read_only": ["{workspace}/.git"],
    "denied": ["{workspace}/secret.txt", "{workspace}/private"]
  },
  "network": {"mode": "denied"},
  "environment": {"set": {"PATH": "/usr/bin:/bin"}}
})";
  return path;
}

TEST(Filesystem, DeniedFileAndDirectoryCannotBeReadOrListed) {
  temp_dir ws;
  temp_dir policy_dir;
  ws.write("secret.txt", "file secret\n");
  ws.write("private/key.txt", "dir secret\n");
  ws.write("public.txt", "public\n");
  ws.write(".git/HEAD", "ref: refs/heads/main\n");
  std::string policy = deny_policy(policy_dir.path());
  auto r = run_cordon({"--policy", policy}, {"sh", "-c",
                       "cat secret.txt 2>&1; ls private 2>&1; cat private/key.txt 2>&1; cat public.txt; "
                       "echo new > fresh.txt && echo wrote-fresh"},
                      ws.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("file secret"), std::string::npos) << r.all();
  EXPECT_EQ(r.out.find("dir secret"), std::string::npos) << r.all();
  EXPECT_NE(r.all().find("cat: secret.txt: Permission denied"), std::string::npos) << r.all();
  EXPECT_NE(r.all().find("ls: cannot open directory 'private': Permission denied"), std::string::npos) << r.all();
  EXPECT_NE(r.all().find("public\n"), std::string::npos) << r.all();
  EXPECT_NE(r.all().find("wrote-fresh"), std::string::npos) << r.all();
  EXPECT_EQ(slurp(ws.path() + "/secret.txt"), "file secret\n");  // untouched on the host
}

TEST(Filesystem, DeniedEntriesCannotBeReplacedOrRemoved) {
  temp_dir ws;
  temp_dir policy_dir;
  ws.write("secret.txt", "file secret\n");
  ws.write("private/key.txt", "dir secret\n");
  ws.write(".git/HEAD", "ref: refs/heads/main\n");
  auto r = run_cordon({"--policy", deny_policy(policy_dir.path())},
                      {"sh", "-c", "rm -f secret.txt 2>&1; rm -rf private 2>&1; mv private p2 2>&1; true"}, ws.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(slurp(ws.path() + "/secret.txt"), "file secret\n");
  EXPECT_EQ(slurp(ws.path() + "/private/key.txt"), "dir secret\n");
  // Masks are mount points: the kernel's EBUSY is answered EROFS (docs/seccomp.md).
  EXPECT_NE(r.all().find("rm: cannot remove 'secret.txt': Read-only file system"), std::string::npos) << r.all();
  EXPECT_NE(r.all().find("mv: cannot move 'private' to 'p2': Read-only file system"), std::string::npos) << r.all();
  EXPECT_EQ(r.all().find("Device or resource busy"), std::string::npos) << r.all();
}

TEST(Filesystem, ProtectedGitCannotBeModifiedRenamedOrDeletedRestOfWorkspaceCan) {
  temp_dir ws;
  temp_dir policy_dir;
  ws.write(".git/HEAD", "ref: refs/heads/main\n");
  ws.write(".git/config", "[core]\n");
  ws.write(".git/hooks/README", "hooks\n");
  ws.write("secret.txt", "s\n");
  ws.mkdir("private");
  ws.write("src/main.c", "int main(void){return 0;}\n");
  auto r = run_cordon({"--policy", deny_policy(policy_dir.path())},
                      {"sh", "-c",
                       "echo evil > .git/hooks/pre-commit 2>&1; "
                       "echo '[alias]' >> .git/config 2>&1; "
                       "mv .git .git-moved 2>&1; "
                       "rm -rf .git 2>&1; "
                       "rm .git/HEAD 2>&1; "
                       "echo changed > src/main.c && mv src/main.c src/renamed.c && rm src/renamed.c && "
                       "mkdir -p build && echo ok > build/out && echo workspace-ok"},
                      ws.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.all().find(".git/hooks/pre-commit: Read-only file system"), std::string::npos) << r.all();
  EXPECT_NE(r.all().find(".git/config: Read-only file system"), std::string::npos) << r.all();
  // rename / rmdir of a mount point: EROFS from the supervisor, not the kernel's EBUSY (docs/seccomp.md)
  EXPECT_NE(r.all().find("mv: cannot move '.git' to '.git-moved': Read-only file system"), std::string::npos)
      << r.all();
  EXPECT_EQ(r.all().find("Device or resource busy"), std::string::npos) << r.all();
  EXPECT_NE(r.all().find("workspace-ok"), std::string::npos) << r.all();
  EXPECT_FALSE(std::filesystem::exists(ws.path() + "/.git/hooks/pre-commit"));
  EXPECT_EQ(slurp(ws.path() + "/.git/config"), "[core]\n");
  EXPECT_EQ(slurp(ws.path() + "/.git/HEAD"), "ref: refs/heads/main\n");
  EXPECT_FALSE(std::filesystem::exists(ws.path() + "/.git-moved"));
  EXPECT_FALSE(std::filesystem::exists(ws.path() + "/src/main.c"));
  EXPECT_EQ(slurp(ws.path() + "/build/out"), "ok\n");
}

TEST(Filesystem, DefaultProfileProtectsGitHooksAndConfigButNotHistory) {
  temp_dir ws;
  ASSERT_EQ(host_command({"git", "init", "-q", ws.path()}), 0);
  auto r = run_sh(ws.path(),
                  "echo evil > .git/hooks/pre-commit 2>&1; echo x >> .git/config 2>&1; "
                  "echo data > .git/description && echo git-internals-writable");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.all().find(".git/hooks/pre-commit: Read-only file system"), std::string::npos) << r.all();
  EXPECT_NE(r.all().find(".git/config: Read-only file system"), std::string::npos) << r.all();
  EXPECT_NE(r.all().find("git-internals-writable"), std::string::npos) << r.all();
  EXPECT_FALSE(std::filesystem::exists(ws.path() + "/.git/hooks/pre-commit"));
  // The report lists the re-binds.
  std::string mounts = r.report["mounts"].dump();
  EXPECT_NE(mounts.find("ro-bind " + ws.path() + "/.git/hooks (protected)"), std::string::npos) << mounts;
}

TEST(Filesystem, PrivateTmpAndDevShm) {
  temp_dir ws;
  auto r = run_sh(ws.path(),
                  "echo t > /tmp/cordon-private-probe && cat /tmp/cordon-private-probe; "
                  "echo s > /dev/shm/probe && cat /dev/shm/probe; ls /dev | tr '\\n' ' '; "
                  "echo x > /dev/cordon-node 2>&1; true");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.all().find("t\ns\n"), std::string::npos) << r.all();
  EXPECT_FALSE(std::filesystem::exists("/tmp/cordon-private-probe"));
  EXPECT_NE(r.all().find("null"), std::string::npos);
  EXPECT_EQ(r.out.find("sda"), std::string::npos) << r.all();
  EXPECT_EQ(r.out.find("kmsg"), std::string::npos) << r.all();
  EXPECT_NE(r.all().find("/dev/cordon-node: Read-only file system"), std::string::npos) << r.all();
}

TEST(Filesystem, CredentialsDeniedUnderFullRead) {
  temp_dir home("/var/tmp");  // not under /tmp: the sandbox's /tmp is private
  home.write(".ssh/id_ed25519", "PRIVATE KEY\n");
  home.write(".netrc", "machine x password y\n");
  home.write("notes.txt", "visible\n");
  temp_dir ws;
  auto r = run_cordon({"--profile", "offline"},
                      {"sh", "-c",
                       "cat " + home.path() + "/.ssh/id_ed25519 2>&1; ls " + home.path() + "/.ssh 2>&1; cat " +
                           home.path() + "/.netrc 2>&1; cat " + home.path() + "/notes.txt"},
                      ws.path(), {"HOME=" + home.path()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("PRIVATE KEY"), std::string::npos) << r.all();
  EXPECT_EQ(r.out.find("password"), std::string::npos) << r.all();
  EXPECT_NE(r.all().find("Permission denied"), std::string::npos) << r.all();
  EXPECT_NE(r.all().find("visible"), std::string::npos) << r.all();
}

TEST(Filesystem, ReadOnlyProfileWritesNothingOnTheHost) {
  temp_dir ws;
  ws.write("data.txt", "d\n");
  auto r = run_cordon({"--profile", "read-only"},
                      {"sh", "-c", "cat data.txt; echo x > data.txt 2>&1; echo y > /tmp/scratch && echo tmp-ok"},
                      ws.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.all().find("d\n"), std::string::npos);
  EXPECT_NE(r.all().find("data.txt: Read-only file system"), std::string::npos) << r.all();
  EXPECT_NE(r.all().find("tmp-ok"), std::string::npos) << r.all();
  EXPECT_EQ(slurp(ws.path() + "/data.txt"), "d\n");
}

}  // namespace
}  // namespace cordon::test
