// Deferred execution (docs/deferred-execution.md): files in a writable root
// that the host's git, shell or desktop later runs or trusts. What exists at
// launch is read-only; what the command creates or changes is a finding in
// the report (and a violation), whatever it did to the mtimes. Each test
// pairs the attempt with the git or file work that must keep working.
#include <algorithm>
#include <filesystem>
#include <fstream>

#include <sys/stat.h>
#include <unistd.h>

#include <ctime>

#include "escape_support.h"

namespace cordon::test::escape {
namespace {
namespace fs = std::filesystem;

const std::string kGit = "git -c user.name=t -c user.email=t@t -c init.defaultBranch=main ";

std::string findings_text(const run_result& r) {
  std::string out;
  if (!r.report.is_object() || !r.report.contains("deferred_execution")) return "(no deferred_execution)\n" + r.all();
  for (const auto& f : r.report["deferred_execution"]["findings"]) {
    out += f.value("kind", "") + " " + f.value("path", "") + " " + f.value("key", "") + "\n";
  }
  return out;
}

bool has_finding(const run_result& r, const std::string& kind, const std::string& path, const std::string& key = "") {
  if (!r.report.is_object() || !r.report.contains("deferred_execution")) return false;
  for (const auto& f : r.report["deferred_execution"]["findings"]) {
    if (f.value("kind", "") == kind && f.value("path", "") == path && (key.empty() || f.value("key", "") == key)) {
      return true;
    }
  }
  return false;
}

bool has_violation(const run_result& r, const std::string& kind) {
  if (!r.report.is_object() || !r.report.contains("violations")) return false;
  const auto& v = r.report["violations"];
  return std::any_of(v.begin(), v.end(), [&](const nlohmann::json& e) { return e.value("kind", "") == kind; });
}

void host_repository(const temp_dir& ws) {
  ASSERT_EQ(host_command({"git", "init", "-q", "-b", "main", ws.path()}), 0);
  ws.write("README", "hello\n");
  ASSERT_EQ(host_command({"git", "-C", ws.path(), "add", "README"}), 0);
  ASSERT_EQ(host_command({"git", "-C", ws.path(), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m",
                          "first"}),
            0);
}

// The issue's first case: a nested repository made during the run, with
// core.fsmonitor and a hooks path, reachable from the top-level index by a
// gitlink, and the parent directory's mtime put back.
TEST(EscapeDeferred, NestedRepositoryWithFsmonitorAndGitlinkIsReported) {
  temp_dir ws;
  host_repository(ws);
  const std::string script = "T=$(stat -c %y .) && " + kGit + "init -q sub && " + kGit +
                             "-C sub config core.fsmonitor 'touch /tmp/pwned' && " + kGit +
                             "-C sub config core.hooksPath ../h && " + kGit + "-C sub commit -q --allow-empty -m x && " +
                             kGit + "add sub && " + kGit + "commit -q -m top && touch -d \"$T\" . && echo done";
  auto r = run_sh(ws.path(), script, {"--summary"});
  ASSERT_EQ(r.exit_code, 0) << r.all();  // nested git init, git add and git commit all work
  EXPECT_EQ(r.out, "done\n");
  EXPECT_TRUE(has_finding(r, "repository_created", ws.path() + "/sub/.git")) << findings_text(r);
  EXPECT_TRUE(has_finding(r, "executable_config", ws.path() + "/sub/.git/config", "core.fsmonitor"))
      << findings_text(r);
  EXPECT_TRUE(has_finding(r, "hooks_path", ws.path() + "/sub/.git/config", "core.hookspath")) << findings_text(r);
  EXPECT_TRUE(has_finding(r, "gitlink_added", "sub")) << findings_text(r);
  EXPECT_TRUE(has_violation(r, "repository_created")) << r.report.dump(2);
  EXPECT_TRUE(has_violation(r, "gitlink_added")) << r.report.dump(2);
  EXPECT_EQ(report_schema_verdict(r.report), "valid");
  EXPECT_NE(r.err.find("cordon:   deferred    executable_config " + ws.path() + "/sub/.git/config core.fsmonitor"),
            std::string::npos)
      << r.err;
}

// The second: HEAD, objects/, refs/ and config written into a directory that
// existed at launch: git treats it as a bare repository when run inside it.
TEST(EscapeDeferred, ImplicitBareRepositoryInAnExistingDirectoryIsReported) {
  temp_dir ws;
  host_repository(ws);
  ws.write("tools/build.sh", "true\n");
  const std::string script =
      "cd tools && mkdir -p objects refs/heads && printf 'ref: refs/heads/main\\n' > HEAD && "
      "printf '[core]\\n\\tbare = true\\n\\tfsmonitor = touch /tmp/pwned\\n' > config && touch -d @0 .. . && "
      "echo made";
  auto r = run_sh(ws.path(), script);
  ASSERT_EQ(r.exit_code, 0) << r.all();  // writing into the workspace works
  EXPECT_EQ(r.out, "made\n");
  EXPECT_TRUE(has_finding(r, "repository_created", ws.path() + "/tools")) << findings_text(r);
  EXPECT_TRUE(has_finding(r, "executable_config", ws.path() + "/tools/config", "core.fsmonitor")) << findings_text(r);
  EXPECT_TRUE(has_violation(r, "executable_config"));
}

// The third: a `.git` file (--separate-git-dir) naming a git directory inside
// the workspace: that directory's config and hooks are read-only as a .git
// directory's are, and git commit still works through the pointer.
TEST(EscapeDeferred, TheGitDirectoryAGitFileNamesIsProtected) {
  temp_dir ws;
  install_probe(ws);
  ASSERT_EQ(host_command({"git", "init", "-q", "--separate-git-dir", ws.path() + "/meta", ws.path() + "/work"}), 0);
  const std::string config_before = [&] {
    std::ifstream in(ws.path() + "/meta/config");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  auto r = run_probe(ws, {"write", "meta/config", "[core]\n\tfsmonitor = touch /tmp/pwned\n", "+", "create",
                          "meta/hooks/pre-commit", "+", "write", "work/file", "x"});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(r.out, lines({"write EROFS", "create EROFS", "write OK"})) << r.all();
  std::ifstream in(ws.path() + "/meta/config");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), config_before);
  EXPECT_FALSE(fs::exists(ws.path() + "/meta/hooks/pre-commit"));
  auto commit = run_sh(ws.path(), "cd work && " + kGit + "add file && " + kGit + "commit -q -m x && echo committed");
  EXPECT_EQ(commit.exit_code, 0) << commit.all();
  EXPECT_EQ(commit.out, "committed\n");
}

// include.path: an existing included file in the workspace is read-only; one
// that does not exist yet is watched, and creating it is a finding. git
// commit in the repository still works.
TEST(EscapeDeferred, IncludedConfigIsProtectedOrWatched) {
  temp_dir ws;
  install_probe(ws);
  host_repository(ws);
  ws.write("shared.gitconfig", "[user]\n\tname = t\n");
  ASSERT_EQ(host_command({"git", "-C", ws.path(), "config", "--add", "include.path", "../shared.gitconfig"}), 0);
  ASSERT_EQ(host_command({"git", "-C", ws.path(), "config", "--add", "include.path", "../later.gitconfig"}), 0);
  auto r = run_probe(ws, {"write", "shared.gitconfig", "[core]\n\tpager = touch /tmp/pwned\n", "+", "write",
                          "later.gitconfig", "[core]\n\tpager = touch /tmp/pwned\n", "+", "write", "README", "x"});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(r.out, lines({"write EROFS", "write OK", "write OK"})) << r.all();
  EXPECT_TRUE(has_finding(r, "repository_redirect_created", ws.path() + "/later.gitconfig")) << findings_text(r);
  auto commit = run_sh(ws.path(), kGit + "commit -q -am x && echo committed");
  EXPECT_EQ(commit.out, "committed\n") << commit.all();
}

// A worktree added during the run works; the config.worktree written for it
// (read by git there when extensions.worktreeConfig is set) is a finding.
TEST(EscapeDeferred, WorktreeAddedDuringTheRunWorksAndItsConfigIsReported) {
  temp_dir ws;
  host_repository(ws);
  const std::string script = kGit + "worktree add -q wt && cd wt && " + kGit + "commit -q --allow-empty -m w && " +
                             "printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' > \"$(git rev-parse --git-dir)/"
                             "config.worktree\" && echo added";
  auto r = run_sh(ws.path(), script);
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(r.out, "added\n");
  EXPECT_TRUE(has_finding(r, "repository_created", ws.path() + "/wt/.git")) << findings_text(r);
  EXPECT_TRUE(has_finding(r, "executable_config", ws.path() + "/.git/worktrees/wt/config.worktree", "core.fsmonitor"))
      << findings_text(r);
}

// With the home directory writable: existing start-up files are read-only,
// absent ones (.zlogin, an autostart entry) are findings when created, and
// other files in the home still work.
TEST(EscapeDeferred, StartupFilesInAWritableHomeAreProtectedOrReported) {
  temp_dir home("/var/tmp"), ws("/var/tmp"), policy_dir;
  install_probe(ws);
  home.write(".gitconfig", "[user]\n\tname = t\n");
  home.write(".bashrc", "# mine\n");
  std::string policy = write_policy(
      policy_dir, R"({"readable": ["{workspace}"], "writable": ["{workspace}", ")" + home.path() +
                      R"("], "protect_vcs_metadata": true})");
  auto r = run_probe(ws,
                     {"write", home.path() + "/.gitconfig", "[core]\n\tpager = x\n", "+", "write",
                      home.path() + "/.bashrc", "x", "+", "write", home.path() + "/.zlogin", "x", "+", "mkdir",
                      home.path() + "/.config", "+", "mkdir", home.path() + "/.config/autostart", "+", "write",
                      home.path() + "/.config/autostart/x.desktop", "[Desktop Entry]\n", "+", "write",
                      home.path() + "/notes.txt", "notes"},
                     {"--policy", policy}, {"HOME=" + home.path()});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(r.out, lines({"write EROFS", "write EROFS", "write OK", "mkdir OK", "mkdir OK", "write OK", "write OK"}))
      << r.all();
  EXPECT_TRUE(has_finding(r, "startup_file", home.path() + "/.zlogin")) << findings_text(r);
  EXPECT_TRUE(has_finding(r, "startup_file", home.path() + "/.config/autostart")) << findings_text(r);
  EXPECT_FALSE(has_finding(r, "startup_file", home.path() + "/.gitconfig")) << findings_text(r);
  EXPECT_TRUE(has_violation(r, "startup_file"));
}

bool scan_complete(const run_result& r) {
  return r.report.is_object() && r.report.contains("deferred_execution") &&
         r.report["deferred_execution"]["scan"]["complete"].get<bool>();
}

// The attack pass's exhaustion: a repository whose config includes itself
// three times (3^10 reads on main, each of the whole file) and one that
// includes a sparse 3 GiB file. The run ends with a report; each is a
// scan_incomplete finding and violation naming the config, the scan is not
// complete, and the repositories themselves are still found.
TEST(EscapeDeferred, IncludeCyclesAndGiantConfigsGiveScanIncomplete) {
  temp_dir ws;
  host_repository(ws);
  const std::string script =
      kGit + "init -q loop && printf '[include]\\n\\tpath = config\\n\\tpath = config\\n\\tpath = config\\n' >> "
             "loop/.git/config && " +
      kGit + "init -q giant && truncate -s 3G giant/big.cfg && printf '[include]\\n\\tpath = ../big.cfg\\n' >> "
             "giant/.git/config && echo made";
  auto r = run_sh(ws.path(), script);
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(r.out, "made\n");
  EXPECT_TRUE(has_finding(r, "scan_incomplete", ws.path() + "/loop/.git/config")) << findings_text(r);
  EXPECT_TRUE(has_finding(r, "scan_incomplete", ws.path() + "/giant/big.cfg")) << findings_text(r);
  EXPECT_TRUE(has_finding(r, "repository_created", ws.path() + "/loop/.git")) << findings_text(r);
  EXPECT_TRUE(has_finding(r, "repository_created", ws.path() + "/giant/.git")) << findings_text(r);
  EXPECT_TRUE(has_violation(r, "scan_incomplete")) << r.report.dump(2);
  EXPECT_FALSE(scan_complete(r)) << r.report.dump(2);
}

// A directory the command makes unreadable (mode 111) hides what is below it
// from a scan running as the same user: that is a scan_incomplete finding
// naming it, never `complete: true`. Root reads it anyway (CAP_DAC_READ_SEARCH)
// and finds the repository itself.
TEST(EscapeDeferred, AnUnreadableDirectoryGivesScanIncomplete) {
  temp_dir ws;
  host_repository(ws);
  auto r = run_sh(ws.path(), "mkdir -p d/x && " + kGit + "init -q d/x/r && chmod 111 d && echo hidden");
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(r.out, "hidden\n");
  if (::geteuid() == 0) {
    EXPECT_TRUE(has_finding(r, "repository_created", ws.path() + "/d/x/r/.git")) << findings_text(r);
  } else {
    EXPECT_TRUE(has_finding(r, "scan_incomplete", ws.path() + "/d")) << findings_text(r);
    EXPECT_TRUE(has_violation(r, "scan_incomplete")) << r.report.dump(2);
    EXPECT_FALSE(scan_complete(r)) << r.report.dump(2);
  }
  fs::permissions(ws.path() + "/d", fs::perms::owner_all);
}

// git's in-progress operation state left by the run is a finding, and the
// `exec` lines of its todo list (run by the host's `git rebase --continue`)
// are violations: here a real interactive rebase stopped at a `break`, with
// an `exec` still to run.
TEST(EscapeDeferred, ARebaseTodoWithExecIsAViolation) {
  temp_dir ws;
  host_repository(ws);
  const std::string script = "echo b >> README && " + kGit + "commit -q -am second && GIT_SEQUENCE_EDITOR='sed -i 1ibreak' " +
                             kGit + "rebase -q -i --exec 'echo later' HEAD~1 >/dev/null 2>&1; test -d .git/rebase-merge && echo stopped";
  auto r = run_sh(ws.path(), script);
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(r.out, "stopped\n");
  EXPECT_TRUE(has_finding(r, "operation_state", ws.path() + "/.git/rebase-merge")) << findings_text(r);
  EXPECT_TRUE(has_finding(r, "operation_exec", ws.path() + "/.git/rebase-merge/git-rebase-todo")) << findings_text(r);
  EXPECT_TRUE(has_violation(r, "operation_exec")) << r.report.dump(2);
  EXPECT_EQ(report_schema_verdict(r.report), "valid");
}

// The host's own git configuration names paths in the workspace: a global
// relative core.hooksPath (each repository's .githooks), an fsmonitor from
// GIT_CONFIG_COUNT and a pager from GIT_CONFIG_PARAMETERS. The existing hooks
// directory is read-only; the absent programs are watched, and creating one
// is a finding. The repository's ordinary files stay writable.
TEST(EscapeDeferred, TheHostsGlobalAndEnvironmentGitConfigIsHonoured) {
  temp_dir home("/var/tmp"), ws;
  install_probe(ws);
  host_repository(ws);
  home.write(".gitconfig", "[core]\n\thooksPath = .githooks\n");
  ws.mkdir(".githooks");
  ws.write(".githooks/pre-commit", "#!/bin/sh\n");
  auto r = run_probe(ws,
                     {"write", ".githooks/pre-commit", "#!/bin/sh\ntouch /tmp/pwned\n", "+", "write", "monitor.sh",
                      "#!/bin/sh\n", "+", "write", "pager.sh", "#!/bin/sh\n", "+", "write", "README", "x"},
                     {}, {"HOME=" + home.path(), "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=core.fsmonitor",
                          "GIT_CONFIG_VALUE_0=./monitor.sh", "GIT_CONFIG_PARAMETERS='core.pager'='./pager.sh'"});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(r.out, lines({"write EROFS", "write OK", "write OK", "write OK"})) << r.all();
  EXPECT_TRUE(has_finding(r, "repository_redirect_created", ws.path() + "/monitor.sh")) << findings_text(r);
  EXPECT_TRUE(has_finding(r, "repository_redirect_created", ws.path() + "/pager.sh")) << findings_text(r);
}

// A writable home is watched whole, not as a list of start-up files: a file
// a shell, Python or a user service would run (here ~/.config/python/
// sitecustomize.py and a systemd drop-in deep below), and a plain note, are
// each a home_file finding and violation; writing them works.
TEST(EscapeDeferred, EveryFileWrittenUnderAWritableHomeIsAFinding) {
  temp_dir home("/var/tmp"), ws("/var/tmp"), policy_dir;
  install_probe(ws);
  std::string policy = write_policy(
      policy_dir, R"({"readable": ["{workspace}"], "writable": ["{workspace}", ")" + home.path() +
                      R"("], "protect_vcs_metadata": true})");
  const std::string h = home.path();
  const std::string script = "mkdir -p " + h + "/.local/lib/python3/site-packages " + h +
                             "/.config/systemd/user/x.service.d && echo 'import os' > " + h +
                             "/.local/lib/python3/site-packages/sitecustomize.py && echo '[Service]' > " + h +
                             "/.config/systemd/user/x.service.d/o.conf && echo n > " + h + "/notes.txt && echo written";
  auto r = run_cordon({"--policy", policy}, {"/bin/sh", "-c", script}, ws.path(), {"HOME=" + h});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(r.out, "written\n");
  for (const char* path : {"/.local/lib/python3/site-packages/sitecustomize.py",
                           "/.config/systemd/user/x.service.d/o.conf", "/notes.txt"}) {
    EXPECT_TRUE(has_finding(r, "home_file", home.path() + path)) << path << "\n" << findings_text(r);
  }
  EXPECT_TRUE(has_violation(r, "home_file")) << r.report.dump(2);
  EXPECT_EQ(report_schema_verdict(r.report), "valid");
}

// Agent and editor configuration in the workspace: an existing
// .vscode/tasks.json (and its directory) is read-only, an absent .mcp.json
// and .claude/settings.json may be written but each is an agent_config
// finding, AGENTS.md and a CI workflow are instruction_file findings; listed
// in --rw itself, .vscode opts out (writable, still reported). Ordinary
// files stay writable.
TEST(EscapeDeferred, AgentAndEditorConfigurationIsReadOnlyOrReported) {
  temp_dir ws;
  install_probe(ws);
  ws.mkdir(".vscode");
  ws.write(".vscode/tasks.json", "{}\n");
  auto r = run_probe(ws, {"write", ".vscode/tasks.json", "{\"tasks\": [{\"command\": \"touch /tmp/pwned\"}]}", "+",
                          "write", ".vscode/settings.json", "{}", "+", "write", ".mcp.json", "{}", "+", "mkdir",
                          ".claude", "+", "write", ".claude/settings.json", "{\"hooks\": {}}", "+", "write",
                          "AGENTS.md", "do it", "+", "mkdir", ".github", "+", "mkdir", ".github/workflows", "+",
                          "write", ".github/workflows/ci.yml", "on: push", "+", "write", "README", "x"});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(r.out, lines({"write EROFS", "write EROFS", "write OK", "mkdir OK", "write OK", "write OK", "mkdir OK",
                          "mkdir OK", "write OK", "write OK"}))
      << r.all();
  EXPECT_TRUE(has_finding(r, "agent_config", ws.path() + "/.mcp.json")) << findings_text(r);
  EXPECT_TRUE(has_finding(r, "agent_config", ws.path() + "/.claude/settings.json")) << findings_text(r);
  EXPECT_TRUE(has_finding(r, "instruction_file", ws.path() + "/AGENTS.md")) << findings_text(r);
  EXPECT_TRUE(has_finding(r, "instruction_file", ws.path() + "/.github/workflows")) << findings_text(r);
  EXPECT_FALSE(has_finding(r, "agent_config", ws.path() + "/.vscode")) << findings_text(r);
  EXPECT_EQ(report_schema_verdict(r.report), "valid");
  // The opt-out: .vscode listed in --rw itself is writable, and still reported.
  auto opted = run_probe(ws, {"write", ".vscode/tasks.json", "{}"}, {"--rw", ws.path() + "/.vscode"});
  ASSERT_EQ(opted.exit_code, 0) << opted.all();
  EXPECT_EQ(opted.out, lines({"write OK"})) << opted.all();
  EXPECT_TRUE(has_finding(opted, "agent_config", ws.path() + "/.vscode")) << findings_text(opted);
}

// The allowed thing with nothing left behind: ordinary git work in the
// workspace gives no finding and no violation.
// The targets of the violations of `kind`, sorted.
std::vector<std::string> violation_targets(const run_result& r, const std::string& kind) {
  std::vector<std::string> out;
  if (!r.report.is_object() || !r.report.contains("violations")) return out;
  for (const auto& v : r.report["violations"]) {
    if (v.value("kind", "") == kind) out.push_back(v.value("target", ""));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// A protected file or directory in a writable directory is a mount point:
// replacing or removing it was EBUSY ("Device or resource busy", which a
// model retries) and no violation. Every write path now says EROFS, and the
// renames and removals are "protected_write" violations naming the path;
// the same calls on the repository's other files still work
// (docs/seccomp.md, "Renames and removals of protected paths").
TEST(EscapeDeferred, ReplacingOrRemovingProtectedMetadataIsEROFSAndAViolation) {
  temp_dir ws;
  install_probe(ws);
  host_repository(ws);
  const std::string git = ws.path() + "/.git";
  auto r = run_probe(ws, {"write", ".git/config.lock", "[core]\n\tfsmonitor = touch /tmp/pwned\n", "+", "rename",
                          ".git/config.lock", ".git/config", "+", "unlink", ".git/config", "+", "rmdir", ".git/hooks",
                          "+", "rename", ".git/hooks", ".git/hooks-moved", "+", "rename", ".git", "moved-git", "+",
                          "open-write", ".git/config", "+", "create", ".git/hooks/pre-commit", "+",
                          "write", ".git/description-new", "y", "+", "rename", ".git/description-new",
                          ".git/description", "+", "unlink", ".git/config.lock"});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(r.out, lines({"write OK", "rename EROFS", "unlink EROFS", "rmdir EROFS", "rename EROFS",
                          "rename EROFS", "open-write EROFS", "create EROFS", "write OK", "rename OK", "unlink OK"}))
      << r.all();
  // The open for writing and the new hook are writes (WritesToProtectedMetadataAreEROFSAndAViolation).
  EXPECT_EQ(violation_targets(r, "protected_write"),
            (std::vector<std::string>{git, git + "/config", git + "/hooks", git + "/hooks/pre-commit"}))
      << r.report.dump(2);
  EXPECT_EQ(report_schema_verdict(r.report), "valid");
  // git's own spelling: config written to a lock file, renamed over .git/config.
  auto config = run_sh(ws.path(), kGit + "config user.name someone-else; echo rc=$?");
  EXPECT_EQ(config.out, "rc=4\n") << config.all();
  EXPECT_NE(config.err.find("could not write config file .git/config: Read-only file system"), std::string::npos)
      << config.all();
  EXPECT_EQ(config.err.find("busy"), std::string::npos) << config.all();
  EXPECT_EQ(violation_targets(config, "protected_write"), (std::vector<std::string>{git + "/config"}))
      << config.report.dump(2);
}

std::uint64_t violation_count(const run_result& r, const std::string& kind, const std::string& target) {
  if (!r.report.is_object() || !r.report.contains("violations")) return 0;
  for (const auto& v : r.report["violations"]) {
    if (v.value("kind", "") == kind && v.value("target", "") == target) return v.value("count", std::uint64_t{0});
  }
  return 0;
}

// A plain write into protected metadata was EROFS from the read-only mount
// and no violation. Each form of write (docs/seccomp.md, "Writes to
// protected paths") is now EROFS and a protected_write violation naming the
// file; read-only opens, O_CREAT of an existing file without write access,
// and writes elsewhere in the repository work and record nothing.
TEST(EscapeDeferred, WritesToProtectedMetadataAreEROFSAndAViolation) {
  temp_dir ws;
  install_probe(ws);
  host_repository(ws);
  ws.mkdir("src");
  const std::string git = ws.path() + "/.git";
  // Root callers' openat2 is ENOSYS (docs/seccomp.md, "Root callers"): libc falls back to openat.
  const bool root = ::geteuid() == 0;
  auto r = run_probe(ws, {"open-write", ".git/config", "+", "open-as", ".git/config", "rdwr", "+", "open-as",
                          ".git/config", "trunc", "+", "open-as", ".git/hooks/pre-commit", "append", "+", "open-as",
                          ".git/hooks/pre-commit.sample", "append", "+", "creat", ".git/hooks/new", "+",
                          "create", ".git/hooks/new2", "+", "openat-write", ".git", "config", "+", "openat2-write",
                          ".git/config", "+", "truncate", ".git/config", "+", "symlink", ".git/config", "cfg", "+",
                          "open-write", "cfg", "+", "chdir", "src", "+", "open-write", "../.git/config", "+",
                          "open-write", ws.path() + "/.git/config", "+", "open-as", "../.git/config", "rdonly-creat",
                          "+", "open-as", "../.git/config", "rdonly-append", "+", "open-as", "../.git/config",
                          "rdonly", "+", "write", "../README", "changed\n", "+", "write", "new.c", "int x;", "+",
                          "truncate", "new.c", "+", "write", "../.git/scratch", "x", "+", "unlink", "../.git/scratch"});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(r.out, lines({"open-write EROFS", "open-as EROFS", "open-as EROFS", "open-as EROFS", "open-as EROFS",
                          "creat EROFS", "create EROFS", "openat-write EROFS",
                          root ? "openat2-write ENOSYS" : "openat2-write EROFS", "truncate EROFS", "symlink OK",
                          "open-write EROFS", "chdir OK", "open-write EROFS", "open-write EROFS", "open-as OK",
                          "open-as OK", "open-as OK", "write OK", "write OK", "truncate OK", "write OK",
                          "unlink OK"}))
      << r.all();
  EXPECT_EQ(violation_targets(r, "protected_write"),
            (std::vector<std::string>{git + "/config", git + "/hooks/new", git + "/hooks/new2",
                                      git + "/hooks/pre-commit", git + "/hooks/pre-commit.sample"}))
      << r.report.dump(2);
  // open-write, rdwr, trunc, openat, (openat2), truncate, through the symlink, ../, absolute.
  EXPECT_EQ(violation_count(r, "protected_write", git + "/config"), root ? 8U : 9U) << r.report.dump(2);
  EXPECT_TRUE(violation_targets(r, "seccomp").empty()) << r.report.dump(2);  // openat2's ENOSYS is libc's fallback
  EXPECT_EQ(report_schema_verdict(r.report), "valid");
  EXPECT_FALSE(fs::exists(git + "/hooks/new"));
  // The shell's own spelling, and its message.
  auto sh = run_sh(ws.path(), "echo 'touch /tmp/pwned' >> .git/hooks/pre-commit; echo rc=$?");
  EXPECT_EQ(sh.out, "rc=2\n") << sh.all();
  EXPECT_NE(sh.err.find("Read-only file system"), std::string::npos) << sh.all();
  EXPECT_EQ(violation_targets(sh, "protected_write"), (std::vector<std::string>{git + "/hooks/pre-commit"}))
      << sh.report.dump(2);
}

// The kernel's own answers that come before any write stay the kernel's
// (EEXIST, EISDIR, a read-only open with O_CREAT); O_TMPFILE in a protected
// directory and a "../" from a directory descriptor inside one are writes.
TEST(EscapeDeferred, WriteChecksFollowTheKernelsOrderOfAnswers) {
  temp_dir ws;
  host_repository(ws);
  const std::string script = R"(python3 -c "
import errno, os
def t(name, f):
    try:
        os.close(f()); print(name, 'OK')
    except OSError as e:
        print(name, errno.errorcode[e.errno])
t('tmpfile', lambda: os.open('.git/hooks', os.O_TMPFILE | os.O_WRONLY))
d = os.open('.git/hooks', os.O_RDONLY)
t('dirfd-dotdot', lambda: os.open('../config', os.O_WRONLY, dir_fd=d))
t('ro-creat', lambda: os.open('.git/config', os.O_RDONLY | os.O_CREAT))
t('excl', lambda: os.open('.git/config', os.O_WRONLY | os.O_CREAT | os.O_EXCL))
t('dir', lambda: os.open('.git/hooks', os.O_WRONLY))
t('tmpfile-ws', lambda: os.open('.', os.O_TMPFILE | os.O_WRONLY))
")";
  auto r = run_sh(ws.path(), script);
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(r.out, lines({"tmpfile EROFS", "dirfd-dotdot EROFS", "ro-creat OK", "excl EEXIST", "dir EISDIR",
                          "tmpfile-ws OK"}))
      << r.all();
  const std::string git = ws.path() + "/.git";
  EXPECT_EQ(violation_targets(r, "protected_write"), (std::vector<std::string>{git + "/config", git + "/hooks"}))
      << r.report.dump(2);
}

// Reading protected metadata, git status and a commit in the workspace
// write nothing protected: no violation, although every open for writing
// in this sandbox is looked at by the supervisor.
TEST(EscapeDeferred, ReadingMetadataAndCommittingRecordNoWrite) {
  temp_dir ws;
  host_repository(ws);
  auto r = run_sh(ws.path(), "cat .git/config > /dev/null && cat .git/hooks/pre-commit.sample > /dev/null && "
                             "echo more > notes.txt && " + kGit + "status --short && " + kGit + "add notes.txt && " +
                             kGit + "commit -q -m notes && echo ok");
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(r.out, "?? notes.txt\nok\n") << r.all();
  EXPECT_TRUE(r.report["violations"].empty()) << r.report.dump(2);
}

TEST(EscapeDeferred, OrdinaryGitWorkLeavesNoFinding) {
  temp_dir ws;
  host_repository(ws);
  auto r = run_sh(ws.path(), "echo more >> README && " + kGit + "commit -q -am second && " + kGit +
                                 "branch topic && " + kGit + "status --short && echo ok");
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(r.out, "ok\n");
  ASSERT_TRUE(r.report.contains("deferred_execution")) << r.report.dump(2);
  EXPECT_TRUE(r.report["deferred_execution"]["findings"].empty()) << findings_text(r);
  EXPECT_TRUE(r.report["deferred_execution"]["scan"]["complete"].get<bool>());
  EXPECT_TRUE(r.report["violations"].empty()) << r.report.dump(2);
}


// The scan's listings kept between runs (docs/deferred-execution.md, "Cost as
// the workspace grows"): a second run takes the first run's listings, and a
// repository the command makes in a listed directory, with the directory's
// mtime put back, is still found; the store, inside a writable home, is
// read-only to the command while the workspace stays writable.
TEST(EscapeDeferred, TheScanListingStoreCannotHideARepository) {
  temp_dir home("/var/tmp"), policy_dir;
  const std::string ws = home.mkdir("ws");
  home.mkdir("ws/a/b/c");
  std::string policy = write_policy(
      policy_dir, R"({"readable": ["{workspace}"], "writable": ["{workspace}", ")" + home.path() +
                      R"("], "protect_vcs_metadata": true})");
  const std::vector<std::string> env = {"HOME=" + home.path(), "XDG_CACHE_HOME=" + home.path() + "/.cache"};
  // A listing is kept once the directory's ctime is a second older than the
  // clock (vcs::listing_settle_ns): wait for that, by the clock, not a fixed sleep.
  struct stat st {};
  ASSERT_EQ(::stat((ws + "/a/b/c").c_str(), &st), 0);
  while (::time(nullptr) <= st.st_ctim.tv_sec + 2) ::usleep(50000);
  auto first = run_cordon({"--policy", policy}, {"/bin/true"}, ws, env);
  ASSERT_EQ(first.exit_code, 0) << first.all();
  const std::string store = home.path() + "/.cache/cordon/scan-listings";
  ASSERT_TRUE(fs::is_directory(store)) << first.all();
  ASSERT_FALSE(fs::is_empty(store));
  const std::string script =
      "for f in " + store + "/*; do (echo poisoned > \"$f\") 2>/dev/null && echo store-written || echo "
      "store-refused; done; (echo x > " + store + "/new) 2>/dev/null && echo created || echo not-created; "
      "T=$(stat -c %y a/b/c) && " + kGit + "init -q a/b/c/r && touch -d \"$T\" a/b/c && echo made";
  auto r = run_cordon({"--policy", policy}, {"/bin/sh", "-c", script}, ws, env);
  ASSERT_EQ(r.exit_code, 0) << r.all();
  // One file per scanned root (the workspace and the home), each refused.
  EXPECT_EQ(r.out, "store-refused\nstore-refused\nnot-created\nmade\n") << r.all();
  EXPECT_TRUE(has_finding(r, "repository_created", ws + "/a/b/c/r/.git")) << findings_text(r);
  EXPECT_TRUE(has_violation(r, "repository_created"));
}

}  // namespace
}  // namespace cordon::test::escape
