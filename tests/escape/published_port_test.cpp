// Published ports (network.publish, `cordon run --publish`; docs/network.md,
// "Published ports"): a server the command starts on its own loopback is
// reached from the host through the relay on 127.0.0.1:HOSTPORT, and nothing
// else reaches in: another port the command listens on stays out of reach,
// and the relay's listener answers on 127.0.0.1 only (not 127.0.0.2, not a
// non-loopback address of the host). The report lists the relay and counts
// what it carried.
#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "escape_support.h"

namespace cordon::test::escape {
namespace {

// A port free on the host's loopback now (bound to port 0, then released).
int free_host_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    ::close(fd);
    return 0;
  }
  ::close(fd);
  return ntohs(a.sin_port);
}

// Connects to address:port; "OK" or the errno name. With `send`, writes it,
// half-closes and returns what the server answered.
std::string attempt(const std::string& address, int port, const std::string& send = "") {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  ::inet_pton(AF_INET, address.c_str(), &a.sin_addr);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    const int err = errno;
    ::close(fd);
    return errno_name(err);
  }
  std::string answer = "OK";
  if (!send.empty()) {
    (void)::write(fd, send.data(), send.size());
    ::shutdown(fd, SHUT_WR);
    answer.clear();
    char buffer[256];
    ssize_t n;
    while ((n = ::read(fd, buffer, sizeof buffer)) > 0) answer.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return answer;
}

// A non-loopback IPv4 address of the host, or "" when it has none.
std::string host_address() {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return "";
  std::string found;
  for (ifaddrs* i = list; i != nullptr && found.empty(); i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET) continue;
    char text[INET_ADDRSTRLEN];
    ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, text, sizeof text);
    if (std::string(text).rfind("127.", 0) != 0) found = text;
  }
  ::freeifaddrs(list);
  return found;
}

// The command: listens on 8000 (published) and on `other` (not), says
// "ready" once both accept, answers one connection on 8000 with "pong " and
// what it read, then exits.
std::string server_script(int other) {
  return "import socket, sys\n"
         "def listen(port):\n"
         "    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
         "    s.bind(('127.0.0.1', port)); s.listen(8); return s\n"
         "published, other = listen(8000), listen(" + std::to_string(other) + ")\n"
         "print('ready', flush=True)\n"
         "c, _ = published.accept()\n"
         "data = b''\n"
         "while True:\n"
         "    chunk = c.recv(4096)\n"
         "    if not chunk: break\n"
         "    data += chunk\n"
         "c.sendall(b'pong ' + data); c.close()\n";
}

// `cordon run OPTIONS -- python3 -c SCRIPT` in the background, with its
// stdout on a pipe: the first line it printed ("ready" once it listens).
struct served {
  pid_t child = -1;
  std::string line;
};

served start_served(const std::string& cwd, const std::vector<std::string>& options, const std::string& script) {
  served s;
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return s;
  s.child = ::fork();
  if (s.child == 0) {
    ::dup2(out[1], 1);
    exec_in(cwd, cordon_run_argv(options, {"python3", "-c", script}));
  }
  ::close(out[1]);
  char c;
  while (s.child > 0 && ::read(out[0], &c, 1) == 1 && c != '\n') s.line += c;
  ::close(out[0]);
  return s;
}

std::string file_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// After start_served: "" once the server said "ready"; else the run is
// waited for and the reason is returned, starting with "skip" on
// linux-os-sandbox (no network namespace: network.publish is refused there,
// a blocker).
std::string not_ready(const served& run, const std::string& report_path) {
  if (run.line == "ready") return "";
  ::waitpid(run.child, nullptr, 0);
  const std::string report = file_text(report_path);
  if (report.find("linux-os-sandbox") != std::string::npos) {
    return "skip: linux-os-sandbox has no network namespace: network.publish is refused there (a blocker)";
  }
  return "the server did not start: " + run.line + "\n" + report;
}

// The start of a server script: listens on 127.0.0.1:8000 inside with
// `backlog`, then says "ready".
std::string listening_on_8000(int backlog) {
  return "import socket\n"
         "s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
         "s.bind(('127.0.0.1', 8000)); s.listen(" +
         std::to_string(backlog) +
         ")\n"
         "print('ready', flush=True)\n";
}

// Waits for the run (exit 0 expected), checks its report against the schema
// and returns its published_ports (an empty array when absent).
nlohmann::json finished_relays(pid_t child, const std::string& report_path) {
  int status = 0;
  EXPECT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  const nlohmann::json report = nlohmann::json::parse(file_text(report_path), nullptr, false);
  ::unlink(report_path.c_str());
  EXPECT_EQ(report_schema_verdict(report), "valid") << report.dump();
  EXPECT_TRUE(report.contains("published_ports")) << report.dump();
  return report.is_object() ? report.value("published_ports", nlohmann::json::array()) : nlohmann::json::array();
}

TEST(EscapePublishedPort, TheHostReachesThePublishedPortOnItsLoopbackAndNothingElse) {
  temp_dir ws;
  const std::string report_path = ws.path() + "/../" + unique_token() + ".report.json";
  const int host_port = free_host_port();
  const int idle_host_port = free_host_port();  // published to a port nothing listens on inside
  const int other = free_host_port();           // the command's unpublished port, free on the host too
  ASSERT_TRUE(host_port != 0 && idle_host_port != 0 && other != 0);
  const served run = start_served(ws.path(),
                                  {"--publish", std::to_string(host_port) + ":8000", "--publish",
                                   std::to_string(idle_host_port) + ":9", "--timeout", "60", "--report", report_path},
                                  server_script(other));
  ASSERT_GT(run.child, 0);
  const pid_t child = run.child;
  if (const std::string why = not_ready(run, report_path); !why.empty()) {
    if (why.rfind("skip", 0) == 0) GTEST_SKIP() << why;
    FAIL() << why;
  }
  // The unpublished port inside is not the host's: refused.
  EXPECT_EQ(attempt("127.0.0.1", other), "ECONNREFUSED");
  // The relay listens on 127.0.0.1 only.
  EXPECT_EQ(attempt("127.0.0.2", host_port), "ECONNREFUSED");
  if (const std::string address = host_address(); !address.empty()) {
    EXPECT_EQ(attempt(address, host_port), "ECONNREFUSED") << address;
  }
  // A published port whose inside has no listener: the relay accepts, then closes.
  EXPECT_EQ(attempt("127.0.0.1", idle_host_port, "x"), "");
  // The published port serves the host.
  EXPECT_EQ(attempt("127.0.0.1", host_port, "ping"), "pong ping");
  const nlohmann::json relays = finished_relays(child, report_path);
  ASSERT_EQ(relays.size(), 2U) << relays.dump();
  EXPECT_EQ(relays[0]["port"], 8000);
  EXPECT_EQ(relays[0]["host_port"], host_port);
  EXPECT_EQ(relays[0]["host_address"], "127.0.0.1");
  EXPECT_EQ(relays[0]["accepted"], 1);
  EXPECT_EQ(relays[0]["failed"], 0);
  EXPECT_EQ(relays[0]["bytes_in"], 4);
  EXPECT_EQ(relays[0]["bytes_out"], 9);
  EXPECT_EQ(relays[1]["port"], 9);
  EXPECT_EQ(relays[1]["accepted"], 0);
  EXPECT_EQ(relays[1]["failed"], 1);
}

// A connection to the host's 127.0.0.1:port, connected (the kernel's
// handshake; the relay accepts it later, in order).
int connect_host(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// The bound under a flood from the host: 32 connections are relayed at once,
// the 33rd and later are closed at accept (counted refused), and the port
// still serves once the flood ends.
TEST(EscapePublishedPort, AFloodBeyondTheBoundIsRefusedAndThePortStillServes) {
  temp_dir ws;
  const std::string report_path = ws.path() + "/../" + unique_token() + ".report.json";
  const int host_port = free_host_port();
  ASSERT_NE(host_port, 0);
  // Answers every connection with "pong " and what it read, until one says "quit".
  const std::string server =
      listening_on_8000(128) +
      "while True:\n"
      "    c, _ = s.accept(); data = b''\n"
      "    while True:\n"
      "        chunk = c.recv(4096)\n"
      "        if not chunk: break\n"
      "        data += chunk\n"
      "    try: c.sendall(b'pong ' + data)\n"
      "    except OSError: pass\n"
      "    c.close()\n"
      "    if data == b'quit': break\n";
  const served run = start_served(
      ws.path(), {"--publish", std::to_string(host_port) + ":8000", "--timeout", "60", "--report", report_path}, server);
  ASSERT_GT(run.child, 0);
  const pid_t child = run.child;
  if (const std::string why = not_ready(run, report_path); !why.empty()) {
    if (why.rfind("skip", 0) == 0) GTEST_SKIP() << why;
    FAIL() << why;
  }
  constexpr int relayed = 32, flood = 40;
  std::vector<int> held;
  for (int i = 0; i < flood; ++i) {
    const int fd = connect_host(host_port);
    ASSERT_GE(fd, 0) << i << ": " << errno_name(errno);
    held.push_back(fd);
  }
  // The relay accepts in order: the connections beyond the bound end at once (EOF or reset).
  for (int i = relayed; i < flood; ++i) {
    char byte;
    const ssize_t n = ::read(held[static_cast<std::size_t>(i)], &byte, 1);
    EXPECT_TRUE(n == 0 || (n < 0 && errno == ECONNRESET)) << i << ": " << n;
  }
  // The relayed ones still work, one after the other (the server answers in
  // order); each ends before the next, so its slot is free again.
  for (int i = 0; i < relayed; ++i) {
    const int fd = held[static_cast<std::size_t>(i)];
    ASSERT_EQ(::write(fd, "x", 1), 1) << i;
    ::shutdown(fd, SHUT_WR);
    std::string answer;
    char buffer[64];
    ssize_t n;
    while ((n = ::read(fd, buffer, sizeof buffer)) > 0) answer.append(buffer, static_cast<std::size_t>(n));
    EXPECT_EQ(answer, "pong x") << i;
  }
  for (const int fd : held) ::close(fd);
  EXPECT_EQ(attempt("127.0.0.1", host_port, "ping"), "pong ping");
  EXPECT_EQ(attempt("127.0.0.1", host_port, "quit"), "pong quit");
  const nlohmann::json relays = finished_relays(child, report_path);
  ASSERT_EQ(relays.size(), 1U) << relays.dump();
  const auto& relay = relays[0];
  EXPECT_EQ(relay["max_connections"], relayed);
  EXPECT_EQ(relay["refused"], flood - relayed) << relay.dump();
  EXPECT_EQ(relay["accepted"], relayed + 2) << relay.dump();  // the flood's 32, ping and quit
  EXPECT_EQ(relay["failed"], 0) << relay.dump();
}

// The end of the run: a server that answers and exits at once still gets its
// whole answer to the host (the relay passes on what it holds after the
// tree is gone, publish_relay.h), here 256 KiB, four times a relay buffer.
TEST(EscapePublishedPort, TheLastAnswerReachesTheHostAfterTheCommandExits) {
  temp_dir ws;
  const std::string report_path = ws.path() + "/../" + unique_token() + ".report.json";
  const int host_port = free_host_port();
  ASSERT_NE(host_port, 0);
  const std::string server =
      listening_on_8000(1) +
      "c, _ = s.accept()\n"
      "while c.recv(4096): pass\n"
      "c.sendall(b'a' * 262144); c.close()\n";
  const served run = start_served(
      ws.path(), {"--publish", std::to_string(host_port) + ":8000", "--timeout", "60", "--report", report_path}, server);
  ASSERT_GT(run.child, 0);
  if (const std::string why = not_ready(run, report_path); !why.empty()) {
    if (why.rfind("skip", 0) == 0) GTEST_SKIP() << why;
    FAIL() << why;
  }
  const std::string answer = attempt("127.0.0.1", host_port, "x");
  EXPECT_EQ(answer.size(), 262144U);
  EXPECT_EQ(answer.find_first_not_of('a'), std::string::npos);
  const nlohmann::json relays = finished_relays(run.child, report_path);
  ASSERT_EQ(relays.size(), 1U) << relays.dump();
  EXPECT_EQ(relays[0]["bytes_out"], 262144) << relays.dump();
}

TEST(EscapePublishedPort, AHostPortInUseRefusesTheRun) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len), 0);
  temp_dir ws;
  auto r = run_sh(ws.path(), "echo ran", {"--publish", std::to_string(ntohs(a.sin_port)) + ":8000"});
  ::close(fd);
  EXPECT_EQ(r.exit_code, 125) << r.all();
  EXPECT_EQ(r.out, "");
  if (r.report.is_object() && r.report["backend"].value("name", "") == "linux-os-sandbox") return;  // refused earlier
  EXPECT_NE(r.err.find("Address already in use"), std::string::npos) << r.all();
}

}  // namespace
}  // namespace cordon::test::escape
