// Filesystem escapes: links, renames, /proc roots, file handles, device nodes,
// kernel files under /proc and /sys. Each attempt is paired with the allowed
// action next to it. Under linux-os-sandbox (no namespaces: the escape_os_sandbox
// pass) the expected outcome is the one its report claims for the control.
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "escape_support.h"

namespace cordon::test::escape {
namespace {
namespace fs = std::filesystem;

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string first_line(const std::string& path) {
  std::string text = slurp(path);
  return text.substr(0, text.find('\n'));
}

// Root meets a read-only mount (EROFS); another user meets the root-owned
// file's mode first (EACCES), unless the host's file system under `path` is
// itself read-only (the kernel matrix's guests share the host's / read-only,
// docs/kernels.md): its superblock answers EROFS before any mode check.
std::string host_file_write_refusal(const char* path = "/etc") {
  struct statvfs host {};
  if (::statvfs(path, &host) == 0 && (host.f_flag & ST_RDONLY) != 0) return "EROFS";
  return running_as_root() ? "EROFS" : "EACCES";
}

TEST(EscapeFilesystem, SymlinkPlacedBeforeTheRunCannotReachOutside) {
  temp_dir ws, outside("/var/tmp");
  install_probe(ws);
  std::string secret = outside.write("secret.txt", "TOPSECRET\n");
  ws.write("inside.txt", "inside\n");
  ASSERT_EQ(::symlink(secret.c_str(), (ws.path() + "/out").c_str()), 0);
  ASSERT_EQ(::symlink((ws.path() + "/inside.txt").c_str(), (ws.path() + "/in").c_str()), 0);
  auto r = run_probe(ws, {"cat", "out", "+", "cat", "in"});
  EXPECT_EQ(r.exit_code, 0) << r.all();
  if (ran_os_sandbox(r)) {
    // No private view: the target exists, and reading it is not granted.
    expect_claim(r, "filesystem_read", "enforced", "read rules");
    EXPECT_EQ(r.out, lines({"cat EACCES", "cat OK inside"})) << r.all();
  } else {
    EXPECT_EQ(r.out, lines({"cat ENOENT", "cat OK inside"})) << r.all();
  }
  EXPECT_EQ(r.all().find("TOPSECRET"), std::string::npos);
}

TEST(EscapeFilesystem, SymlinkMadeInsideCannotReadADeniedFile) {
  temp_dir ws;
  install_probe(ws);
  auto r = run_probe(ws, {"symlink", "/etc/shadow", "s", "+", "cat", "s", "+", "symlink", "/etc/hostname", "h", "+",
                          "cat", "h"});
  EXPECT_EQ(r.exit_code, 0) << r.all();
  // /etc/shadow is masked by an empty mode-000 file; root has no capability to override it.
  EXPECT_EQ(r.out, lines({"symlink OK", "cat EACCES", "symlink OK", "cat OK " + first_line("/etc/hostname")}))
      << r.all();
}

TEST(EscapeFilesystem, HardLinkOfAHostFileCrossesMounts) {
  temp_dir ws;
  install_probe(ws);
  ws.write("a.txt", "a\n");
  auto r = run_probe(ws, {"link", "/etc/passwd", "passwd", "+", "link", "/usr/bin/env", "env", "+", "link", "a.txt",
                          "b.txt", "+", "cat", "b.txt"});
  EXPECT_EQ(r.exit_code, 0) << r.all();
  if (ran_os_sandbox(r)) {
    // No mounts of the sandbox's own: a host file on another file system is
    // EXDEV as ever; on the workspace's, another user meets the kernel's
    // protected_hardlinks first (EPERM, not the file's owner), root meets
    // Landlock, which refuses a link that would give the file other rights (EXDEV).
    expect_claim(r, "filesystem_write", "enforced|partial", "write rules for writable roots only");
    auto refusal = [&](const char* host_file) {
      struct stat file {}, workspace {};
      const bool same_fs = ::stat(host_file, &file) == 0 && ::stat(ws.path().c_str(), &workspace) == 0 &&
                           file.st_dev == workspace.st_dev;
      return std::string(same_fs && !running_as_root() && slurp("/proc/sys/fs/protected_hardlinks") == "1\n"
                             ? "link EPERM"
                             : "link EXDEV");
    };
    EXPECT_EQ(r.out, lines({refusal("/etc/passwd"), refusal("/usr/bin/env"), "link OK", "cat OK a"})) << r.all();
  } else {
    EXPECT_EQ(r.out, lines({"link EXDEV", "link EXDEV", "link OK", "cat OK a"})) << r.all();
  }
  EXPECT_FALSE(fs::exists(ws.path() + "/passwd"));
}

TEST(EscapeFilesystem, HardLinkOfAProtectedFileCrossesMounts) {
  temp_dir ws;
  install_probe(ws);
  ASSERT_EQ(host_command({"git", "init", "-q", ws.path()}), 0);
  std::string config_before = slurp(ws.path() + "/.git/config");
  auto r = run_probe(ws, {"link", ".git/config", "cfg", "+", "open-write", ".git/config", "+", "write",
                          ".git/description", "mine\n"});
  EXPECT_EQ(r.exit_code, 0) << r.all();
  if (ran_os_sandbox(r)) {
    // .git is split around its protected entries (Landlock): no new entry, no write to them
    // (EACCES from Landlock, answered EROFS by the supervisor: docs/seccomp.md, "Writes to protected paths").
    expect_claim(r, "filesystem_deny", "enforced", "entry by entry");
    EXPECT_EQ(r.out, lines({"link EACCES", "open-write EROFS", "write OK"})) << r.all();
  } else {
    EXPECT_EQ(r.out, lines({"link EXDEV", "open-write EROFS", "write OK"})) << r.all();
  }
  EXPECT_EQ(slurp(ws.path() + "/.git/config"), config_before);
  EXPECT_EQ(slurp(ws.path() + "/.git/description"), "mine\n");
}

TEST(EscapeFilesystem, GitHooksCannotBePlantedRemovedOrRenamed) {
  temp_dir ws;
  install_probe(ws);
  ASSERT_EQ(host_command({"git", "init", "-q", ws.path()}), 0);
  ws.write("evil-config", "[core]\n\thooksPath = /tmp\n");
  ws.write(".git/config.lock", "[core]\n\thooksPath = /tmp\n");
  // .git itself is pinned (a mount point), so a rename into it from the
  // workspace crosses mounts; the way an editor or `git config` saves (a
  // temporary file beside the target) meets the mount point. The kernel's
  // EBUSY and EXDEV for a mount point are answered EROFS by the supervisor
  // (docs/seccomp.md, "Renames and removals of protected paths").
  auto r = run_probe(ws, {"create", ".git/hooks/pre-commit", "+", "rename", ".git/hooks", ".git/hooks-old", "+",
                          "unlink", ".git/config", "+", "rename", "evil-config", ".git/config", "+", "rename",
                          ".git/config.lock", ".git/config", "+", "create", ".git/COMMIT_EDITMSG", "+", "write",
                          ".git/description", "mine\n"});
  EXPECT_EQ(r.exit_code, 0) << r.all();
  if (ran_os_sandbox(r)) {
    // Landlock: .git is granted entry by entry, so it takes no new entry
    // (COMMIT_EDITMSG either); its existing unprotected files stay writable.
    // What touches a protected path is EACCES from Landlock, answered EROFS
    // by the supervisor as on linux-namespaces (docs/seccomp.md).
    expect_claim(r, "filesystem_deny", "enforced", "accept no new entries");
    EXPECT_EQ(r.out, lines({"create EROFS", "rename EROFS", "unlink EROFS", "rename EROFS", "rename EROFS",
                            "create EACCES", "write OK"}))
        << r.all();
  } else {
    EXPECT_EQ(r.out, lines({"create EROFS", "rename EROFS", "unlink EROFS", "rename EROFS", "rename EROFS", "create OK",
                            "write OK"}))
        << r.all();
  }
  EXPECT_FALSE(fs::exists(ws.path() + "/.git/hooks/pre-commit"));
  EXPECT_EQ(slurp(ws.path() + "/.git/config").find("hooksPath"), std::string::npos);
}

TEST(EscapeFilesystem, RenamingTheParentOfAProtectedDirectoryIsRefused) {
  temp_dir ws;
  install_probe(ws);
  ASSERT_EQ(host_command({"git", "init", "-q", ws.path() + "/nested/deeper/keep"}), 0);
  ws.write("spare/x.txt", "x\n");
  auto r = run_probe(ws, {"rename", "nested", "moved", "+", "rename", "nested/deeper", "nested/d2", "+", "rename",
                          "nested/deeper/keep/.git", "nested/deeper/keep/.git-orig", "+", "mkdir", "other", "+",
                          "rename", "other", "other2", "+", "mkdir", "spare/sub"});
  EXPECT_EQ(r.exit_code, 0) << r.all();
  if (ran_os_sandbox(r)) {
    // Every directory on the way to .git is split: nothing moves (EACCES,
    // answered EROFS by the supervisor), and the workspace's top level
    // takes no new entry; an existing sibling does.
    expect_claim(r, "filesystem_deny", "enforced", "accept no new entries");
    EXPECT_EQ(r.out, lines({"rename EROFS", "rename EROFS", "rename EROFS", "mkdir EACCES", "rename ENOENT",
                            "mkdir OK"}))
        << r.all();
  } else {
    // Pinned directories are mount points: EBUSY from the kernel, answered EROFS by the supervisor.
    EXPECT_EQ(r.out, lines({"rename EROFS", "rename EROFS", "rename EROFS", "mkdir OK", "rename OK", "mkdir OK"}))
        << r.all();
    EXPECT_TRUE(fs::is_directory(ws.path() + "/other2"));
  }
  EXPECT_TRUE(fs::is_directory(ws.path() + "/nested/deeper/keep/.git/hooks"));
  EXPECT_TRUE(fs::is_directory(ws.path() + "/spare/sub"));
}

// A .git/hooks or .git/config that is a symlink: the protection must hold for
// the name git uses, not only for what the link pointed to at compile time.
// Refusing the run (125, nothing ran) is a sound answer too. The allowed
// action writes pad/notes.txt: an existing directory, which stays writable
// under linux-os-sandbox too (its split top level takes no new entry).
void expect_symlinked_metadata_held(const temp_dir& ws, const run_result& r, const std::string& name,
                                    const std::string& link_target) {
  std::string path = ws.path() + "/.git/" + name;
  EXPECT_TRUE(fs::is_symlink(path)) << path << " was replaced by the command: a real escape\n" << r.all();
  if (fs::is_symlink(path)) {
    EXPECT_EQ(fs::read_symlink(path).string(), link_target);
  }
  if (r.exit_code == 125) {
    EXPECT_FALSE(fs::exists(ws.path() + "/pad/notes.txt")) << r.all();
  } else {
    EXPECT_EQ(r.exit_code, 0) << r.all();
    EXPECT_TRUE(fs::exists(ws.path() + "/pad/notes.txt")) << r.all();
  }
}

TEST(EscapeFilesystem, SymlinkedHooksDirectoryCannotBeSwappedForARealOne) {
  temp_dir ws;
  install_probe(ws);
  ASSERT_EQ(host_command({"git", "init", "-q", ws.path()}), 0);
  ws.mkdir("pad");
  fs::remove_all(ws.path() + "/.git/hooks");
  ws.mkdir("shared-hooks");
  ASSERT_EQ(::symlink("../shared-hooks", (ws.path() + "/.git/hooks").c_str()), 0);
  auto r = run_probe(ws, {"unlink", ".git/hooks", "+", "mkdir", ".git/hooks", "+", "create", ".git/hooks/pre-commit",
                          "+", "create", "shared-hooks/pre-commit", "+", "create", "pad/notes.txt"});
  EXPECT_FALSE(fs::exists(ws.path() + "/.git/hooks/pre-commit")) << "a hook was planted: a real escape\n" << r.all();
  EXPECT_FALSE(fs::exists(ws.path() + "/shared-hooks/pre-commit")) << r.all();
  expect_symlinked_metadata_held(ws, r, "hooks", "../shared-hooks");
}

TEST(EscapeFilesystem, SymlinkedHooksDirectoryOutsideTheWorkspaceCannotBeSwapped) {
  temp_dir ws, hooks("/var/tmp");
  install_probe(ws);
  ASSERT_EQ(host_command({"git", "init", "-q", ws.path()}), 0);
  ws.mkdir("pad");
  fs::remove_all(ws.path() + "/.git/hooks");
  ASSERT_EQ(::symlink(hooks.path().c_str(), (ws.path() + "/.git/hooks").c_str()), 0);
  auto r = run_probe(ws, {"unlink", ".git/hooks", "+", "mkdir", ".git/hooks", "+", "create", ".git/hooks/pre-commit",
                          "+", "create", "pad/notes.txt"});
  EXPECT_FALSE(fs::exists(ws.path() + "/.git/hooks/pre-commit")) << "a hook was planted: a real escape\n" << r.all();
  expect_symlinked_metadata_held(ws, r, "hooks", hooks.path());
}

TEST(EscapeFilesystem, SymlinkedGitConfigCannotBeSwappedForARealOne) {
  temp_dir ws;
  install_probe(ws);
  ASSERT_EQ(host_command({"git", "init", "-q", ws.path()}), 0);
  ws.mkdir("pad");
  fs::rename(ws.path() + "/.git/config", ws.path() + "/shared-config");
  ASSERT_EQ(::symlink("../shared-config", (ws.path() + "/.git/config").c_str()), 0);
  std::string before = slurp(ws.path() + "/shared-config");
  // core.fsmonitor runs a command on the host at the next `git status`.
  auto r = run_probe(ws, {"unlink", ".git/config", "+", "write", ".git/config",
                          "[core]\n\tfsmonitor = \"touch /tmp/pwned; false\"\n", "+", "open-write",
                          "shared-config", "+", "create", "pad/notes.txt"});
  EXPECT_EQ(slurp(ws.path() + "/.git/config"), before) << "git config was replaced: a real escape\n" << r.all();
  expect_symlinked_metadata_held(ws, r, "config", "../shared-config");
}

// core.hooksPath (husky, lefthook, pre-commit setups) moves the hooks to a
// directory in the work tree; git runs what is there at the next commit.
TEST(EscapeFilesystem, HooksDirectoryNamedByCoreHooksPathCannotBePlanted) {
  temp_dir ws;
  install_probe(ws);
  ASSERT_EQ(host_command({"git", "init", "-q", ws.path()}), 0);
  ASSERT_EQ(host_command({"git", "-C", ws.path(), "config", "core.hooksPath", ".githooks"}), 0);
  ws.mkdir(".githooks");
  ws.mkdir("pad");
  auto r = run_probe(ws, {"create", ".githooks/pre-commit", "+", "create", "pad/notes.txt"});
  EXPECT_FALSE(fs::exists(ws.path() + "/.githooks/pre-commit"))
      << "a hook was planted where core.hooksPath points: a real escape\n" << r.all();
  if (r.exit_code != 125) {
    EXPECT_EQ(r.exit_code, 0) << r.all();
    EXPECT_EQ(r.out, lines({"create EROFS", "create OK"})) << r.all();
  }
}

// A denied file inside the writable workspace: masked, and neither it nor
// any directory above it can be moved, removed or linked to uncover it.
TEST(EscapeFilesystem, DeniedFileInsideTheWorkspaceCannotBeUncovered) {
  temp_dir ws, policy_dir;
  install_probe(ws);
  ws.write("config/keys/secret.txt", "SECRET\n");
  ws.write("config/settings.txt", "settings\n");
  std::string policy = write_policy(policy_dir, R"({"readable": ["{workspace}"], "writable": ["{workspace}"],
      "denied": ["{workspace}/config/keys/secret.txt"]})");
  auto r = run_probe(ws, {"cat", "config/keys/secret.txt", "+", "rename", "config", "config2", "+", "rename",
                          "config/keys", "config/k2", "+", "unlink", "config/keys/secret.txt", "+", "rename",
                          "config/keys/secret.txt", "config/keys/s.txt", "+", "rename", "config/keys/secret.txt",
                          "config/s.txt", "+", "link", "config/keys/secret.txt",
                          "config/copy.txt", "+", "cat", "config/settings.txt", "+", "write", "config/new.txt", "new",
                          "+", "write", "config/settings.txt", "changed"},
                     {"--policy", policy});
  EXPECT_EQ(r.exit_code, 0) << r.all();
  if (ran_os_sandbox(r)) {
    // Landlock: config/ and config/keys/ are split around the secret; they
    // take no new entry, their existing files stay writable.
    expect_claim(r, "filesystem_deny", "enforced", "accept no new entries");
    EXPECT_EQ(r.out, lines({"cat EACCES", "rename EACCES", "rename EACCES", "unlink EACCES", "rename EACCES",
                            "rename EACCES", "link EACCES", "cat OK settings", "write EACCES", "write OK"}))
        << r.all();
  } else {
    // Every directory above the mask is pinned (its own mount): moves out of
    // it cross mounts. A rename or removal of a mount point (EBUSY or EXDEV
    // from the kernel) is answered EROFS by the supervisor; link is not.
    EXPECT_EQ(r.out, lines({"cat EACCES", "rename EROFS", "rename EROFS", "unlink EROFS", "rename EROFS",
                            "rename EROFS", "link EXDEV", "cat OK settings", "write OK", "write OK"}))
        << r.all();
  }
  EXPECT_EQ(r.all().find("SECRET"), std::string::npos);
  EXPECT_TRUE(fs::exists(ws.path() + "/config/keys/secret.txt"));
}

TEST(EscapeFilesystem, DotDotAndTheRootShowOnlyTheSandbox) {
  temp_dir ws;
  install_probe(ws);
  ws.write("file.txt", "here\n");
  std::string climb = "../../../../../../../..";
  // /var itself exists (it holds only the run's private /var/tmp, docs/workloads.md); nothing of the host's does.
  auto r = run_probe(ws, {"stat", climb + "/home", "+", "stat", climb + "/root", "+", "stat", climb + "/var/log", "+",
                          "stat", "/run", "+", "stat", "/boot", "+", "stat", climb + "/usr/bin/env", "+", "cat",
                          climb + ws.path() + "/file.txt", "+", "list", climb + "/root"});
  EXPECT_EQ(r.exit_code, 0) << r.all();
  if (ran_os_sandbox(r)) {
    // No private view: the host's paths exist (stat), their contents are not granted.
    expect_claim(r, "filesystem_read", "enforced", "no private view");
    EXPECT_EQ(r.out, lines({"stat OK", "stat OK", "stat OK", "stat OK", "stat OK", "stat OK", "cat OK here",
                            "list EACCES"}))
        << r.all();
  } else {
    EXPECT_EQ(r.out, lines({"stat ENOENT", "stat ENOENT", "stat ENOENT", "stat ENOENT", "stat ENOENT", "stat OK",
                            "cat OK here", "list ENOENT"}))
        << r.all();
  }
}

TEST(EscapeFilesystem, HostTmpIsNotTheSandboxTmp) {
  temp_dir ws, sibling;
  install_probe(ws);
  std::string host_file = sibling.write("host-only.txt", "host\n");
  std::string scratch = "/tmp/cordon-escape-" + unique_token();
  auto r = run_probe(ws, {"stat", host_file, "+", "stat", sibling.path(), "+", "create", scratch, "+", "list", "/tmp"});
  EXPECT_EQ(r.exit_code, 0) << r.all();
  if (ran_os_sandbox(r)) {
    // No private /tmp: the host's is there and neither listed nor written;
    // TMPDIR names the run's own directory (OsSandbox.* writes there).
    expect_claim(r, "environment", "enforced", "TMPDIR names the run's temporary directory");
    EXPECT_EQ(r.out, lines({"stat OK", "stat OK", "create EACCES", "list EACCES"})) << r.all();
    EXPECT_FALSE(fs::exists(scratch));
    return;
  }
  // Inside, /tmp holds the workspace's mount point and what the command made.
  std::string ws_top = fs::path(ws.path()).filename().string();
  std::string made = fs::path(scratch).filename().string();
  std::string listing = ws_top < made ? ws_top + "," + made : made + "," + ws_top;
  EXPECT_EQ(r.out, lines({"stat ENOENT", "stat ENOENT", "create OK", "list OK " + listing})) << r.all();
  EXPECT_FALSE(fs::exists(scratch));  // the private /tmp went away with the run
}

TEST(EscapeFilesystem, HostDevShmIsNotTheSandboxDevShm) {
  std::string host_name = "/dev/shm/cordon-escape-" + unique_token();
  {
    std::ofstream(host_name) << "host\n";
  }
  if (!fs::exists(host_name)) GTEST_SKIP() << "no /dev/shm on this host";
  temp_dir ws;
  install_probe(ws);
  std::string inside_name = "/dev/shm/cordon-escape-" + unique_token();
  auto r = run_probe(ws, {"stat", host_name, "+", "create", inside_name, "+", "list", "/dev/shm"});
  fs::remove(host_name);
  EXPECT_EQ(r.exit_code, 0) << r.all();
  if (ran_os_sandbox(r)) {
    // The host's /dev: its /dev/shm is seen, not listed, not written.
    expect_claim(r, "devices", "enforced", "the host's /dev");
    EXPECT_EQ(r.out, lines({"stat OK", "create EACCES", "list EACCES"})) << r.all();
    EXPECT_FALSE(fs::exists(inside_name));
    return;
  }
  EXPECT_EQ(r.out, lines({"stat ENOENT", "create OK", "list OK " + fs::path(inside_name).filename().string()}))
      << r.all();
  EXPECT_FALSE(fs::exists(inside_name));
}

// The host file opened for writing is one nobody executes: without a mount
// namespace, a program another process runs gives ETXTBSY before Landlock.
TEST(EscapeFilesystem, WritesOutsideTheWorkspaceAreRefused) {
  temp_dir ws;
  install_probe(ws);
  auto r = run_probe(ws, {"create", "/etc/cordon-escape", "+", "create", "/usr/cordon-escape", "+", "open-write",
                          "/etc/passwd", "+", "open-write", "/usr/lib/os-release", "+", "create", "inside.txt"});
  EXPECT_EQ(r.exit_code, 0) << r.all();
  if (ran_os_sandbox(r)) {
    expect_claim(r, "filesystem_write", "enforced|partial", "write rules for writable roots only");
    EXPECT_EQ(r.out, lines({"create " + os_sandbox_write_refusal("/etc"),
                            "create " + os_sandbox_write_refusal("/usr"),
                            "open-write " + os_sandbox_write_refusal("/etc"),
                            "open-write " + os_sandbox_write_refusal("/usr/lib"), "create OK"}))
        << r.all();
  } else {
    EXPECT_EQ(r.out, lines({"create EROFS", "create EROFS", "open-write " + host_file_write_refusal(),
                            "open-write " + host_file_write_refusal(), "create OK"}))
        << r.all();
  }
  EXPECT_FALSE(fs::exists("/etc/cordon-escape"));
}

TEST(EscapeFilesystem, ProcSelfRootIsTheSandboxRoot) {
  temp_dir ws;
  install_probe(ws);
  ws.write("file.txt", "here\n");
  auto r = run_probe(ws, {"readlink", "/proc/self/root", "+", "stat", "/proc/self/root/home", "+", "stat",
                          "/proc/self/root/proc/self/root/root", "+", "cat",
                          "/proc/self/root" + ws.path() + "/file.txt"});
  EXPECT_EQ(r.exit_code, 0) << r.all();
  if (ran_os_sandbox(r)) {
    // The root is the host's (no private view); what it holds is still Landlock's to grant.
    expect_claim(r, "filesystem_read", "enforced", "no private view");
    EXPECT_EQ(r.out, lines({"readlink OK /", "stat OK", "stat OK", "cat OK here"})) << r.all();
  } else {
    EXPECT_EQ(r.out, lines({"readlink OK /", "stat ENOENT", "stat ENOENT", "cat OK here"})) << r.all();
  }
}

TEST(EscapeFilesystem, ProcOfPid1IsClosed) {
  temp_dir ws;
  install_probe(ws);
  // PID 1 is cordon's init, which holds the host environment; it is not
  // dumpable, so its /proc files belong to root. Root (uid 0 inside too) may
  // list the names in fd/ and open map_files/, but every link and read is
  // still checked as ptrace access and refused.
  auto r = run_probe(ws, {"readlink", "/proc/1/root", "+", "readlink", "/proc/1/cwd", "+", "readlink", "/proc/1/fd/0",
                          "+", "open-read", "/proc/1/fd/0", "+", "open-read", "/proc/1/mem", "+", "open-read",
                          "/proc/1/environ", "+", "list", "/proc/1/map_files", "+", "stat", "/proc/1/fd", "+",
                          "open-read", "/proc/1/stat", "+", "readlink", "/proc/self/cwd"});
  EXPECT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(r.out, lines({"readlink EACCES", "readlink EACCES", "readlink EACCES", "open-read EACCES",
                          "open-read EACCES", "open-read EACCES",
                          running_as_root() ? "list readdir EACCES" : "list EACCES", "stat OK", "open-read OK",
                          "readlink OK " + ws.path()}))
      << r.all();
}

TEST(EscapeFilesystem, OtherProcessesProcEntriesAreInvisible) {
  temp_dir ws;
  install_probe(ws);
  host_process host;
  std::string p = "/proc/" + std::to_string(host.pid());
  std::string me = "/proc/" + std::to_string(::getpid());
  auto r = run_probe(ws, {"stat", p, "+", "open-read", p + "/environ", "+", "readlink", me + "/root", "+",
                          "list-pids", "+", "open-read", "/proc/self/status"});
  EXPECT_EQ(r.exit_code, 0) << r.all();
  if (ran_os_sandbox(r)) {
    // No PID namespace: the host's processes are listed, and Landlock's
    // domain refuses the ptrace access their environ and root links need.
    expect_claim(r, "privilege", "enforced", "the host's processes are visible in /proc");
    expect_claim(r, "privilege", "enforced", "no ptrace of processes outside it");
    std::vector<std::string> got;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);) got.push_back(line);
    ASSERT_EQ(got.size(), 5u) << r.all();
    EXPECT_EQ(got[0], "stat OK");
    EXPECT_EQ(got[1], "open-read EACCES");
    EXPECT_EQ(got[2], "readlink EACCES");
    EXPECT_NE(("," + got[3] + ",").find("," + std::to_string(host.pid()) + ","), std::string::npos) << got[3];
    EXPECT_EQ(got[4], "open-read OK");
  } else {
    // Only PID 1 (cordon's init) besides the probe itself exists in this PID namespace.
    EXPECT_EQ(r.out, lines({"stat ENOENT", "open-read ENOENT", "readlink ENOENT", "list-pids OK 1", "open-read OK"}))
        << r.all();
  }
  EXPECT_TRUE(host.alive());
}

TEST(EscapeFilesystem, OpenByHandleAtIsRefused) {
  temp_dir ws;
  install_probe(ws);
  ws.write("file.txt", "here\n");
  auto r = run_probe(ws, {"open-by-handle", "/", "+", "open-by-handle", ".", "+", "name-to-handle", "file.txt", "+",
                          "cat", "file.txt"});
  EXPECT_EQ(r.exit_code, 0) << r.all();
  // Under linux-os-sandbox "/" itself is not granted: the probe cannot open the mount to try.
  EXPECT_EQ(r.out, lines({ran_os_sandbox(r) ? "open-by-handle open EACCES" : "open-by-handle EPERM",
                          "open-by-handle EPERM", "name-to-handle EPERM", "cat OK here"}))
      << r.all();
}

TEST(EscapeFilesystem, DeviceNodesCannotBeMade) {
  temp_dir ws;
  install_probe(ws);
  auto r = run_probe(ws, {"mknod-char", "null2", "+", "mknod-block", "sda", "+", "mkfifo", "fifo", "+", "mode", "fifo"});
  EXPECT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(r.out, lines({"mknod-char EPERM", "mknod-block EPERM", "mkfifo OK", "mode OK 0644"})) << r.all();
  EXPECT_FALSE(fs::exists(ws.path() + "/sda"));
}

TEST(EscapeFilesystem, DevHoldsOnlyHarmlessDevices) {
  temp_dir ws;
  install_probe(ws);
  auto r = run_probe(ws, {"list", "/dev", "+", "list", "/dev/pts", "+", "open-read", "/dev/mem", "+", "open-read",
                          "/dev/kmsg", "+", "open-read", "/dev/sda", "+", "create", "/dev/evil", "+", "statvfs",
                          "/dev", "+", "open-write", "/dev/null", "+", "open-read", "/dev/urandom"});
  EXPECT_EQ(r.exit_code, 0) << r.all();
  if (ran_os_sandbox(r)) {
    // The host's /dev: not listed, its other nodes seen but not opened
    // (Landlock's device rights: null, zero, full, random, urandom).
    expect_claim(r, "devices", "enforced", "other nodes are listed but not opened");
    auto seen = [](const char* node) { return std::string(fs::exists(node) ? "EACCES" : "ENOENT"); };
    std::string out = r.out;
    const std::string statvfs_line = "statvfs OK ";
    auto at = out.find(statvfs_line);
    ASSERT_NE(at, std::string::npos) << r.all();
    out.erase(at + statvfs_line.size(), out.find('\n', at) - at - statvfs_line.size());  // the host's own flags
    EXPECT_EQ(out, lines({"list EACCES", "list EACCES", "open-read " + seen("/dev/mem"),
                          "open-read " + seen("/dev/kmsg"), "open-read " + seen("/dev/sda"),
                          "create " + os_sandbox_write_refusal("/dev"), statvfs_line, "open-write OK",
                          "open-read OK"}))
        << r.all();
    return;
  }
  EXPECT_EQ(r.out, lines({"list OK fd,full,null,ptmx,pts,random,shm,stderr,stdin,stdout,tty,urandom,zero",
                          "list OK ptmx",  // a new devpts instance: none of the host's terminals
                          "open-read ENOENT", "open-read ENOENT", "open-read ENOENT", "create EROFS",
                          "statvfs OK ro,nosuid", "open-write OK", "open-read OK"}))
      << r.all();
}

TEST(EscapeFilesystem, SysIsReadOnly) {
  temp_dir ws;
  install_probe(ws);
  const char* knob = "/sys/kernel/mm/transparent_hugepage/enabled";
  if (!fs::exists(knob)) GTEST_SKIP() << "this kernel has no " << knob;
  std::string before = slurp(knob);
  auto r = run_probe(ws, {"open-write", knob, "+", "open-write", "/sys/kernel/uevent_helper", "+", "mkdir",
                          "/sys/fs/cgroup/cordon-escape", "+", "statvfs", "/sys", "+", "open-read", knob});
  EXPECT_EQ(r.exit_code, 0) << r.all();
  if (ran_os_sandbox(r)) {
    // The host's /sys, read-only by Landlock (no write rule there), not by a mount.
    expect_claim(r, "filesystem_write", "enforced|partial", "write rules for writable roots only");
    const std::string refused = os_sandbox_write_refusal("/sys");
    std::vector<std::string> got;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);) got.push_back(line);
    ASSERT_EQ(got.size(), 5u) << r.all();
    EXPECT_EQ(got[0], "open-write " + refused);
    EXPECT_EQ(got[1], "open-write " + (fs::exists("/sys/kernel/uevent_helper") ? refused : std::string("ENOENT")));
    EXPECT_EQ(got[2], "mkdir " + os_sandbox_write_refusal("/sys/fs/cgroup"));
    EXPECT_EQ(got[3].rfind("statvfs OK ", 0), 0u) << got[3];  // the host's own mount flags
    EXPECT_EQ(got[4], "open-read OK");
    EXPECT_EQ(slurp(knob), before);
    EXPECT_FALSE(fs::exists("/sys/fs/cgroup/cordon-escape"));
    return;
  }
  EXPECT_EQ(r.out, lines({"open-write " + host_file_write_refusal("/sys"),
                          "open-write " + std::string(fs::exists("/sys/kernel/uevent_helper")
                                                          ? host_file_write_refusal("/sys")
                                                          : "ENOENT"),
                          "mkdir EROFS", "statvfs OK ro,nosuid,nodev", "open-read OK"}))
      << r.all();
  EXPECT_EQ(slurp(knob), before);
  EXPECT_FALSE(fs::exists("/sys/fs/cgroup/cordon-escape"));
}

TEST(EscapeFilesystem, CgroupsCannotBeLeftOrReconfigured) {
  temp_dir ws;
  install_probe(ws);
  std::vector<std::string> args;
  std::vector<std::string> expected, os_expected;
  // Moving into another cgroup would leave the run's limits; release_agent is the classic v1 escape.
  for (const char* file : {"/sys/fs/cgroup/memory/cgroup.procs", "/sys/fs/cgroup/pids/cgroup.procs",
                           "/sys/fs/cgroup/memory/release_agent", "/sys/fs/cgroup/cgroup.procs"}) {
    if (!fs::exists(file)) continue;
    args.insert(args.end(), {"open-write", file, "+"});
    expected.push_back("open-write " + host_file_write_refusal(file));
    os_expected.push_back("open-write " + os_sandbox_write_refusal(file));
  }
  if (args.empty()) GTEST_SKIP() << "no cgroup hierarchy under /sys/fs/cgroup";
  args.insert(args.end(), {"mkdir", "/sys/fs/cgroup/cordon-escape", "+", "open-read", "/proc/self/cgroup"});
  expected.insert(expected.end(), {"mkdir EROFS", "open-read OK"});
  os_expected.insert(os_expected.end(), {"mkdir " + os_sandbox_write_refusal("/sys/fs/cgroup"), "open-read OK"});
  auto r = run_probe(ws, args);
  EXPECT_EQ(r.exit_code, 0) << r.all();
  if (ran_os_sandbox(r)) {
    // The host's cgroup tree, not writable by Landlock (no write rule there).
    expect_claim(r, "filesystem_write", "enforced|partial", "write rules for writable roots only");
    EXPECT_EQ(r.out, lines(os_expected)) << r.all();
  } else {
    EXPECT_EQ(r.out, lines(expected)) << r.all();
  }
  EXPECT_FALSE(fs::exists("/sys/fs/cgroup/cordon-escape"));
}

TEST(EscapeFilesystem, ProcSysAndSysrqAreReadOnly) {
  temp_dir ws;
  install_probe(ws);
  std::string core_pattern = slurp("/proc/sys/kernel/core_pattern");
  // The sandbox's /proc is a read-only mount of a read-only superblock: every
  // write is EROFS, for root and for other users alike, before any permission
  // check. Some kernels are built without sysrq or /proc/kcore: then the new
  // /proc has none either. /proc/kcore is 0400 root: another user fails the
  // mode check (EACCES); root passes it and fails open_kcore's CAP_SYS_RAWIO
  // check (EPERM), the sandbox holding no capability (Debian's 6.1, docs/kernels.md).
  std::string sysrq = fs::exists("/proc/sysrq-trigger") ? "EROFS" : "ENOENT";
  std::string kcore = !fs::exists("/proc/kcore") ? "ENOENT" : ::getuid() == 0 ? "EPERM" : "EACCES";
  auto r = run_probe(ws, {"open-write", "/proc/sys/kernel/core_pattern", "+", "open-write", "/proc/sys/vm/drop_caches",
                          "+", "open-write", "/proc/sysrq-trigger", "+", "open-read", "/proc/kcore", "+",
                          "write-uid-map", "+", "cat", "/proc/sys/kernel/ostype"});
  EXPECT_EQ(r.exit_code, 0) << r.all();
  if (ran_os_sandbox(r)) {
    // The host's /proc: Landlock grants it read, not write.
    expect_claim(r, "filesystem_read", "enforced", "/proc");
    const std::string refused = os_sandbox_write_refusal("/proc/sys");
    EXPECT_EQ(r.out, lines({"open-write " + refused, "open-write " + refused,
                            "open-write " + std::string(fs::exists("/proc/sysrq-trigger") ? refused : "ENOENT"),
                            "open-read " + kcore, "write-uid-map " + os_sandbox_write_refusal("/proc"),
                            "cat OK Linux"}))
        << r.all();
  } else {
    EXPECT_EQ(r.out, lines({"open-write EROFS", "open-write EROFS", "open-write " + sysrq, "open-read " + kcore,
                            "write-uid-map EROFS", "cat OK Linux"}))
        << r.all();
  }
  EXPECT_EQ(slurp("/proc/sys/kernel/core_pattern"), core_pattern);
}

TEST(EscapeFilesystem, DeniedCredentialsStayHiddenUnderFullRead) {
  temp_dir home("/var/tmp"), ws("/var/tmp");
  install_probe(ws);
  home.write(".ssh/id_ed25519", "PRIVATE KEY\n");
  home.write(".aws/credentials", "aws_secret_access_key = x\n");
  home.write(".netrc", "machine example.com password p\n");
  home.write("notes.txt", "notes\n");
  auto r = run_probe(ws, {"cat", home.path() + "/.ssh/id_ed25519", "+", "list", home.path() + "/.ssh", "+", "cat",
                          home.path() + "/.aws/credentials", "+", "cat", home.path() + "/.netrc", "+", "create",
                          home.path() + "/new.txt", "+", "cat", home.path() + "/notes.txt"},
                     {"--profile", "offline"}, {"HOME=" + home.path()});
  EXPECT_EQ(r.exit_code, 0) << r.all();
  // A home outside the writable roots: a read-only mount, or no Landlock write rule.
  EXPECT_EQ(r.out, lines({"cat EACCES", "list EACCES", "cat EACCES", "cat EACCES",
                          ran_os_sandbox(r) ? "create EACCES" : "create EROFS", "cat OK notes"}))
      << r.all();
  EXPECT_EQ(r.all().find("PRIVATE KEY"), std::string::npos);
}

}  // namespace
}  // namespace cordon::test::escape
