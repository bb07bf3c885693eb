// The os_sandbox backend (linux-os-sandbox: Landlock + seccomp, no
// namespaces), forced with CORDON_LINUX_BACKEND=os-sandbox so that it runs
// here too (docs/linux-backend.md, "Without namespaces"). Each probe's
// expected outcome follows the level the run's report claims; each attempt is
// paired with the allowed action next to it.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "escape_support.h"
#include "../host_expect.h"

namespace cordon::test::escape {
namespace {

const std::vector<std::string> kForced = {"CORDON_LINUX_BACKEND=os-sandbox"};

// The Landlock ABI the run applied, from filesystem_write's mechanism.
int landlock_abi_of(const nlohmann::json& report) {
  if (!report.is_object() || !report.contains("controls") || !report["controls"].is_object() ||
      !report["controls"].contains("filesystem_write") || !report["controls"]["filesystem_write"].is_object()) {
    return 0;
  }
  const auto& write = report["controls"]["filesystem_write"];
  std::string mechanism = write.contains("mechanism") && write["mechanism"].is_string() ? write["mechanism"].get<std::string>() : "";
  auto at = mechanism.find("landlock abi ");
  return at == std::string::npos ? 0 : std::atoi(mechanism.c_str() + at + 13);
}

std::string home_directory() {
  const char* home = std::getenv("HOME");
  return home != nullptr ? home : "/root";
}


// An HTTP origin on the host's 127.0.0.1: every request gets 200 and `body`.
class tiny_http_server {
 public:
  tiny_http_server() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), len) == 0 && ::listen(fd_, 16) == 0 &&
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
      port_ = ntohs(a.sin_port);
    }
    thread_ = std::thread([this] { serve(); });
  }
  ~tiny_http_server() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }
  int port() const { return port_; }
  int connections() const { return connections_; }
  static std::string body() { return "cordon-os-sandbox-body"; }

 private:
  void serve() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 100) != 1) continue;
      int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      ++connections_;
      std::string request;
      char buf[4096];
      while (request.find("\r\n\r\n") == std::string::npos) {
        pollfd q{c, POLLIN, 0};
        if (::poll(&q, 1, 5000) != 1) break;
        ssize_t n = ::read(c, buf, sizeof buf);
        if (n <= 0) break;
        request.append(buf, static_cast<std::size_t>(n));
      }
      const std::string answer = "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body().size()) +
                                 "\r\nConnection: close\r\n\r\n" + body();
      ssize_t ignored = ::write(c, answer.data(), answer.size());
      (void)ignored;
      ::close(c);
    }
  }
  int fd_ = -1;
  int port_ = 0;
  std::atomic<int> connections_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// A filtered policy: the workspace (whose unix sockets the command may
// connect to), default deny, and `rules`.
std::string filtered_policy(const temp_dir& dir, const std::string& rules) {
  return write_policy(dir,
                      R"({"readable": ["{workspace}"], "writable": ["{workspace}", "{run_tmp}"],
                          "unix_sockets": ["{workspace}"]})",
                      R"({"mode": "filtered", "default_action": "deny", "rules": )" + rules + "}");
}

std::vector<nlohmann::json> connections_to(const nlohmann::json& report, const std::string& host) {
  std::vector<nlohmann::json> found;
  if (!report.contains("network")) return found;
  for (const auto& c : report["network"]["connections"]) {
    if (c["host"] == host) found.push_back(c);
  }
  return found;
}

bool has_violation(const nlohmann::json& report, const std::string& kind, const std::string& target) {
  for (const auto& v : report["violations"]) {
    if (v["kind"] == kind && (target.empty() || v["target"] == target)) return true;
  }
  return false;
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
  // EROFS where the host's own file system is read-only there (the kernel matrix's guests).
  EXPECT_EQ(r.out, lines({"create OK", "cat OK x", "create " + os_sandbox_write_refusal("/etc"),
                          "create " + os_sandbox_write_refusal(home_directory()), "cat EACCES", "cat OK " + name}))
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

// Protected repository metadata: Landlock's split refuses a write, rename
// or removal with EACCES; the supervisor answers EROFS and records a
// protected_write violation naming the path, as on linux-namespaces
// (docs/seccomp.md, "Writes to protected paths"). Reads and the repository's
// other files work and record nothing.
TEST(OsSandbox, WritesRenamesAndRemovalsOfProtectedMetadataAreEROFSAndViolations) {
  temp_dir ws;
  install_probe(ws);
  ASSERT_EQ(host_command({"git", "init", "-q", ws.path()}), 0);
  ws.write("src/main.c", "int main;\n");
  auto r = run_probe(ws, {"open-write", ".git/config", "+", "open-as", ".git/hooks/pre-commit", "append", "+",
                          "truncate", ".git/config", "+", "rename", ".git/hooks", ".git/hooks-old", "+", "unlink",
                          ".git/config", "+", "rename", ".git", "moved", "+", "open-as", ".git/config", "rdonly", "+",
                          "write", ".git/description", "mine\n", "+", "write", "src/main.c", "int main2;\n"},
                     {}, kForced);
  ASSERT_EQ(r.exit_code, 0) << r.all();
  ASSERT_EQ(r.report["backend"]["name"], "linux-os-sandbox") << r.all();
  EXPECT_EQ(r.out, lines({"open-write EROFS", "open-as EROFS", "truncate EROFS", "rename EROFS", "unlink EROFS",
                          "rename EROFS", "open-as OK", "write OK", "write OK"}))
      << r.all();
  std::vector<std::string> targets;
  for (const auto& v : r.report["violations"]) {
    if (v.value("kind", "") == "protected_write") targets.push_back(v.value("target", ""));
  }
  std::sort(targets.begin(), targets.end());
  const std::string git = ws.path() + "/.git";
  EXPECT_EQ(targets, (std::vector<std::string>{git, git + "/config", git + "/hooks", git + "/hooks/pre-commit"}))
      << r.report.dump(2);
  EXPECT_EQ(r.report["violations"].size(), 4U) << r.report.dump(2);
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

// Filtered networking without a network namespace (docs/linux-backend.md,
// "Filtered networking without a network namespace"): curl and python3 reach
// an allowed name on a host loopback server through the broker the proxy
// variables name; a denied name is refused by the broker and recorded.
TEST(OsSandbox, FilteredCurlAndPythonReachAnAllowedNameThroughTheBroker) {
  if (::access("/usr/bin/curl", X_OK) != 0 || ::access("/usr/bin/python3", X_OK) != 0) {
    GTEST_SKIP() << "needs /usr/bin/curl and /usr/bin/python3";
  }
  tiny_http_server server;
  ASSERT_NE(server.port(), 0);
  temp_dir ws, dir;
  ::chmod(ws.path().c_str(), 0755);
  const std::string port = std::to_string(server.port());
  // A name rule reaches loopback only with the IP rule too (docs/network.md).
  const std::string policy =
      filtered_policy(dir, R"([{"host": "127.0.0.1", "port": )" + port +
                               R"(, "action": "allow"}, {"host": "localhost", "action": "allow"}])");
  const std::string script =
      "curl -sS -m 10 http://localhost:" + port + "/curl; echo \" rc=$?\"; "
      "curl -sS -m 10 -o /dev/null -w '%{http_code}' http://denied.test:" + port + "/; echo \" rc=$?\"; "
      "/usr/bin/python3 -c \"import urllib.request; "
      "print(urllib.request.urlopen('http://localhost:" + port + "/python', timeout=10).read().decode())\"";
  auto r = run_cordon({"--policy", policy}, {"/bin/sh", "-c", script}, ws.path(), kForced);
  if (landlock_abi_of(r.report) < 4 && r.exit_code == 125) {
    // No Landlock TCP rules (ABI 4): the broker's port cannot be the only one, so filtered is refused, typed.
    EXPECT_FALSE(cordon::test::declares_at_least("landlock", 4)) << r.all();
    EXPECT_NE(r.report.dump().find("enforcement_unavailable"), std::string::npos) << r.report.dump();
    EXPECT_NE(r.report.dump().find("network_filter"), std::string::npos) << r.report.dump();
    EXPECT_EQ(server.connections(), 0);
    return;
  }
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(r.out, tiny_http_server::body() + " rc=0\n403 rc=0\n" + tiny_http_server::body() + "\n") << r.all();
  EXPECT_EQ(server.connections(), 2);
  EXPECT_EQ(r.report["backend"]["name"], "linux-os-sandbox");
  EXPECT_EQ(r.report["controls"]["network_filter"]["level"], "enforced") << r.report["controls"].dump();
  EXPECT_EQ(r.report["controls"]["network_deny"]["level"], "enforced");
  EXPECT_NE(r.report["controls"]["network_filter"].value("mechanism", "").find("pidfd_getfd"), std::string::npos);
  auto allowed = connections_to(r.report, "localhost");
  ASSERT_EQ(allowed.size(), 2u) << r.report["network"].dump(2);
  for (const auto& c : allowed) {
    EXPECT_EQ(c["action"], "allow") << c.dump();
    EXPECT_EQ(c["address"], "127.0.0.1") << c.dump();
  }
  auto denied = connections_to(r.report, "denied.test");
  ASSERT_EQ(denied.size(), 1u) << r.report["network"].dump(2);
  EXPECT_EQ(denied[0]["action"], "deny");
  EXPECT_EQ(denied[0]["rule"], "default");
}

// What the command cannot do by itself under filtered: connect anywhere but
// the broker (the supervisor refuses it: EACCES), reach the broker's port on
// another address, bind or listen on a TCP port, or make UDP, ICMP, raw or
// SCTP sockets; a named unix socket of its own still works, and so does the
// broker's port on 127.0.0.1.
TEST(OsSandbox, FilteredDirectConnectsOtherSocketsAndListenersFail) {
  loopback_server server;
  temp_dir ws, dir;
  install_probe(ws);
  const std::string policy = filtered_policy(
      dir, R"([{"host": "127.0.0.1", "port": )" + std::to_string(server.port()) + R"(, "action": "allow"}])");
  auto r = run_probe(ws,
                     {"tcp-connect", "127.0.0.1", std::to_string(server.port()), "+", "tcp-connect-env-port",
                      "0.0.0.0", "HTTP_PROXY", "+", "tcp-connect-env-port", "127.0.0.2", "http_proxy", "+",
                      "tcp-connect-env-port", "127.0.0.1", "HTTP_PROXY", "+", "udp-send", "127.0.0.1",
                      std::to_string(server.port()), "+", "socket-ping", "+", "socket-raw", "+", "socket-sctp", "+",
                      "tcp-local", "127.0.0.1", "+", "tcp-listen-unbound", "+", "unix-local", "own.sock"},
                     {"--policy", policy}, kForced);
  if (landlock_abi_of(r.report) < 4 && r.exit_code == 125) {
    EXPECT_FALSE(cordon::test::declares_at_least("landlock", 4)) << r.all();
    EXPECT_NE(r.report.dump().find("enforcement_unavailable"), std::string::npos) << r.report.dump();
    EXPECT_EQ(server.accepted(), 0);
    return;
  }
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(r.out, lines({"tcp-connect connect EACCES", "tcp-connect-env-port connect EACCES",
                          "tcp-connect-env-port connect EACCES", "tcp-connect-env-port OK",
                          "udp-send socket EAFNOSUPPORT", "socket-ping EAFNOSUPPORT", "socket-raw EAFNOSUPPORT",
                          "socket-sctp EAFNOSUPPORT", "tcp-local bind EACCES", "tcp-listen-unbound listen EACCES",
                          "unix-local OK"}))
      << r.all();
  EXPECT_EQ(server.accepted(), 0);
  EXPECT_TRUE(has_violation(r.report, "network_connect", "127.0.0.1:" + std::to_string(server.port())))
      << r.report["violations"].dump();
  EXPECT_TRUE(has_violation(r.report, "network_listen", "")) << r.report["violations"].dump();
  EXPECT_EQ(r.report["controls"]["network_filter"]["level"], "enforced");
}

}  // namespace
}  // namespace cordon::test::escape
