// Escapes found by review, each kept as a test: the attack fails, the
// ordinary thing next to it still works.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "harness.h"

namespace cordon::test {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST(EscapeRegression, KernelSettingsUnderProcSysAreReadOnly) {
  temp_dir ws;
  std::string before = slurp("/proc/sys/vm/stat_interval");
  auto r = run_sh(ws.path(), "cat /proc/sys/vm/stat_interval >/dev/null && echo readable; "
                             "echo 7 >> /proc/sys/vm/stat_interval; echo '|/bin/false' >> /proc/sys/kernel/core_pattern; "
                             "echo h > /proc/sysrq-trigger; true");
  EXPECT_EQ(r.exit_code, 0) << r.all();
  EXPECT_NE(r.out.find("readable"), std::string::npos);
  // /proc is mounted read-only inside: EROFS for root and for everyone else.
  const char* refusal = "Read-only file system";
  EXPECT_NE(r.all().find(std::string("/proc/sys/vm/stat_interval: ") + refusal), std::string::npos) << r.all();
  EXPECT_NE(r.all().find(std::string("/proc/sys/kernel/core_pattern: ") + refusal), std::string::npos) << r.all();
  EXPECT_EQ(slurp("/proc/sys/vm/stat_interval"), before);
  EXPECT_EQ(slurp("/proc/sys/kernel/core_pattern").find("/bin/false"), std::string::npos);
}

TEST(EscapeRegression, RenamingTheParentOfAProtectedPathIsRefused) {
  temp_dir ws;
  ASSERT_EQ(host_command({"git", "init", "-q", ws.path()}), 0);
  ws.write("nested/deeper/keep/.git/hooks/README", "x");
  ws.write("nested/deeper/keep/.git/config", "[core]\n");
  auto r = run_sh(ws.path(),
                  "mv .git .git-orig 2>&1; mv nested moved 2>&1; mv nested/deeper nested/d2 2>&1; "
                  "mkdir -p other && mv other other2 && echo plain-rename-ok");
  EXPECT_EQ(r.exit_code, 0) << r.all();
  // The pins are mount points: the kernel's EBUSY is answered EROFS (docs/seccomp.md,
  // "Renames and removals of protected paths"), so the message says why.
  EXPECT_NE(r.all().find("mv: cannot move '.git' to '.git-orig': Read-only file system"), std::string::npos)
      << r.all();
  EXPECT_NE(r.all().find("mv: cannot move 'nested' to 'moved': Read-only file system"), std::string::npos)
      << r.all();
  EXPECT_EQ(r.all().find("Device or resource busy"), std::string::npos) << r.all();
  EXPECT_NE(r.all().find("plain-rename-ok"), std::string::npos) << r.all();
  EXPECT_TRUE(std::filesystem::exists(ws.path() + "/.git/hooks"));
  EXPECT_FALSE(std::filesystem::exists(ws.path() + "/.git-orig"));
}

TEST(EscapeRegression, RootCannotLeaveSetuidProgramsBehind) {
  temp_dir ws;
  auto r = run_sh(ws.path(), "cp /bin/true t && chmod 4755 t; chmod g+s t; "
                             "python3 -c \"import os; os.open('c', os.O_CREAT | os.O_WRONLY, 0o4755)\" 2>/dev/null; "
                             "chmod 0755 t && echo plain-chmod-ok");
  EXPECT_EQ(r.exit_code, 0) << r.all();
  EXPECT_NE(r.out.find("plain-chmod-ok"), std::string::npos);
  struct stat st {};
  ASSERT_EQ(::stat((ws.path() + "/t").c_str(), &st), 0);
  if (running_as_root()) {
    // Files made by root inside belong to root outside: no setuid or setgid bit may appear.
    EXPECT_EQ(st.st_mode & (S_ISUID | S_ISGID), 0u);
    EXPECT_NE(r.all().find("chmod: changing permissions of 't': Operation not permitted"), std::string::npos)
        << r.all();
    EXPECT_FALSE(std::filesystem::exists(ws.path() + "/c"));
  } else {
    // An unprivileged caller's setuid file runs as that same user: no gain, so it is allowed.
    EXPECT_EQ(st.st_uid, ::geteuid());
  }
}

TEST(EscapeRegression, DeniedFileWithAnotherHardLinkIsRefused) {
  temp_dir home("/var/tmp");
  home.write(".ssh/id_ed25519", "PRIVATE KEY\n");
  temp_dir ws("/var/tmp");
  ASSERT_EQ(::link((home.path() + "/.ssh/id_ed25519").c_str(), (ws.path() + "/innocent.txt").c_str()), 0);
  auto r = run_cordon({"--profile", "offline"}, {"sh", "-c", "touch ran; cat innocent.txt"}, ws.path(),
                      {"HOME=" + home.path()});
  EXPECT_EQ(r.exit_code, 125) << r.all();
  EXPECT_EQ(r.out.find("PRIVATE KEY"), std::string::npos);
  EXPECT_NE(r.err.find("has another hard link"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(ws.path() + "/ran"));
  // Without the extra link the same run works.
  ASSERT_EQ(::unlink((ws.path() + "/innocent.txt").c_str()), 0);
  auto ok = run_cordon({"--profile", "offline"}, {"sh", "-c", "echo ran"}, ws.path(), {"HOME=" + home.path()});
  EXPECT_EQ(ok.exit_code, 0) << ok.all();
}

TEST(EscapeRegression, ReportCannotBeRedirectedThroughASwappedDirectory) {
  temp_dir ws, victim;
  ws.mkdir("out");
  std::string target = victim.write("run.json", "precious\n");
  std::string cmd = "cd '" + ws.path() + "' && '" + cordon_cli() + "' run --report out/run.json -- sh -c 'rm -rf out && ln -s " +
                    victim.path() + " out' 2>/dev/null; true";
  ASSERT_EQ(host_command({"sh", "-c", cmd}), 0);
  EXPECT_EQ(slurp(target), "precious\n");
}

TEST(EscapeRegression, GitRedirectsAndNewRepositoriesAreReportedAsViolations) {
  temp_dir ws;
  ASSERT_EQ(host_command({"git", "init", "-q", ws.path()}), 0);
  ws.mkdir("a/b/c");
  // A mount cannot cover a file that does not exist; the report must say it appeared.
  auto r = run_sh(ws.path(), "mkdir .git/x && echo x > .git/commondir && mkdir sub && git init -q sub && "
                             "git init -q a/b && mkdir -p new/deeper && git init -q new/deeper && echo done");
  EXPECT_EQ(r.exit_code, 0) << r.all();
  std::string violations = r.report["violations"].dump();
  EXPECT_NE(violations.find("\"repository_redirect_created\""), std::string::npos) << violations;
  EXPECT_NE(violations.find(ws.path() + "/.git/commondir"), std::string::npos) << violations;
  EXPECT_NE(violations.find("\"repository_created\""), std::string::npos) << violations;
  EXPECT_NE(violations.find(ws.path() + "/sub/.git"), std::string::npos) << violations;
  EXPECT_NE(violations.find(ws.path() + "/a/b/.git"), std::string::npos) << violations;       // in an old directory
  EXPECT_NE(violations.find(ws.path() + "/new/deeper/.git"), std::string::npos) << violations;  // in a new tree
  // Each is a finding a host can act on (docs/deferred-execution.md).
  EXPECT_NE(r.report["deferred_execution"].dump().find(ws.path() + "/.git/commondir"), std::string::npos)
      << r.report.dump(2);
  // An ordinary run in the same repository reports nothing.
  temp_dir clean;
  ASSERT_EQ(host_command({"git", "init", "-q", clean.path()}), 0);
  auto quiet = run_sh(clean.path(), "echo x > file && git add file");
  EXPECT_EQ(quiet.exit_code, 0) << quiet.all();
  EXPECT_EQ(quiet.report["violations"].size(), 0u) << quiet.report["violations"].dump();
}

}  // namespace
}  // namespace cordon::test
