// The os_sandbox backend (linux-os-sandbox: Landlock + seccomp, no
// namespaces), forced with CORDON_LINUX_BACKEND=os-sandbox so that it runs
// here too (docs/linux-backend.md, "Without namespaces"). Each probe's
// expected outcome follows the level the run's report claims; each attempt is
// paired with the allowed action next to it.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "escape_support.h"

namespace cordon::test::escape {
namespace {

const std::vector<std::string> kForced = {"CORDON_LINUX_BACKEND=os-sandbox"};

// The Landlock ABI the run applied, from filesystem_write's mechanism.
int landlock_abi_of(const nlohmann::json& report) {
  std::string mechanism = report["controls"]["filesystem_write"].value("mechanism", "");
  auto at = mechanism.find("landlock abi ");
  return at == std::string::npos ? 0 : std::atoi(mechanism.c_str() + at + 13);
}

std::string home_directory() {
  const char* home = std::getenv("HOME");
  return home != nullptr ? home : "/root";
}

TEST(OsSandbox, DefaultProfileRunsAndTheReportNamesBackendIsolationAndLevels) {
  temp_dir ws;
  install_probe(ws);
  const std::string home_file = home_directory() + "/cordon-os-sandbox-" + unique_token();
  auto r = run_probe(ws, {"create", "made.txt", "+", "cat", "made.txt", "+", "create", "/etc/cordon-" + unique_token(),
                          "+", "create", home_file, "+", "cat", "/etc/shadow", "+", "cat", "/etc/hostname"},
                     {}, kForced);
  ASSERT_EQ(r.exit_code, 0) << r.all();
  std::ifstream hostname("/etc/hostname");
  std::string name;
  std::getline(hostname, name);
  EXPECT_EQ(r.out, lines({"create OK", "cat OK x", "create EACCES", "create EACCES", "cat EACCES", "cat OK " + name}))
      << r.all();
  EXPECT_FALSE(std::ifstream(home_file).good());
  const auto& report = r.report;
  ASSERT_TRUE(report.is_object()) << r.all();
  EXPECT_EQ(report["backend"]["name"], "linux-os-sandbox");
  EXPECT_EQ(report["backend"]["isolation"], "os_sandbox");
  for (const char* control : {"filesystem_read", "filesystem_write", "filesystem_deny", "network_deny",
                              "unix_sockets", "environment", "process_tree_cleanup", "privilege",
                              "descriptor_hygiene", "syscall_filter", "terminal", "devices"}) {
    ASSERT_TRUE(report["controls"].contains(control)) << control;
    EXPECT_TRUE(report["controls"][control].contains("level")) << control;
  }
  EXPECT_EQ(report["controls"]["network_deny"]["level"], "enforced");
  EXPECT_EQ(report["controls"]["filesystem_deny"]["level"], "enforced");
  EXPECT_EQ(report["controls"]["filesystem_write"]["level"], landlock_abi_of(report) >= 3 ? "enforced" : "partial");
}

TEST(OsSandbox, TcpToAHostLoopbackServerFailsAndUnixSocketPairsWork) {
  temp_dir ws;
  install_probe(ws);
  loopback_server server;
  auto r = run_probe(ws, {"tcp-connect", "127.0.0.1", std::to_string(server.port()), "+", "socketpair-unix"}, {},
                     kForced);
  EXPECT_EQ(r.exit_code, 0) << r.all();
  // Seccomp refuses the socket itself; Landlock (ABI 4+) would refuse the connect.
  EXPECT_EQ(r.out, lines({"tcp-connect socket EAFNOSUPPORT", "socketpair-unix OK"})) << r.all();
  EXPECT_EQ(server.accepted(), 0);
}

TEST(OsSandbox, DeniedPathInsideTheWorkspaceIsUnreadableWhileItsSiblingsWork) {
  temp_dir ws, policies;
  install_probe(ws);
  ws.write("secret/key", "TOPSECRET\n");
  ws.write("src/main.c", "int main;\n");
  const std::string policy = write_policy(
      policies, R"({"read": "restricted", "readable": ["{workspace}"], "writable": ["{workspace}", "{run_tmp}"],)"
                R"( "denied": ["{workspace}/secret"]})");
  auto r = run_probe(ws, {"cat", "secret/key", "+", "list", "secret", "+", "cat", "src/main.c", "+", "create",
                          "src/new.c", "+", "create", "top-level-new.txt"},
                     {"--policy", policy}, kForced);
  EXPECT_EQ(r.exit_code, 0) << r.all();
  // The workspace is granted entry by entry around secret/: its top level takes no new entry.
  EXPECT_EQ(r.out, lines({"cat EACCES", "list EACCES", "cat OK int main;", "create OK", "create EACCES"})) << r.all();
  EXPECT_EQ(r.all().find("TOPSECRET"), std::string::npos);
  EXPECT_NE(r.report["controls"]["filesystem_deny"].value("detail", "").find(ws.path()), std::string::npos)
      << r.report.dump();
}

TEST(OsSandbox, APolicyRequiringContainerIsRefusedWithATypedBlocker) {
  temp_dir ws, policies;
  std::string body = R"({"schema_version": 1, "name": "needs-container", "isolation": "container",)"
                     R"( "filesystem": {"readable": ["{workspace}"]}, "network": {"mode": "denied"},)"
                     R"( "environment": {"set": {"PATH": "/usr/bin:/bin"}}})";
  const std::string policy = policies.write("container.json", body);
  auto r = run_cordon({"--policy", policy}, {"true"}, ws.path(), kForced);
  EXPECT_EQ(r.exit_code, 125) << r.all();
  EXPECT_NE(r.err.find("isolation"), std::string::npos) << r.all();
  ASSERT_TRUE(r.report.is_object()) << r.all();
  EXPECT_EQ(r.report["error"]["code"], "isolation_insufficient") << r.report.dump();
}

TEST(OsSandbox, APrecedenceLandlockCannotKeepIsRefused) {
  temp_dir ws, policies;
  // A denied file with a second name: a rule keeps a path out, not the file.
  const std::string secret = ws.write("secret.txt", "TOPSECRET\n");
  ASSERT_EQ(::link(secret.c_str(), (ws.path() + "/alias.txt").c_str()), 0);
  const std::string policy = write_policy(
      policies, R"({"read": "restricted", "readable": ["{workspace}"], "writable": ["{workspace}"],)"
                R"( "denied": ["{workspace}/secret.txt"]})");
  auto r = run_cordon({"--policy", policy}, {"cat", "alias.txt"}, ws.path(), kForced);
  EXPECT_EQ(r.exit_code, 125) << r.all();
  EXPECT_EQ(r.out.find("TOPSECRET"), std::string::npos);
  ASSERT_TRUE(r.report.is_object()) << r.all();
  EXPECT_EQ(r.report["error"]["code"], "enforcement_unavailable") << r.report.dump();
  EXPECT_NE(r.report.dump().find("hard links"), std::string::npos) << r.report.dump();
}

TEST(OsSandbox, ProcessProbesMatchTheReportedLevels) {
  temp_dir ws;
  install_probe(ws);
  host_process host;
  const std::string pid = std::to_string(host.pid());
  // Learn the ABI this host gives first, with a harmless run.
  auto first = run_probe(ws, {"kill", pid, "0"}, {}, kForced);
  ASSERT_EQ(first.exit_code, 0) << first.all();
  const int abi = landlock_abi_of(first.report);
  const std::string privilege = first.report["controls"]["privilege"].value("detail", "");
  std::vector<std::string> args = {"ptrace-attach", pid, "+", "unshare", "user", "+", "clone-newuser", "+", "kill-child"};
  std::vector<std::string> expected = {"ptrace-attach EPERM", "unshare EPERM", "clone-newuser EPERM", "kill-child OK"};
  if (abi >= 6) {
    // The report claims the signal scope: a signal to the host process fails.
    EXPECT_NE(privilege.find("signals to processes outside the sandbox refused"), std::string::npos) << privilege;
    args.insert(args.end(), {"+", "kill", pid, "9"});
    expected.push_back("kill EPERM");
  } else {
    EXPECT_NE(privilege.find("can signal the caller's other processes"), std::string::npos) << privilege;
    EXPECT_EQ(first.out, lines({"kill OK"})) << first.all();
  }
  auto r = run_probe(ws, args, {}, kForced);
  EXPECT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(r.out, lines(expected)) << r.all();
  EXPECT_TRUE(host.alive());
}

// Deferred execution (docs/deferred-execution.md): the post-run repository
// scan runs here too. A nested repository with core.fsmonitor made in an
// existing subdirectory (the workspace's top level, split around .git, takes
// no new entry) is a finding and a violation; the git work itself succeeds.
TEST(OsSandbox, ARepositoryMadeDuringTheRunIsADeferredExecutionFinding) {
  temp_dir ws;
  ASSERT_EQ(host_command({"git", "init", "-q", ws.path()}), 0);
  ws.write("tools/build.sh", "true\n");
  ws.write("notes/today.txt", "-\n");
  const std::string git = "git -c user.name=t -c user.email=t@t ";
  auto r = run_cordon({}, {"sh", "-c", "cd tools && " + git + "init -q sub && " + git +
                                     "-C sub config core.fsmonitor 'touch /tmp/pwned' && echo done"},
                      ws.path(), kForced);
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(r.out, "done\n") << r.all();
  ASSERT_TRUE(r.report.is_object()) << r.all();
  EXPECT_EQ(r.report["backend"]["name"], "linux-os-sandbox");
  ASSERT_TRUE(r.report.contains("deferred_execution")) << r.report.dump(2);
  bool created = false, fsmonitor = false;
  for (const auto& f : r.report["deferred_execution"]["findings"]) {
    const std::string kind = f.value("kind", "");
    created = created || (kind == "repository_created" && f.value("path", "") == ws.path() + "/tools/sub/.git");
    fsmonitor = fsmonitor || (kind == "executable_config" && f.value("key", "") == "core.fsmonitor");
  }
  EXPECT_TRUE(created) << r.report["deferred_execution"].dump(2);
  EXPECT_TRUE(fsmonitor) << r.report["deferred_execution"].dump(2);
  EXPECT_NE(r.report["violations"].dump().find("repository_created"), std::string::npos) << r.report.dump(2);
  // A run that changes nothing there has the scan and no finding (tools/,
  // now holding a repository, is split around it and takes no new entry).
  auto quiet = run_cordon({}, {"sh", "-c", "echo ok > notes/out.txt"}, ws.path(), kForced);
  ASSERT_EQ(quiet.exit_code, 0) << quiet.all();
  ASSERT_TRUE(quiet.report.contains("deferred_execution")) << quiet.report.dump(2);
  EXPECT_TRUE(quiet.report["deferred_execution"]["findings"].empty()) << quiet.report["deferred_execution"].dump(2);
}

TEST(OsSandbox, ADescendantThatLeftTheSessionDiesWithTheRun) {
  temp_dir ws;
  const std::string token = std::to_string(4000 + (::getpid() % 1000)) + "." + std::to_string(::getpid() % 97);
  auto r = run_cordon({}, {"sh", "-c", "setsid sleep " + token + " </dev/null >/dev/null 2>&1 & echo started"},
                      ws.path(), kForced);
  EXPECT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(r.out, "started\n") << r.all();
  EXPECT_FALSE(process_with_marker_alive(token)) << "a descendant outlived the run";
}

}  // namespace
}  // namespace cordon::test::escape
