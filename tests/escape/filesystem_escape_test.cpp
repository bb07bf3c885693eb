// Filesystem escapes: links, renames, /proc roots, file handles, device nodes,
// kernel files under /proc and /sys. Each attempt is paired with the allowed
// action next to it.
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

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
  EXPECT_EQ(r.out, lines({"cat ENOENT", "cat OK inside"})) << r.all();
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
  EXPECT_EQ(r.out, lines({"link EXDEV", "link EXDEV", "link OK", "cat OK a"})) << r.all();
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
  EXPECT_EQ(r.out, lines({"link EXDEV", "open-write EROFS", "write OK"})) << r.all();
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
  // temporary file beside the target) meets the mount point.
  auto r = run_probe(ws, {"create", ".git/hooks/pre-commit", "+", "rename", ".git/hooks", ".git/hooks-old", "+",
                          "unlink", ".git/config", "+", "rename", "evil-config", ".git/config", "+", "rename",
                          ".git/config.lock", ".git/config", "+", "create", ".git/COMMIT_EDITMSG"});
  EXPECT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(r.out, lines({"create EROFS", "rename EBUSY", "unlink EBUSY", "rename EXDEV", "rename EBUSY", "create OK"}))
      << r.all();
  EXPECT_FALSE(fs::exists(ws.path() + "/.git/hooks/pre-commit"));
  EXPECT_EQ(slurp(ws.path() + "/.git/config").find("hooksPath"), std::string::npos);
}

TEST(EscapeFilesystem, RenamingTheParentOfAProtectedDirectoryIsRefused) {
  temp_dir ws;
  install_probe(ws);
  ASSERT_EQ(host_command({"git", "init", "-q", ws.path() + "/nested/deeper/keep"}), 0);
  auto r = run_probe(ws, {"rename", "nested", "moved", "+", "rename", "nested/deeper", "nested/d2", "+", "rename",
                          "nested/deeper/keep/.git", "nested/deeper/keep/.git-orig", "+", "mkdir", "other", "+",
                          "rename", "other", "other2"});
  EXPECT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(r.out, lines({"rename EBUSY", "rename EBUSY", "rename EBUSY", "mkdir OK", "rename OK"})) << r.all();
  EXPECT_TRUE(fs::is_directory(ws.path() + "/nested/deeper/keep/.git/hooks"));
  EXPECT_TRUE(fs::is_directory(ws.path() + "/other2"));
}

// A .git/hooks or .git/config that is a symlink: the protection must hold for
// the name git uses, not only for what the link pointed to at compile time.
// Refusing the run (125, nothing ran) is a sound answer too.
void expect_symlinked_metadata_held(const temp_dir& ws, const run_result& r, const std::string& name,
                                    const std::string& link_target) {
  std::string path = ws.path() + "/.git/" + name;
  EXPECT_TRUE(fs::is_symlink(path)) << path << " was replaced by the command: a real escape\n" << r.all();
  if (fs::is_symlink(path)) {
    EXPECT_EQ(fs::read_symlink(path).string(), link_target);
  }
  if (r.exit_code == 125) {
    EXPECT_FALSE(fs::exists(ws.path() + "/notes.txt")) << r.all();
  } else {
    EXPECT_EQ(r.exit_code, 0) << r.all();
    EXPECT_TRUE(fs::exists(ws.path() + "/notes.txt")) << r.all();
  }
}

TEST(EscapeFilesystem, SymlinkedHooksDirectoryCannotBeSwappedForARealOne) {
  temp_dir ws;
  install_probe(ws);
  ASSERT_EQ(host_command({"git", "init", "-q", ws.path()}), 0);
  fs::remove_all(ws.path() + "/.git/hooks");
  ws.mkdir("shared-hooks");
  ASSERT_EQ(::symlink("../shared-hooks", (ws.path() + "/.git/hooks").c_str()), 0);
  auto r = run_probe(ws, {"unlink", ".git/hooks", "+", "mkdir", ".git/hooks", "+", "create", ".git/hooks/pre-commit",
                          "+", "create", "shared-hooks/pre-commit", "+", "create", "notes.txt"});
  EXPECT_FALSE(fs::exists(ws.path() + "/.git/hooks/pre-commit")) << "a hook was planted: a real escape\n" << r.all();
  EXPECT_FALSE(fs::exists(ws.path() + "/shared-hooks/pre-commit")) << r.all();
  expect_symlinked_metadata_held(ws, r, "hooks", "../shared-hooks");
}

TEST(EscapeFilesystem, SymlinkedHooksDirectoryOutsideTheWorkspaceCannotBeSwapped) {
  temp_dir ws, hooks("/var/tmp");
  install_probe(ws);
  ASSERT_EQ(host_command({"git", "init", "-q", ws.path()}), 0);
  fs::remove_all(ws.path() + "/.git/hooks");
  ASSERT_EQ(::symlink(hooks.path().c_str(), (ws.path() + "/.git/hooks").c_str()), 0);
  auto r = run_probe(ws, {"unlink", ".git/hooks", "+", "mkdir", ".git/hooks", "+", "create", ".git/hooks/pre-commit",
                          "+", "create", "notes.txt"});
  EXPECT_FALSE(fs::exists(ws.path() + "/.git/hooks/pre-commit")) << "a hook was planted: a real escape\n" << r.all();
  expect_symlinked_metadata_held(ws, r, "hooks", hooks.path());
}

TEST(EscapeFilesystem, SymlinkedGitConfigCannotBeSwappedForARealOne) {
  temp_dir ws;
  install_probe(ws);
  ASSERT_EQ(host_command({"git", "init", "-q", ws.path()}), 0);
  fs::rename(ws.path() + "/.git/config", ws.path() + "/shared-config");
  ASSERT_EQ(::symlink("../shared-config", (ws.path() + "/.git/config").c_str()), 0);
  std::string before = slurp(ws.path() + "/shared-config");
  // core.fsmonitor runs a command on the host at the next `git status`.
  auto r = run_probe(ws, {"unlink", ".git/config", "+", "write", ".git/config",
                          "[core]\n\tfsmonitor = \"touch /tmp/pwned; false\"\n", "+", "open-write",
                          "shared-config", "+", "create", "notes.txt"});
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
  auto r = run_probe(ws, {"create", ".githooks/pre-commit", "+", "create", "notes.txt"});
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
                          "config/copy.txt", "+", "cat", "config/settings.txt", "+", "write", "config/new.txt", "new"},
                     {"--policy", policy});
  EXPECT_EQ(r.exit_code, 0) << r.all();
  // Every directory above the mask is pinned (its own mount): moves out of it cross mounts.
  EXPECT_EQ(r.out, lines({"cat EACCES", "rename EBUSY", "rename EBUSY", "unlink EBUSY", "rename EBUSY",
                          "rename EXDEV", "link EXDEV", "cat OK settings", "write OK"}))
      << r.all();
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
                          climb + ws.path() + "/file.txt"});
  EXPECT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(r.out, lines({"stat ENOENT", "stat ENOENT", "stat ENOENT", "stat ENOENT", "stat ENOENT", "stat OK",
                          "cat OK here"}))
      << r.all();
}

TEST(EscapeFilesystem, HostTmpIsNotTheSandboxTmp) {
  temp_dir ws, sibling;
  install_probe(ws);
  std::string host_file = sibling.write("host-only.txt", "host\n");
  std::string scratch = "/tmp/cordon-escape-" + unique_token();
  auto r = run_probe(ws, {"stat", host_file, "+", "stat", sibling.path(), "+", "create", scratch, "+", "list", "/tmp"});
  EXPECT_EQ(r.exit_code, 0) << r.all();
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
  EXPECT_EQ(r.out, lines({"stat ENOENT", "create OK", "list OK " + fs::path(inside_name).filename().string()}))
      << r.all();
  EXPECT_FALSE(fs::exists(inside_name));
}

TEST(EscapeFilesystem, WritesOutsideTheWorkspaceAreRefused) {
  temp_dir ws;
  install_probe(ws);
  auto r = run_probe(ws, {"create", "/etc/cordon-escape", "+", "create", "/usr/cordon-escape", "+", "open-write",
                          "/etc/passwd", "+", "open-write", "/usr/bin/env", "+", "create", "inside.txt"});
  EXPECT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(r.out, lines({"create EROFS", "create EROFS", "open-write " + host_file_write_refusal(),
                          "open-write " + host_file_write_refusal(), "create OK"}))
      << r.all();
  EXPECT_FALSE(fs::exists("/etc/cordon-escape"));
}

TEST(EscapeFilesystem, ProcSelfRootIsTheSandboxRoot) {
  temp_dir ws;
  install_probe(ws);
  ws.write("file.txt", "here\n");
  auto r = run_probe(ws, {"readlink", "/proc/self/root", "+", "stat", "/proc/self/root/home", "+", "stat",
                          "/proc/self/root/proc/self/root/root", "+", "cat", "/proc/self/root" + ws.path() + "/file.txt"});
  EXPECT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(r.out, lines({"readlink OK /", "stat ENOENT", "stat ENOENT", "cat OK here"})) << r.all();
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
  // Only PID 1 (cordon's init) besides the probe itself exists in this PID namespace.
  EXPECT_EQ(r.out, lines({"stat ENOENT", "open-read ENOENT", "readlink ENOENT", "list-pids OK 1", "open-read OK"}))
      << r.all();
  EXPECT_TRUE(host.alive());
}

TEST(EscapeFilesystem, OpenByHandleAtIsRefused) {
  temp_dir ws;
  install_probe(ws);
  ws.write("file.txt", "here\n");
  auto r = run_probe(ws, {"open-by-handle", "/", "+", "open-by-handle", ".", "+", "name-to-handle", "file.txt", "+",
                          "cat", "file.txt"});
  EXPECT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(r.out, lines({"open-by-handle EPERM", "open-by-handle EPERM", "name-to-handle EPERM", "cat OK here"}))
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
  std::vector<std::string> expected;
  // Moving into another cgroup would leave the run's limits; release_agent is the classic v1 escape.
  for (const char* file : {"/sys/fs/cgroup/memory/cgroup.procs", "/sys/fs/cgroup/pids/cgroup.procs",
                           "/sys/fs/cgroup/memory/release_agent", "/sys/fs/cgroup/cgroup.procs"}) {
    if (!fs::exists(file)) continue;
    args.insert(args.end(), {"open-write", file, "+"});
    expected.push_back("open-write " + host_file_write_refusal(file));
  }
  if (args.empty()) GTEST_SKIP() << "no cgroup hierarchy under /sys/fs/cgroup";
  args.insert(args.end(), {"mkdir", "/sys/fs/cgroup/cordon-escape", "+", "open-read", "/proc/self/cgroup"});
  expected.insert(expected.end(), {"mkdir EROFS", "open-read OK"});
  auto r = run_probe(ws, args);
  EXPECT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(r.out, lines(expected)) << r.all();
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
  EXPECT_EQ(r.out, lines({"open-write EROFS", "open-write EROFS", "open-write " + sysrq, "open-read " + kcore,
                          "write-uid-map EROFS", "cat OK Linux"}))
      << r.all();
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
  EXPECT_EQ(r.out, lines({"cat EACCES", "list EACCES", "cat EACCES", "cat EACCES", "create EROFS", "cat OK notes"}))
      << r.all();
  EXPECT_EQ(r.all().find("PRIVATE KEY"), std::string::npos);
}

}  // namespace
}  // namespace cordon::test::escape
