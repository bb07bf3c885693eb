// Filtered networking (docs/network.md): real clients inside the sandbox
// (curl, python3, git) reach real servers that this test starts on the
// host's loopback, through the broker only, and only where a rule allows it.
// Every test shows the forbidden thing failing and the allowed thing working,
// and checks what the report says about each connection.
//
// The servers listen on 127.0.0.1 (or ::1) and nowhere else; nothing here
// sends a packet off the machine (example.invalid is refused before any
// resolution).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "cli_capture.h"
#include "harness.h"

namespace cordon::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Binds `fd` to 127.0.0.1 on a port the kernel picks; returns that port.
int bind_loopback(int fd) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  return ntohs(a.sin_port);
}

// ---------------------------------------------------------------------------
// A static HTTP/1.1 file server on the host's loopback. GET serves a file
// below `root` (the query string is ignored, as a dumb git server's is), 404
// otherwise; one request per connection, answered with "Connection: close".
// It counts connections and keeps every request head it read.
class http_server {
 public:
  explicit http_server(std::string root, bool ipv6 = false) : root_(std::move(root)) {
    fd_ = ::socket(ipv6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (ipv6) {
      sockaddr_in6 a{};
      a.sin6_family = AF_INET6;
      a.sin6_addr = in6addr_loopback;
      ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
      socklen_t len = sizeof a;
      ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
      port_ = ntohs(a.sin6_port);
    } else {
      port_ = bind_loopback(fd_);
    }
    ::listen(fd_, 64);
    acceptor_ = std::thread([this] { accept_loop(); });
  }

  ~http_server() {
    stop_ = true;
    acceptor_.join();
    std::vector<std::thread> handlers;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      handlers.swap(handlers_);
    }
    for (auto& t : handlers) t.join();
    ::close(fd_);
  }

  http_server(const http_server&) = delete;
  http_server& operator=(const http_server&) = delete;

  int port() const { return port_; }
  int connections() const { return connections_; }
  std::vector<std::string> requests() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return requests_;
  }
  std::string requests_text() const {
    std::string all;
    for (const auto& r : requests()) all += r + "----\n";
    return all;
  }

 private:
  void accept_loop() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      ++connections_;
      std::lock_guard<std::mutex> lock(mutex_);
      handlers_.emplace_back([this, c] { serve(c); });
    }
  }

  void serve(int c) {
    timeval timeout{5, 0};  // a stuck client costs this thread 5 s at most
    ::setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    ::setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
    std::string head;
    char buffer[4096];
    while (head.find("\r\n\r\n") == std::string::npos && head.size() < 65536) {
      const ssize_t n = ::recv(c, buffer, sizeof buffer, 0);
      if (n <= 0) break;
      head.append(buffer, static_cast<std::size_t>(n));
    }
    const auto end = head.find("\r\n\r\n");
    if (end != std::string::npos) head.resize(end + 2);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      requests_.push_back(head);
    }
    std::string status = "404 Not Found", body = "not found\n";
    std::istringstream line(head);
    std::string method, target;
    line >> method >> target;
    target = target.substr(0, target.find('?'));
    if (method == "GET" && !target.empty() && target[0] == '/' && target.find("..") == std::string::npos) {
      const std::string path = root_ + target;
      std::error_code ec;
      if (fs::is_regular_file(path, ec)) {
        std::ifstream in(path, std::ios::binary);
        std::stringstream s;
        s << in.rdbuf();
        status = "200 OK";
        body = s.str();
      }
    }
    std::string response = "HTTP/1.1 " + status + "\r\nContent-Type: application/octet-stream\r\nContent-Length: " +
                           std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
    std::size_t sent = 0;
    while (sent < response.size()) {
      const ssize_t n = ::send(c, response.data() + sent, response.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) break;
      sent += static_cast<std::size_t>(n);
    }
    ::shutdown(c, SHUT_WR);
    // Drain until the client closes (or the timeout), so the close is clean.
    while (::recv(c, buffer, sizeof buffer, 0) > 0) {
    }
    ::close(c);
  }

  std::string root_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> connections_{0};
  mutable std::mutex mutex_;
  std::vector<std::string> requests_;
  std::vector<std::thread> handlers_;
  std::thread acceptor_;
};

// A known body, larger than one TCP segment so byte counts mean something.
std::string known_body() {
  std::string body;
  for (int i = 0; body.size() < 20000; ++i) body += "line " + std::to_string(i) + " from the host's server\n";
  return body;
}

// A directory the server serves, with `file` holding known_body().
struct served_files {
  temp_dir dir;
  served_files() {
    ::chmod(dir.path().c_str(), 0755);
    dir.write("file", known_body());
  }
  const std::string& root() const { return dir.path(); }
};

std::string port_text(int port) { return std::to_string(port); }

// A filtered policy with `rules` (a JSON array) and default deny. The same
// file-system view as the other integration tests' policies.
std::string filtered_policy(const temp_dir& dir, const std::string& rules) {
  std::string path = dir.path() + "/policy.json";
  std::ofstream(path) << R"({"schema_version": 1, "name": "net-filtered",
    "filesystem": {"read": "restricted", "readable": ["{workspace}"], "writable": ["{workspace}", "{run_tmp}"]},
    "network": {"mode": "filtered", "rules": )"
                      << rules << R"(, "default_action": "deny"},
    "environment": {"set": {"PATH": "/usr/bin:/bin", "HOME": "/tmp"}}})";
  return path;
}

std::string allow_rule(const std::string& host, int port = 0) {
  return R"({"host": ")" + host + "\"" + (port != 0 ? ", \"port\": " + port_text(port) : std::string()) +
         R"(, "action": "allow"})";
}

std::string deny_rule(const std::string& host, int port = 0) {
  return R"({"host": ")" + host + "\"" + (port != 0 ? ", \"port\": " + port_text(port) : std::string()) +
         R"(, "action": "deny"})";
}

// The report's entries for one destination (in order).
std::vector<json> connections_to(const json& report, const std::string& host, int port) {
  std::vector<json> found;
  if (!report.contains("network")) return found;
  for (const auto& c : report["network"]["connections"]) {
    if (c["host"] == host && c["port"] == port) found.push_back(c);
  }
  return found;
}

// Exactly one entry for host:port with this protocol, rule and action.
void expect_entry(const json& report, const std::string& protocol, const std::string& host, int port,
                  const json& rule, const std::string& action) {
  SCOPED_TRACE(protocol + " " + host + ":" + port_text(port));
  auto found = connections_to(report, host, port);
  ASSERT_EQ(found.size(), 1u) << report.value("network", json()).dump(2);
  const json& c = found[0];
  EXPECT_EQ(c["protocol"], protocol) << c.dump();
  EXPECT_EQ(c["rule"], rule) << c.dump();
  EXPECT_EQ(c["action"], action) << c.dump();
  if (action == "allow") {
    EXPECT_GT(c["bytes_sent"].get<std::uint64_t>(), 0u) << c.dump();
    EXPECT_GT(c["bytes_received"].get<std::uint64_t>(), 0u) << c.dump();
    EXPECT_FALSE(c.contains("reason")) << c.dump();
  } else {
    EXPECT_EQ(c["bytes_sent"], 0) << c.dump();
    EXPECT_EQ(c["bytes_received"], 0) << c.dump();
    EXPECT_FALSE(c.contains("address")) << c.dump();
  }
}

bool has_violation(const json& report, const std::string& kind, const std::string& target) {
  for (const auto& v : report["violations"]) {
    if (v["kind"] == kind && v["target"] == target) return true;
  }
  return false;
}

// curl, time-bounded; prints the body, then "rc=N".
std::string curl(const std::string& args) { return "curl -sS -m 10 " + args + "; echo rc=$?"; }

// The response head (headers of every response, the proxy's CONNECT
// answer included) and the status, for a refusal.
std::string curl_head(const std::string& args) {
  return "curl -sS -m 10 -o /dev/null -D - -w 'status=%{http_code} connect=%{http_connect}\\n' " + args +
         "; echo rc=$?";
}

// python3: a raw CONNECT to the broker (its TCP listener, or with where ==
// "unix" its unix socket); prints the head of the answer.
std::string python_connect_head(const std::string& where, const std::string& host_port) {
  const std::string open =
      where == "unix" ? "s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\ns.settimeout(10)\n"
                        "s.connect('/dev/cordon-proxy.sock')\n"
                      : "s = socket.create_connection(('127.0.0.1', 3128), 10)\n";
  return "import socket\n" + open + "s.sendall(b'CONNECT " + host_port + " HTTP/1.1\\r\\nHost: " + host_port +
         "\\r\\n\\r\\n')\n"
         "data = b''\n"
         "while b'\\r\\n\\r\\n' not in data:\n"
         "  chunk = s.recv(4096)\n"
         "  if not chunk: break\n"
         "  data += chunk\n"
         "print(data.split(b'\\r\\n\\r\\n')[0].decode())\n";
}

// python3: SOCKS5 CONNECT with hostname addressing; prints "reply N".
std::string python_socks_hostname(const std::string& host, int port) {
  return "import socket, struct\n"
         "s = socket.create_connection(('127.0.0.1', 3128), 10)\n"
         "s.sendall(b'\\x05\\x01\\x00')\n"
         "assert s.recv(2) == b'\\x05\\x00'\n"
         "name = b'" + host + "'\n"
         "s.sendall(b'\\x05\\x01\\x00\\x03' + bytes([len(name)]) + name + struct.pack('!H', " + port_text(port) + "))\n"
         "reply = s.recv(4)\n"
         "print('reply', reply[1] if len(reply) > 1 else 'none')\n";
}


// For failure messages: the known body shortened to a marker.
std::string elide(std::string text) {
  const std::string body = known_body();
  for (auto at = text.find(body); at != std::string::npos; at = text.find(body, at)) {
    text.replace(at, body.size(), "<BODY>");
  }
  return text;
}

std::size_t count_of(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++n;
  return n;
}

// ---------------------------------------------------------------------------

TEST(NetworkFilter, CurlForwardProxyReachesAnAllowedServerOnly) {
  served_files files;
  http_server allowed(files.root()), other(files.root());
  temp_dir ws, dir;
  const std::string policy = filtered_policy(dir, "[" + allow_rule("127.0.0.1", allowed.port()) + "]");
  auto r = run_cordon({"--policy", policy},
                      {"sh", "-c",
                       curl("http://127.0.0.1:" + port_text(allowed.port()) + "/file") + "; " +
                           curl_head("http://127.0.0.1:" + port_text(other.port()) + "/file")},
                      ws.path());
  EXPECT_EQ(r.exit_code, 0) << elide(r.all());
  // Allowed: the body, fetched through HTTP_PROXY from the environment.
  EXPECT_EQ(r.out.substr(0, known_body().size()), known_body()) << elide(r.all());
  EXPECT_NE(r.out.find(known_body() + "rc=0\n"), std::string::npos) << elide(r.all());
  ASSERT_EQ(allowed.connections(), 1);
  // The origin got an origin-form request without the proxy's headers.
  const std::string seen = allowed.requests_text();
  EXPECT_EQ(seen.rfind("GET /file HTTP/1.1\r\n", 0), 0u) << seen;
  EXPECT_EQ(seen.find("Proxy-"), std::string::npos) << seen;
  // Another port on the same host: no rule, refused by the default.
  EXPECT_NE(r.out.find("HTTP/1.1 403"), std::string::npos) << elide(r.out);
  EXPECT_NE(r.out.find("X-Cordon-Rule: default\r\n"), std::string::npos) << elide(r.out);
  EXPECT_NE(r.out.find("status=403"), std::string::npos) << elide(r.out);
  EXPECT_EQ(other.connections(), 0);

  expect_entry(r.report, "http_forward", "127.0.0.1", allowed.port(), 0, "allow");
  expect_entry(r.report, "http_forward", "127.0.0.1", other.port(), "default", "deny");
  auto a = connections_to(r.report, "127.0.0.1", allowed.port());
  if (!a.empty()) {
    EXPECT_EQ(a[0]["address"], "127.0.0.1");
    EXPECT_GE(a[0]["bytes_received"].get<std::uint64_t>(), known_body().size());
  }
  EXPECT_EQ(r.report["network"]["allowed"], 1);
  EXPECT_EQ(r.report["network"]["denied"], 1);
  EXPECT_EQ(r.report["network"]["total"], 2);
}

TEST(NetworkFilter, CurlConnectTunnelReachesAnAllowedServerOnly) {
  served_files files;
  http_server allowed(files.root()), other(files.root());
  temp_dir ws, dir;
  const std::string policy = filtered_policy(dir, "[" + allow_rule("127.0.0.1", allowed.port()) + "]");
  auto r = run_cordon({"--policy", policy},
                      {"sh", "-c",
                       curl("-p http://127.0.0.1:" + port_text(allowed.port()) + "/file") + "; " +
                           curl_head("-p http://127.0.0.1:" + port_text(other.port()) + "/file")},
                      ws.path());
  EXPECT_EQ(r.exit_code, 0) << elide(r.all());
  EXPECT_NE(r.out.find(known_body() + "rc=0\n"), std::string::npos) << elide(r.all());
  EXPECT_EQ(allowed.connections(), 1);
  // Through a tunnel the origin sees curl's own request, as if direct.
  EXPECT_EQ(allowed.requests_text().rfind("GET /file HTTP/1.1\r\n", 0), 0u) << allowed.requests_text();
  // The refused CONNECT: curl reports the proxy's 403 (exit 56).
  EXPECT_NE(r.out.find("X-Cordon-Rule: default\r\n"), std::string::npos) << elide(r.out);
  EXPECT_NE(r.out.find("connect=403"), std::string::npos) << elide(r.out);
  EXPECT_NE(r.out.find("rc=56"), std::string::npos) << elide(r.out);
  EXPECT_EQ(other.connections(), 0);
  expect_entry(r.report, "http_connect", "127.0.0.1", allowed.port(), 0, "allow");
  expect_entry(r.report, "http_connect", "127.0.0.1", other.port(), "default", "deny");
}

TEST(NetworkFilter, CurlSocks5WithHostnameAddressing) {
  served_files files;
  http_server allowed(files.root()), other(files.root());
  temp_dir ws, dir;
  // "localhost" is a name: only the IP rule lets its loopback address be used.
  const std::string policy = filtered_policy(
      dir, "[" + allow_rule("127.0.0.1", allowed.port()) + ", " + allow_rule("localhost") + "]");
  const std::string url = "http://localhost:" + port_text(allowed.port()) + "/file";
  auto r = run_cordon(
      {"--policy", policy},
      {"sh", "-c",
       // Explicitly, and through ALL_PROXY (socks5h://) once HTTP_PROXY is gone.
       curl("--proxy socks5h://127.0.0.1:3128 " + url) + "; echo; " +
           "env -u HTTP_PROXY -u http_proxy " + curl(url) + "; echo; echo all_proxy=$ALL_PROXY; " +
           curl("--proxy socks5h://127.0.0.1:3128 http://localhost:" + port_text(other.port()) + "/file")},
      ws.path());
  EXPECT_EQ(r.exit_code, 0) << elide(r.all());
  EXPECT_EQ(count_of(r.out, known_body() + "rc=0\n"), 2u) << elide(r.all());
  EXPECT_NE(r.out.find("all_proxy=socks5h://127.0.0.1:3128\n"), std::string::npos) << elide(r.out);
  EXPECT_EQ(allowed.connections(), 2);
  // The other port: the name rule matches, but its loopback address has no IP
  // rule; SOCKS5 reply 2 ("connection not allowed by ruleset").
  EXPECT_EQ(other.connections(), 0);
  EXPECT_NE(r.out.find("rc=97"), std::string::npos) << elide(r.all());
  EXPECT_NE(r.err.find("Can't complete SOCKS5 connection to localhost. (2)"), std::string::npos) << r.err;

  auto ok = connections_to(r.report, "localhost", allowed.port());
  ASSERT_EQ(ok.size(), 2u) << r.report["network"].dump(2);
  for (const auto& c : ok) {
    EXPECT_EQ(c["protocol"], "socks5") << c.dump();
    EXPECT_EQ(c["action"], "allow") << c.dump();
    EXPECT_EQ(c["address"], "127.0.0.1") << c.dump();
    EXPECT_GT(c["bytes_sent"].get<std::uint64_t>(), 0u) << c.dump();
    EXPECT_GE(c["bytes_received"].get<std::uint64_t>(), known_body().size()) << c.dump();
  }
  auto denied = connections_to(r.report, "localhost", other.port());
  ASSERT_EQ(denied.size(), 1u) << r.report["network"].dump(2);
  EXPECT_EQ(denied[0]["protocol"], "socks5");
  EXPECT_EQ(denied[0]["action"], "deny");
  EXPECT_EQ(denied[0]["rule"], 1);
  EXPECT_NE(denied[0].value("reason", "").find("127.0.0.1"), std::string::npos) << denied[0].dump();
}

TEST(NetworkFilter, TheUnixSocketListenerServesSocksAndConnect) {
  served_files files;
  http_server allowed(files.root()), other(files.root());
  temp_dir ws, dir;
  const std::string policy = filtered_policy(dir, "[" + allow_rule("127.0.0.1", allowed.port()) + "]");
  const std::string hp = "127.0.0.1:" + port_text(allowed.port());
  const std::string tunnel =
      "import socket\n"
      "s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
      "s.settimeout(10)\n"
      "s.connect('/dev/cordon-proxy.sock')\n"
      "s.sendall(b'CONNECT " + hp + " HTTP/1.1\\r\\nHost: " + hp + "\\r\\n\\r\\n')\n"
      "f = s.makefile('rb')\n"
      "print('tunnel', f.readline().decode().strip())\n"
      "while f.readline() not in (b'\\r\\n', b''): pass\n"
      "s.sendall(b'GET /file HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n')\n"
      "print(f.read().split(b'\\r\\n\\r\\n', 1)[1].decode(), end='')\n";
  auto r = run_cordon(
      {"--policy", policy},
      {"sh", "-c",
       "ls -l /dev/cordon-proxy.sock | cut -c1; " +
           curl("--proxy socks5h://localhost/dev/cordon-proxy.sock http://" + hp + "/file") + "; " +
           "python3 -c \"$0\"; echo rc=$?; " +
           "python3 -c \"$1\"",
       tunnel, python_connect_head("unix", "127.0.0.1:" + port_text(other.port()))},
      ws.path());
  EXPECT_EQ(r.exit_code, 0) << elide(r.all());
  EXPECT_EQ(r.out.rfind("s\n", 0), 0u) << elide(r.out);  // a socket
  EXPECT_EQ(count_of(r.out, known_body() + "rc=0\n"), 2u) << elide(r.all());
  EXPECT_NE(r.out.find("tunnel HTTP/1.1 200"), std::string::npos) << elide(r.out);
  EXPECT_EQ(allowed.connections(), 2);
  EXPECT_NE(r.out.find("HTTP/1.1 403"), std::string::npos) << elide(r.out);
  EXPECT_NE(r.out.find("X-Cordon-Rule: default"), std::string::npos) << elide(r.out);
  EXPECT_EQ(other.connections(), 0);
  auto ok = connections_to(r.report, "127.0.0.1", allowed.port());
  ASSERT_EQ(ok.size(), 2u) << r.report["network"].dump(2);
  std::set<std::string> protocols;
  for (const auto& c : ok) {
    protocols.insert(c["protocol"].get<std::string>());
    EXPECT_EQ(c["action"], "allow");
    EXPECT_EQ(c["rule"], 0);
    EXPECT_GT(c["bytes_received"].get<std::uint64_t>(), 0u);
  }
  EXPECT_EQ(protocols, (std::set<std::string>{"socks5", "http_connect"}));
  expect_entry(r.report, "http_connect", "127.0.0.1", other.port(), "default", "deny");
}

TEST(NetworkFilter, PythonUrllibHonorsTheProxyVariables) {
  served_files files;
  http_server allowed(files.root()), other(files.root());
  temp_dir ws, dir;
  const std::string policy = filtered_policy(dir, "[" + allow_rule("127.0.0.1", allowed.port()) + "]");
  const std::string script =
      "import sys, urllib.request, urllib.error\n"
      "print(urllib.request.getproxies().get('http'))\n"
      "body = urllib.request.urlopen('http://127.0.0.1:" + port_text(allowed.port()) + "/file', timeout=10).read()\n"
      "print('body', len(body), body == sys.stdin.buffer.read())\n"
      "try:\n"
      "  urllib.request.urlopen('http://127.0.0.1:" + port_text(other.port()) + "/file', timeout=10)\n"
      "  print('reached')\n"
      "except urllib.error.HTTPError as e:\n"
      "  print('refused', e.code, e.headers.get('X-Cordon-Rule'))\n";
  auto r = run_cordon({"--policy", policy}, {"python3", "-c", script}, ws.path(), {}, known_body());
  EXPECT_EQ(r.exit_code, 0) << elide(r.all());
  EXPECT_EQ(r.out, "http://127.0.0.1:3128\nbody " + std::to_string(known_body().size()) +
                       " True\nrefused 403 default\n")
      << elide(r.all());
  EXPECT_EQ(allowed.connections(), 1);
  EXPECT_EQ(other.connections(), 0);
  expect_entry(r.report, "http_forward", "127.0.0.1", allowed.port(), 0, "allow");
  expect_entry(r.report, "http_forward", "127.0.0.1", other.port(), "default", "deny");
}

TEST(NetworkFilter, GitCloneOverDumbHttpThroughTheBroker) {
  // A bare repository with one commit, served by the dumb HTTP protocol.
  temp_dir served;
  ::chmod(served.path().c_str(), 0755);
  const std::string work = served.mkdir("work");
  const std::vector<std::string> git = {"git", "-c", "user.name=CI", "-c", "user.email=ci@example.invalid",
                                        "-c", "init.defaultBranch=main"};
  auto g = [&](std::vector<std::string> args, const std::string& cwd) {
    std::vector<std::string> argv = git;
    argv.insert(argv.end(), args.begin(), args.end());
    return host_command(argv, cwd);
  };
  served.write("work/README", "cloned through the broker\n");
  ASSERT_EQ(g({"init", "-q"}, work), 0);
  ASSERT_EQ(g({"add", "README"}, work), 0);
  ASSERT_EQ(g({"commit", "-qm", "first"}, work), 0);
  ASSERT_EQ(g({"clone", "-q", "--bare", work, served.path() + "/repo.git"}, served.path()), 0);
  ASSERT_EQ(g({"update-server-info"}, served.path() + "/repo.git"), 0);
  http_server allowed(served.path()), other(served.path());

  temp_dir ws, dir;
  const std::string policy = filtered_policy(dir, "[" + allow_rule("127.0.0.1", allowed.port()) + "]");
  auto r = run_cordon({"--policy", policy},
                      {"sh", "-c",
                       "git clone -q http://127.0.0.1:" + port_text(allowed.port()) +
                           "/repo.git clone && cat clone/README && git -C clone log --format=%s; "
                           "git clone -q http://127.0.0.1:" + port_text(other.port()) +
                           "/repo.git other; echo rc=$?"},
                      ws.path());
  EXPECT_EQ(r.exit_code, 0) << elide(r.all());
  EXPECT_EQ(r.out, "cloned through the broker\nfirst\nrc=128\n") << elide(r.all());
  EXPECT_NE(r.err.find("403"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(ws.path() + "/other"));
  std::ifstream cloned(ws.path() + "/clone/README");
  std::string text((std::istreambuf_iterator<char>(cloned)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "cloned through the broker\n");  // in the workspace, on the host
  EXPECT_GE(allowed.connections(), 3);             // info/refs, HEAD, objects...
  EXPECT_NE(allowed.requests_text().find("GET /repo.git/info/refs"), std::string::npos) << allowed.requests_text();
  EXPECT_EQ(other.connections(), 0);
  auto ok = connections_to(r.report, "127.0.0.1", allowed.port());
  EXPECT_EQ(ok.size(), static_cast<std::size_t>(allowed.connections())) << r.report["network"].dump(2);
  for (const auto& c : ok) {
    EXPECT_EQ(c["protocol"], "http_forward");
    EXPECT_EQ(c["action"], "allow");
    EXPECT_EQ(c["rule"], 0);
  }
  auto refused = connections_to(r.report, "127.0.0.1", other.port());
  ASSERT_FALSE(refused.empty());
  for (const auto& c : refused) EXPECT_EQ(c["rule"], "default");
}

TEST(NetworkFilter, ADenyRuleAnswers403NamingItsIndex) {
  served_files files;
  http_server denied(files.root()), allowed(files.root());
  temp_dir ws, dir;
  // Rule 0 denies one port; rule 1 allows the rest of 127.0.0.1.
  const std::string policy =
      filtered_policy(dir, "[" + deny_rule("127.0.0.1", denied.port()) + ", " + allow_rule("127.0.0.1") + "]");
  auto r = run_cordon({"--policy", policy},
                      {"sh", "-c",
                       curl_head("http://127.0.0.1:" + port_text(denied.port()) + "/file") + "; " +
                           "python3 -c \"$0\"; " + curl("http://127.0.0.1:" + port_text(allowed.port()) + "/file"),
                       python_socks_hostname("127.0.0.1", denied.port())},
                      ws.path());
  EXPECT_EQ(r.exit_code, 0) << elide(r.all());
  EXPECT_NE(r.out.find("HTTP/1.1 403"), std::string::npos) << elide(r.out);
  EXPECT_NE(r.out.find("X-Cordon-Rule: 0\r\n"), std::string::npos) << elide(r.out);
  EXPECT_NE(r.out.find("status=403"), std::string::npos) << elide(r.out);
  EXPECT_NE(r.out.find("reply 2\n"), std::string::npos) << elide(r.out);  // SOCKS5: not allowed by ruleset
  EXPECT_EQ(denied.connections(), 0);
  EXPECT_NE(r.out.find(known_body() + "rc=0\n"), std::string::npos) << elide(r.all());
  EXPECT_EQ(allowed.connections(), 1);
  auto refused = connections_to(r.report, "127.0.0.1", denied.port());
  ASSERT_EQ(refused.size(), 2u) << r.report["network"].dump(2);
  std::set<std::string> protocols;
  for (const auto& c : refused) {
    protocols.insert(c["protocol"].get<std::string>());
    EXPECT_EQ(c["rule"], 0) << c.dump();
    EXPECT_EQ(c["action"], "deny") << c.dump();
    EXPECT_EQ(c["bytes_sent"], 0) << c.dump();
  }
  EXPECT_EQ(protocols, (std::set<std::string>{"http_forward", "socks5"}));
  expect_entry(r.report, "http_forward", "127.0.0.1", allowed.port(), 1, "allow");
}

TEST(NetworkFilter, AnUnlistedNameIsRefusedByDefault) {
  served_files files;
  http_server allowed(files.root());
  temp_dir ws, dir;
  const std::string policy = filtered_policy(dir, "[" + allow_rule("127.0.0.1", allowed.port()) + "]");
  auto r = run_cordon({"--policy", policy},
                      {"sh", "-c", "python3 -c \"$0\"; python3 -c \"$1\"; " +
                                       curl("http://127.0.0.1:" + port_text(allowed.port()) + "/file"),
                       python_connect_head("tcp", "example.invalid:443"), python_socks_hostname("example.invalid", 80)},
                      ws.path());
  EXPECT_EQ(r.exit_code, 0) << elide(r.all());
  EXPECT_EQ(r.out.rfind("HTTP/1.1 403", 0), 0u) << elide(r.out);
  EXPECT_NE(r.out.find("\r\nX-Cordon-Rule: default\n"), std::string::npos) << elide(r.out);
  EXPECT_NE(r.out.find("reply 2\n"), std::string::npos) << elide(r.out);
  EXPECT_NE(r.out.find(known_body() + "rc=0\n"), std::string::npos) << elide(r.all());
  expect_entry(r.report, "http_connect", "example.invalid", 443, "default", "deny");
  expect_entry(r.report, "socks5", "example.invalid", 80, "default", "deny");
  expect_entry(r.report, "http_forward", "127.0.0.1", allowed.port(), 0, "allow");
}

// A client that ignores the proxy variables connects on its own: the
// supervisor routes its connect(2) to the broker, which decides the
// original destination like any other (docs/network.md, "Transparent
// routing"). TCP Fast Open, which connects inside sendto(2), stays refused.
TEST(NetworkFilter, ADirectConnectionIgnoringTheProxyIsRoutedThroughTheBroker) {
  served_files files;
  http_server server(files.root()), other(files.root());
  temp_dir ws, dir;
  const std::string policy = filtered_policy(dir, "[" + allow_rule("127.0.0.1", server.port()) + "]");
  const std::string port = port_text(server.port());
  const std::string direct =
      "import socket, errno\n"
      "for host in ('127.0.0.1', '::1'):\n"
      "  try:\n"
      "    s = socket.create_connection((host, " + port + "), 3)\n"
      "    s.sendall(b'GET /file HTTP/1.0\\r\\n\\r\\n')\n"
      "    print(host, s.makefile('rb').readline().decode().strip() or 'closed')\n"
      "  except OSError as e:\n"
      "    print(host, 'refused', errno.errorcode.get(e.errno, e.errno))\n"
      // From a thread that is not the process's first (as Go and Java connect).
      "import threading\n"
      "def in_thread():\n"
      "  s = socket.create_connection(('127.0.0.1', " + port + "), 3)\n"
      "  s.sendall(b'GET /file HTTP/1.0\\r\\nHost: 127.0.0.1\\r\\n\\r\\n')\n"
      "  print('thread', s.makefile('rb').readline().decode().strip() or 'closed')\n"
      "t = threading.Thread(target=in_thread); t.start(); t.join()\n"
      // TCP Fast Open connects from sendto(2), without connect(2).
      "try:\n"
      "  s = socket.socket()\n"
      "  s.sendto(b'GET / HTTP/1.0\\r\\n\\r\\n', socket.MSG_FASTOPEN, ('127.0.0.1', " + port + "))\n"
      "  print('fast open sent')\n"
      "except OSError as e:\n"
      "  print('fast open refused', 'EOPNOTSUPP' if e.errno == errno.EOPNOTSUPP else e.errno)\n";
  auto r = run_cordon({"--policy", policy},
                      {"sh", "-c",
                       curl("--noproxy '*' http://127.0.0.1:" + port + "/file") + "; " +
                           curl_head("--noproxy '*' http://127.0.0.1:" + port_text(other.port()) + "/file") +
                           "; python3 -c \"$0\"",
                       direct},
                      ws.path());
  EXPECT_EQ(r.exit_code, 0) << elide(r.all());
  // curl without the proxy: the allowed server answers; no rule allows the
  // other one's port at all, so that connect fails at once (EACCES) and is
  // a violation.
  EXPECT_EQ(r.out.rfind(known_body() + "rc=0\n", 0), 0u) << elide(r.all());
  EXPECT_NE(r.out.find("status=000 connect=000\nrc=7\n"), std::string::npos) << elide(r.out);
  EXPECT_TRUE(has_violation(r.report, "network_connect", "127.0.0.1:" + port_text(other.port())))
      << r.report["violations"].dump();
  // python: a raw socket with no Host header is decided by its address;
  // ::1 is not 127.0.0.1, so the rule does not open it.
  EXPECT_NE(r.out.find("127.0.0.1 HTTP/1.1 200 OK\n"), std::string::npos) << elide(r.out);
  EXPECT_NE(r.out.find("::1 HTTP/1.1 403 Forbidden\n"), std::string::npos) << elide(r.out);
  EXPECT_NE(r.out.find("thread HTTP/1.1 200 OK\n"), std::string::npos) << elide(r.out);
  EXPECT_NE(r.out.find("fast open refused EOPNOTSUPP\n"), std::string::npos) << elide(r.out);
  EXPECT_EQ(server.connections(), 3);
  EXPECT_EQ(other.connections(), 0);
  // Each connection the broker decided is in its evidence with where it was
  // going and what named it.
  auto allowed = connections_to(r.report, "127.0.0.1", server.port());
  ASSERT_EQ(allowed.size(), 3u) << r.report["network"].dump(2);
  std::set<std::string> sources;
  for (const auto& c : allowed) {
    EXPECT_EQ(c["protocol"], "transparent") << c.dump();
    EXPECT_EQ(c["action"], "allow") << c.dump();
    EXPECT_EQ(c["rule"], 0) << c.dump();
    EXPECT_EQ(c["original"], "127.0.0.1:" + port) << c.dump();
    EXPECT_EQ(c["address"], "127.0.0.1") << c.dump();
    sources.insert(c["name_source"].get<std::string>());
  }
  EXPECT_EQ(sources, (std::set<std::string>{"http_host", "address"}));
  EXPECT_TRUE(connections_to(r.report, "127.0.0.1", other.port()).empty());
  expect_entry(r.report, "transparent", "::1", server.port(), "default", "deny");
  EXPECT_EQ(report_schema_verdict(r.report), "valid") << r.report.dump(2);
}

// A static C client that knows nothing of proxies: a blocking connect(2),
// then "GET /file HTTP/1.0" with no Host header (so the broker decides it by
// its address). Prints the status line, or what went wrong.
constexpr const char* plain_client_source = R"(#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
int main(int argc, char** argv) {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {0};
  a.sin_family = AF_INET;
  a.sin_port = htons((unsigned short)atoi(argv[2]));
  inet_pton(AF_INET, argv[1], &a.sin_addr);
  if (connect(s, (struct sockaddr*)&a, sizeof a) != 0) { printf("connect: %s\n", strerror(errno)); return 0; }
  const char* request = "GET /file HTTP/1.0\r\n\r\n";
  if (write(s, request, strlen(request)) < 0) { printf("write: %s\n", strerror(errno)); return 0; }
  char line[256] = {0};
  size_t n = 0;
  while (n + 1 < sizeof line && read(s, line + n, 1) == 1 && line[n] != '\n') ++n;
  line[n] = 0;
  if (n > 0 && line[n - 1] == '\r') line[n - 1] = 0;
  printf("%s\n", n == 0 ? "closed" : line);
  return 0;
}
)";

// The acceptance check of transparent routing: Node 20's built-in fetch
// (which ignores HTTP_PROXY and connects non-blocking) and a static C
// client (blocking connect) reach the allowed loopback server and not the
// other one, and each decision is in the report.
TEST(NetworkFilter, ToolsThatIgnoreTheProxyVariablesReachOnlyWhatARuleAllows) {
  if (::access("/usr/bin/gcc", X_OK) != 0) GTEST_SKIP() << "no gcc to build the static C client";
  served_files files;
  http_server allowed(files.root()), denied(files.root());
  temp_dir ws, dir;
  ::chmod(ws.path().c_str(), 0755);
  const std::string source = ws.write("client.c", plain_client_source);
  const std::string client = ws.path() + "/client";
  ASSERT_EQ(std::system(("gcc -static -O1 -o " + client + " " + source + " 2>&1").c_str()), 0);
  const bool node = ::access("/usr/bin/node", X_OK) == 0;
  const std::string a = port_text(allowed.port()), d = port_text(denied.port());
  // The second rule opens the denied server's port for another host only, so
  // its connections reach the broker (which refuses them) instead of failing
  // at connect.
  const std::string policy = filtered_policy(
      dir, "[" + allow_rule("127.0.0.1", allowed.port()) + ", " + allow_rule("other.example", denied.port()) + "]");
  std::string script = client + " 127.0.0.1 " + a + "; " + client + " 127.0.0.1 " + d + "; ";
  if (node) {
    for (const std::string& port : {a, d}) {
      script += "node -e \"fetch('http://127.0.0.1:" + port +
                "/file').then(r => r.text().then(t => console.log('fetch', r.status, t.length)), "
                "e => console.log('fetch failed', e.cause ? e.cause.code : e.message))\"; ";
    }
  }
  auto r = run_cordon({"--policy", policy}, {"sh", "-c", script}, ws.path());
  EXPECT_EQ(r.exit_code, 0) << elide(r.all());
  EXPECT_EQ(r.out.rfind("HTTP/1.1 200 OK\nHTTP/1.1 403 Forbidden\n", 0), 0u) << elide(r.all());
  EXPECT_EQ(allowed.connections(), node ? 2 : 1);
  EXPECT_EQ(denied.connections(), 0);
  auto to_allowed = connections_to(r.report, "127.0.0.1", allowed.port());
  auto to_denied = connections_to(r.report, "127.0.0.1", denied.port());
  ASSERT_EQ(to_allowed.size(), node ? 2u : 1u) << r.report["network"].dump(2);
  ASSERT_EQ(to_denied.size(), node ? 2u : 1u) << r.report["network"].dump(2);
  for (const auto& c : to_allowed) {
    EXPECT_EQ(c["protocol"], "transparent");
    EXPECT_EQ(c["action"], "allow") << c.dump();
  }
  for (const auto& c : to_denied) {
    EXPECT_EQ(c["action"], "deny") << c.dump();
    EXPECT_EQ(c["rule"], "default") << c.dump();
  }
  if (!node) GTEST_SKIP() << "no node: only the C client was checked";
  EXPECT_NE(r.out.find("fetch 200 " + std::to_string(known_body().size()) + "\n"), std::string::npos)
      << elide(r.all());
  EXPECT_NE(r.out.find("fetch 403 "), std::string::npos) << elide(r.all());
}

// A DNS server on the host's loopback for the sandbox's resolver to reach
// through the broker (CORDON_DNS_UPSTREAM): names in `names` answer one A
// record, 127.0.0.1; AAAA answers nothing; anything else NXDOMAIN. It counts
// the queries it got per name, so a test can show that a denied name never
// arrived. It answers over UDP and, on the same port, over TCP (RFC 7766:
// a two-byte length before each message).
class dns_test_server {
 public:
  explicit dns_test_server(std::set<std::string> names) : names_(std::move(names)) {
    // The UDP port the kernel picks may be taken for TCP (another test's
    // connection, when tests run side by side): pick again.
    for (int attempt = 0; attempt < 50 && !tcp_ok_; ++attempt) {
      if (fd_ >= 0) ::close(fd_);
      if (tcp_fd_ >= 0) ::close(tcp_fd_);
      fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
      port_ = bind_loopback(fd_);
      tcp_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      a.sin_port = htons(static_cast<std::uint16_t>(port_));
      tcp_ok_ = ::bind(tcp_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 && ::listen(tcp_fd_, 16) == 0;
    }
    thread_ = std::thread([this] { serve(); });
    tcp_thread_ = std::thread([this] { serve_tcp(); });
  }
  ~dns_test_server() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    ::shutdown(tcp_fd_, SHUT_RDWR);
    thread_.join();
    tcp_thread_.join();
    ::close(fd_);
    ::close(tcp_fd_);
  }
  bool serves_tcp() const { return tcp_ok_; }
  int tcp_queries() const { return tcp_queries_.load(); }
  int port() const { return port_; }
  int queries(const std::string& name) {
    const std::lock_guard<std::mutex> lock(mutex_);
    return counts_[name];
  }

 private:
  void serve() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 100) != 1) continue;
      char buf[1500];
      sockaddr_in from{};
      socklen_t from_len = sizeof from;
      const ssize_t n = ::recvfrom(fd_, buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&from), &from_len);
      const std::string reply = answer(std::string(buf, n > 0 ? static_cast<std::size_t>(n) : 0));
      if (!reply.empty()) ::sendto(fd_, reply.data(), reply.size(), 0, reinterpret_cast<sockaddr*>(&from), from_len);
    }
  }

  // The answer to `query` ("" when it is not one), counting its name.
  std::string answer(const std::string& query) {
    const std::size_t n = query.size();
    const char* buf = query.data();
    if (n < 17) return {};
    std::string name;
    std::size_t at = 12;
    while (at < n && buf[at] != 0) {
      const std::size_t len = static_cast<unsigned char>(buf[at]);
      if (!name.empty()) name += '.';
      name.append(buf + at + 1, std::min(len, n - at - 1));
      at += len + 1;
    }
    at += 1;
    if (at + 4 > n) return {};
    const int type = (static_cast<unsigned char>(buf[at]) << 8) | static_cast<unsigned char>(buf[at + 1]);
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      ++counts_[name];
    }
    std::string reply(buf, at + 4);
    const bool known = names_.count(name) != 0;
    reply[2] = static_cast<char>(0x81);
    reply[3] = static_cast<char>(known ? 0x80 : 0x83);
    reply[6] = 0;
    reply[7] = static_cast<char>(known && type == 1 ? 1 : 0);
    reply[8] = reply[9] = reply[10] = reply[11] = 0;
    if (known && type == 1) reply += std::string("\xc0\x0c\x00\x01\x00\x01\x00\x00\x00\x3c\x00\x04\x7f\x00\x00\x01", 16);
    return reply;
  }

  // One connection at a time, one query per connection (what the broker sends).
  void serve_tcp() {
    while (!stop_ && tcp_ok_) {
      pollfd p{tcp_fd_, POLLIN, 0};
      if (::poll(&p, 1, 100) != 1) continue;
      const int c = ::accept4(tcp_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      timeval tv{2, 0};
      ::setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      unsigned char length[2];
      std::string query;
      if (::recv(c, length, 2, MSG_WAITALL) == 2) {
        query.resize((static_cast<std::size_t>(length[0]) << 8) | length[1]);
        if (::recv(c, query.data(), query.size(), MSG_WAITALL) != static_cast<ssize_t>(query.size())) query.clear();
      }
      ++tcp_queries_;
      const std::string reply = answer(query);
      if (!reply.empty()) {
        const std::string framed = std::string{static_cast<char>(reply.size() >> 8), static_cast<char>(reply.size() & 0xff)} + reply;
        (void)::send(c, framed.data(), framed.size(), MSG_NOSIGNAL);
      }
      ::close(c);
    }
  }

  std::set<std::string> names_;
  int fd_ = -1;
  int tcp_fd_ = -1;
  bool tcp_ok_ = false;
  std::atomic<int> tcp_queries_{0};
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::thread tcp_thread_;
  std::mutex mutex_;
  std::map<std::string, int> counts_;
};

// The acceptance check of DNS inside the sandbox: an allowed name resolves
// (getent, curl and node without the proxy, a C client by the address it
// got); a denied one does not, and its query never reaches the upstream.
TEST(NetworkFilter, AllowedNamesResolveInsideAndDeniedOnesNeverLeave) {
  if (::access("/usr/bin/gcc", X_OK) != 0) GTEST_SKIP() << "no gcc to build the static C client";
  served_files files;
  http_server server(files.root());
  dns_test_server dns({"allowed.test", "denied.test"});
  temp_dir ws, dir;
  ::chmod(ws.path().c_str(), 0755);
  const std::string client = ws.path() + "/client";
  ASSERT_EQ(std::system(("gcc -static -O1 -o " + client + " " + ws.write("client.c", plain_client_source) + " 2>&1").c_str()), 0);
  const std::string port = port_text(server.port());
  const std::string policy = filtered_policy(
      dir, "[" + allow_rule("allowed.test") + ", " + allow_rule("127.0.0.1", server.port()) + "]");
  std::string script = "getent hosts allowed.test; echo rc=$?; getent hosts denied.test; echo rc=$?; " +
                       curl("--noproxy '*' -o /dev/null -w '%{http_code}\\n' http://allowed.test:" + port + "/file") +
                       "; " + client + " 127.0.0.1 " + port + "; ";
  const bool node = ::access("/usr/bin/node", X_OK) == 0;
  if (node) {
    for (const char* name : {"allowed.test", "denied.test"}) {
      script += std::string("node -e \"fetch('http://") + name + ":" + port +
                "/file').then(r => console.log('fetch', r.status), e => console.log('fetch failed', e.cause ? "
                "e.cause.code : e.message))\"; ";
    }
  }
  auto r = run_cordon({"--policy", policy}, {"sh", "-c", script}, ws.path(),
                      {"CORDON_DNS_UPSTREAM=127.0.0.1:" + port_text(dns.port())});
  EXPECT_EQ(r.exit_code, 0) << elide(r.all());
  EXPECT_EQ(r.out.rfind("127.0.0.1       allowed.test\nrc=0\nrc=2\n200\nrc=0\nHTTP/1.1 200 OK\n", 0), 0u)
      << elide(r.all());
  EXPECT_GT(dns.queries("allowed.test"), 0);
  EXPECT_EQ(dns.queries("denied.test"), 0) << "a denied name reached the upstream resolver";
  auto resolved = connections_to(r.report, "allowed.test", 53);
  ASSERT_FALSE(resolved.empty()) << r.report["network"].dump(2);
  for (const auto& c : resolved) {
    EXPECT_EQ(c["protocol"], "dns");
    EXPECT_EQ(c["action"], "allow") << c.dump();
    EXPECT_EQ(c["rule"], 0) << c.dump();
  }
  auto refused = connections_to(r.report, "denied.test", 53);
  ASSERT_FALSE(refused.empty()) << r.report["network"].dump(2);
  for (const auto& c : refused) {
    EXPECT_EQ(c["action"], "deny") << c.dump();
    EXPECT_EQ(c["rule"], "default") << c.dump();
  }
  std::set<std::string> sources;
  for (const auto& c : connections_to(r.report, "allowed.test", server.port())) {
    EXPECT_EQ(c["protocol"], "transparent") << c.dump();
    EXPECT_EQ(c["action"], "allow") << c.dump();
    EXPECT_EQ(c["rule"], 0) << c.dump();
    sources.insert(c["name_source"].get<std::string>());
  }
  EXPECT_TRUE(sources.count("http_host") == 1 && sources.count("dns") == 1) << r.report["network"].dump(2);
  EXPECT_EQ(report_schema_verdict(r.report), "valid") << r.report.dump(2);
  if (!node) GTEST_SKIP() << "no node: getent, curl and the C client were checked";
  EXPECT_NE(r.out.find("fetch 200\n"), std::string::npos) << elide(r.all());
  EXPECT_NE(r.out.find("fetch failed ENOTFOUND\n"), std::string::npos) << elide(r.all());
}

// DNS over TCP inside the sandbox (src/broker/dns_tcp.cpp): python3 sends
// two length-prefixed queries on one TCP connection to 127.0.0.1:53; the
// allowed name is answered by the upstream over TCP, the denied one
// NXDOMAIN without reaching it.
constexpr const char* dns_over_tcp_client = R"(
import socket, struct
def query(name, ident):
    labels = b''.join(bytes([len(l)]) + l.encode() for l in name.split('.'))
    return struct.pack('>HHHHHH', ident, 0x0100, 1, 0, 0, 0) + labels + b'\0' + struct.pack('>HH', 1, 1)
def read(s, n):
    got = b''
    while len(got) < n:
        more = s.recv(n - len(got))
        if not more:
            raise SystemExit('closed')
        got += more
    return got
s = socket.create_connection(('127.0.0.1', 53), timeout=10)
for ident, name in enumerate(['allowed.test', 'denied.test'], 1):
    m = query(name, ident)
    s.sendall(struct.pack('>H', len(m)) + m)
    r = read(s, struct.unpack('>H', read(s, 2))[0])
    print(name, 'rcode', r[3] & 15, 'answer', r[-4:].hex() if r[7] else '-')
)";

TEST(NetworkFilter, DnsOverTcpResolvesAllowedNamesOnly) {
  if (::access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/python3 for the DNS-over-TCP client";
  dns_test_server dns({"allowed.test", "denied.test"});
  ASSERT_TRUE(dns.serves_tcp());
  temp_dir ws, dir;
  ::chmod(ws.path().c_str(), 0755);
  const std::string policy = filtered_policy(dir, "[" + allow_rule("allowed.test", 443) + "]");
  auto r = run_cordon({"--policy", policy}, {"/usr/bin/python3", "-c", dns_over_tcp_client}, ws.path(),
                      {"CORDON_DNS_UPSTREAM=127.0.0.1:" + port_text(dns.port())});
  EXPECT_EQ(r.exit_code, 0) << elide(r.all());
  EXPECT_EQ(r.out, "allowed.test rcode 0 answer 7f000001\ndenied.test rcode 3 answer -\n") << elide(r.all());
  EXPECT_EQ(dns.queries("allowed.test"), 1);
  EXPECT_EQ(dns.tcp_queries(), 1);
  EXPECT_EQ(dns.queries("denied.test"), 0) << "a denied name reached the upstream resolver";
  auto allowed = connections_to(r.report, "allowed.test", 53);
  ASSERT_EQ(allowed.size(), 1u) << r.report["network"].dump(2);
  EXPECT_EQ(allowed[0]["protocol"], "dns_tcp");
  EXPECT_EQ(allowed[0]["action"], "allow");
  EXPECT_EQ(allowed[0]["rule"], 0);
  auto denied = connections_to(r.report, "denied.test", 53);
  ASSERT_EQ(denied.size(), 1u) << r.report["network"].dump(2);
  EXPECT_EQ(denied[0]["action"], "deny");
  EXPECT_EQ(denied[0]["rule"], "default");
  EXPECT_EQ(report_schema_verdict(r.report), "valid") << r.report.dump(2);
}

TEST(NetworkFilter, ANameResolvingToLoopbackNeedsAnIpRule) {
  served_files files;
  http_server server(files.root());
  temp_dir ws, dir;
  const std::string port = port_text(server.port());
  const std::string fetch = curl("http://localhost:" + port + "/file") + "; " +
                            curl_head("-p http://localhost:" + port + "/file");
  {
    SCOPED_TRACE("a name rule only");
    auto r = run_cordon({"--policy", filtered_policy(dir, "[" + allow_rule("localhost") + "]")}, {"sh", "-c", fetch},
                        ws.path());
    EXPECT_EQ(r.exit_code, 0) << elide(r.all());
    EXPECT_EQ(server.connections(), 0);
    EXPECT_EQ(r.out.find(known_body()), std::string::npos) << elide(r.out);
    EXPECT_NE(r.out.find("X-Cordon-Rule: 0\r\n"), std::string::npos) << elide(r.out);
    EXPECT_NE(r.out.find("connect=403"), std::string::npos) << elide(r.out);
    auto refused = connections_to(r.report, "localhost", server.port());
    ASSERT_EQ(refused.size(), 2u) << r.report["network"].dump(2);
    for (const auto& c : refused) {
      EXPECT_EQ(c["rule"], 0) << c.dump();
      EXPECT_EQ(c["action"], "deny") << c.dump();
      EXPECT_FALSE(c.contains("address")) << c.dump();
      const std::string reason = c.value("reason", "");
      EXPECT_NE(reason.find("non-public"), std::string::npos) << c.dump();
      EXPECT_NE(reason.find("127.0.0.1"), std::string::npos) << c.dump();
    }
  }
  {
    SCOPED_TRACE("`*` does not reach loopback either");
    auto r = run_cordon({"--policy", filtered_policy(dir, "[" + allow_rule("*") + "]")},
                        {"sh", "-c", curl_head("http://127.0.0.1:" + port + "/file")}, ws.path());
    EXPECT_NE(r.out.find("X-Cordon-Rule: 0\r\n"), std::string::npos) << elide(r.out);
    EXPECT_EQ(server.connections(), 0);
    auto refused = connections_to(r.report, "127.0.0.1", server.port());
    ASSERT_EQ(refused.size(), 1u);
    EXPECT_EQ(refused[0]["action"], "deny");
    EXPECT_NE(refused[0].value("reason", "").find("127.0.0.1"), std::string::npos) << refused[0].dump();
  }
  {
    SCOPED_TRACE("with the IP rule");
    const std::string rules = "[" + allow_rule("127.0.0.1", server.port()) + ", " + allow_rule("localhost") + "]";
    auto r = run_cordon({"--policy", filtered_policy(dir, rules)}, {"sh", "-c", fetch}, ws.path());
    EXPECT_EQ(r.exit_code, 0) << elide(r.all());
    EXPECT_EQ(count_of(r.out, known_body() + "rc=0\n"), 1u) << elide(r.all());
    EXPECT_NE(r.out.find("connect=200"), std::string::npos) << elide(r.out);
    EXPECT_EQ(server.connections(), 2);
    auto ok = connections_to(r.report, "localhost", server.port());
    ASSERT_EQ(ok.size(), 2u) << r.report["network"].dump(2);
    for (const auto& c : ok) {
      EXPECT_EQ(c["action"], "allow") << c.dump();
      EXPECT_EQ(c["address"], "127.0.0.1") << c.dump();
      EXPECT_GT(c["bytes_received"].get<std::uint64_t>(), 0u) << c.dump();
    }
  }
}

TEST(NetworkFilter, AnIpv6LiteralRuleReachesTheHostsIpv6Loopback) {
  served_files files;
  http_server server(files.root(), /*ipv6=*/true);
  temp_dir ws, dir;
  const std::string port = port_text(server.port());
  const std::string policy = filtered_policy(dir, "[" + allow_rule("::1", server.port()) + "]");
  auto r = run_cordon({"--policy", policy},
                      {"sh", "-c", curl("-p http://[::1]:" + port + "/file") + "; " +
                                       curl_head("-p http://[::1]:1/")},
                      ws.path());
  EXPECT_EQ(r.exit_code, 0) << elide(r.all());
  EXPECT_NE(r.out.find(known_body() + "rc=0\n"), std::string::npos) << elide(r.all());
  EXPECT_NE(r.out.find("X-Cordon-Rule: default\r\n"), std::string::npos) << elide(r.out);
  EXPECT_EQ(server.connections(), 1);
  expect_entry(r.report, "http_connect", "::1", server.port(), 0, "allow");
}

// Only 127.0.0.1:3128 is the broker: the same port on another loopback
// address is an attempt of its own. No rule allows port 3128, so it fails at
// once (EACCES) and is listed, like UDP other than the sandbox's DNS.
TEST(NetworkFilter, TheBrokerPortOnAnotherLoopbackAddressIsRecorded) {
  temp_dir ws, dir;
  const std::string policy = filtered_policy(dir, "[" + allow_rule("127.0.0.1", 8) + "]");
  const std::string probe =
      "import socket, errno\n"
      "for host in ('127.0.0.2', '::1'):\n"
      "  try:\n"
      "    socket.create_connection((host, 3128), 3)\n"
      "    print('connected')\n"
      "  except OSError as e:\n"
      "    print('refused', errno.errorcode.get(e.errno, e.errno))\n"
      "u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
      "try:\n"
      "  u.connect(('127.0.0.1', 9))\n"
      "  print('udp connected')\n"
      "except OSError as e:\n"
      "  print('udp refused', errno.errorcode.get(e.errno, e.errno))\n";
  auto r = run_cordon({"--policy", policy}, {"python3", "-c", probe}, ws.path());
  EXPECT_EQ(r.exit_code, 0) << elide(r.all());
  EXPECT_EQ(r.out, "refused EACCES\nrefused EACCES\nudp refused EACCES\n") << elide(r.all());
  EXPECT_TRUE(has_violation(r.report, "network_connect", "127.0.0.2:3128")) << r.report["violations"].dump();
  EXPECT_TRUE(has_violation(r.report, "network_connect", "[::1]:3128")) << r.report["violations"].dump();
  EXPECT_TRUE(has_violation(r.report, "network_connect", "127.0.0.1:9 (udp)")) << r.report["violations"].dump();
}

TEST(NetworkFilter, AFilteredReportMatchesTheSchema) {
  served_files files;
  http_server server(files.root());
  temp_dir ws, dir;
  const std::string port = port_text(server.port());
  const std::string policy = filtered_policy(dir, "[" + deny_rule("127.0.0.1", 1) + ", " +
                                                      allow_rule("127.0.0.1", server.port()) + "]");
  auto r = run_cordon({"--policy", policy},
                      {"sh", "-c",
                       curl("-o /dev/null http://127.0.0.1:" + port + "/file") + "; " +
                           curl("-o /dev/null http://127.0.0.1:1/") + "; " +
                           curl("-o /dev/null -p http://example.invalid/") + "; " +
                           curl("-o /dev/null --noproxy '*' http://127.0.0.1:" + port + "/") + "; " +
                           "printf 'garbage\\r\\n\\r\\n' | python3 -c \"$0\"",
                       "import socket, sys\ns = socket.create_connection(('127.0.0.1', 3128), 10)\n"
                       "s.sendall(sys.stdin.buffer.read())\nprint(s.recv(100).split(b'\\r\\n')[0].decode())\n"},
                      ws.path());
  EXPECT_EQ(r.exit_code, 0) << elide(r.all());
  EXPECT_NE(r.out.find("HTTP/1.1 400"), std::string::npos) << elide(r.out);
  const json& n = r.report["network"];
  ASSERT_TRUE(n.is_object()) << r.report.dump(2);
  EXPECT_EQ(n["listeners"], json({"127.0.0.1:3128", "/dev/cordon-proxy.sock", "transparent:3129"}));
  EXPECT_EQ(n["total"], 5) << n.dump(2);
  EXPECT_EQ(n["allowed"], 2) << n.dump(2);  // through the proxy, and without it (transparent)
  EXPECT_EQ(n["denied"], 2) << n.dump(2);
  EXPECT_EQ(n["malformed"], 1) << n.dump(2);  // the garbage request: no rule consulted
  EXPECT_EQ(n["unreachable"], 0) << n.dump(2);
  EXPECT_EQ(n["error"], 0) << n.dump(2);
  EXPECT_EQ(n["not_recorded"], 0);
  EXPECT_EQ(n["connections"].size(), 5u);
  for (const auto& c : n["connections"]) EXPECT_GE(c["duration_ms"].get<std::int64_t>(), 0);
  bool saw_unknown = false;
  for (const auto& c : n["connections"]) {
    if (c["protocol"] != "unknown") continue;
    saw_unknown = true;
    EXPECT_EQ(c["action"], "malformed") << c.dump();
    EXPECT_TRUE(c["rule"].is_null()) << c.dump();
  }
  EXPECT_TRUE(saw_unknown) << n.dump(2);
  EXPECT_EQ(report_schema_verdict(r.report), "valid") << r.report.dump(2);
  // Not filtered: no network object at all (and still valid).
  auto denied = run_sh(ws.path(), "true");
  EXPECT_FALSE(denied.report.contains("network")) << denied.report.dump(2);
}

TEST(NetworkFilter, ControlsAreEnforcedAndProbeAgrees) {
  temp_dir ws, dir;
  auto r = run_cordon({"--policy", filtered_policy(dir, "[]")}, {"true"}, ws.path());
  EXPECT_EQ(r.exit_code, 0) << elide(r.all());
  EXPECT_EQ(r.report["controls"]["network_filter"]["level"], "enforced") << r.report["controls"].dump(2);
  EXPECT_EQ(r.report["controls"]["network_deny"]["level"], "enforced") << r.report["controls"].dump(2);
  EXPECT_NE(r.report["controls"]["network_filter"]["mechanism"].get<std::string>().find("127.0.0.1:3128"),
            std::string::npos);
  EXPECT_EQ(r.report["network"]["total"], 0);
  const json probe = probe_json();
  ASSERT_TRUE(probe.is_object());
  EXPECT_EQ(probe["best"]["network_filter"]["level"], "enforced") << probe["best"].dump(2);
}

// The sandbox's loopback carries every connection to the broker: its
// namespace uses cubic whatever the host's default, or reno where a
// namespace may not choose cubic (docs/network.md, "The sandbox's loopback
// uses cubic"); the host's own setting is untouched.
TEST(NetworkFilter, TheSandboxsLoopbackUsesCubicAndTheHostKeepsItsChoice) {
  auto read_line = [](const char* path) {
    std::string line;
    std::getline(std::ifstream(path), line);
    return line;
  };
  // What a namespace other than the host's may set (tcp(7), "tcp_allowed_congestion_control");
  // reno is always there.
  const std::string allowed = read_line("/proc/sys/net/ipv4/tcp_allowed_congestion_control");
  const std::string expected = (" " + allowed + " ").find(" cubic ") != std::string::npos ? "cubic" : "reno";
  const std::string host_before = read_line("/proc/sys/net/ipv4/tcp_congestion_control");
  temp_dir ws, dir;
  auto r = run_cordon({"--policy", filtered_policy(dir, "[]")}, {"cat", "/proc/sys/net/ipv4/tcp_congestion_control"},
                      ws.path());
  EXPECT_EQ(r.exit_code, 0) << elide(r.all());
  EXPECT_EQ(r.out, expected + "\n") << "host default: " << host_before << ", allowed in a namespace: " << allowed;
  EXPECT_EQ(read_line("/proc/sys/net/ipv4/tcp_congestion_control"), host_before);
}

TEST(NetworkFilter, ProxyVariablesAreSetAndOnlyAnExplicitSettingWins) {
  temp_dir ws, dir;
  const std::string policy = filtered_policy(dir, "[]");
  const std::string script = "env | grep -i '_proxy=' | sort";
  const std::string expected =
      "ALL_PROXY=socks5h://127.0.0.1:3128\nHTTPS_PROXY=http://127.0.0.1:3128\nHTTP_PROXY=http://127.0.0.1:3128\n"
      "NO_PROXY=\nall_proxy=socks5h://127.0.0.1:3128\nhttp_proxy=http://127.0.0.1:3128\n"
      "https_proxy=http://127.0.0.1:3128\nno_proxy=\n";
  auto plain = run_cordon({"--policy", policy}, {"sh", "-c", script}, ws.path());
  EXPECT_EQ(plain.exit_code, 0) << plain.all();
  EXPECT_EQ(plain.out, expected);
  // A host proxy passed through is replaced (it would be unreachable inside).
  auto passed = run_cordon({"--policy", policy, "--env", "HTTP_PROXY", "--env", "no_proxy"}, {"sh", "-c", script},
                           ws.path(), {"HTTP_PROXY=http://host-proxy.invalid:8080", "no_proxy=*"});
  EXPECT_EQ(passed.out, expected) << passed.all();
  // An explicit setting wins, for both cases of the name it sets (curl and
  // python read the lowercase one first, so setting only one would do nothing).
  auto set = run_cordon({"--policy", policy, "--setenv", "NO_PROXY=x", "--setenv", "https_proxy=http://p:1"},
                        {"sh", "-c", script}, ws.path());
  EXPECT_EQ(set.exit_code, 0) << set.all();
  for (const char* line : {"NO_PROXY=x\n", "no_proxy=x\n", "https_proxy=http://p:1\n", "HTTPS_PROXY=http://p:1\n",
                           "HTTP_PROXY=http://127.0.0.1:3128\n", "ALL_PROXY=socks5h://127.0.0.1:3128\n"}) {
    EXPECT_NE(set.out.find(line), std::string::npos) << line << set.out;
  }
  EXPECT_EQ(count_of(set.out, "\n"), 8u) << set.out;
  // Not filtered: none of them.
  auto denied = run_sh(ws.path(), script + "; true");
  EXPECT_EQ(denied.out, "") << denied.all();
}

TEST(NetworkFilter, AllowHostFlagFiltersLikeARule) {
  served_files files;
  http_server allowed(files.root()), other(files.root());
  temp_dir ws;
  auto r = run_cordon({"--allow-host", "127.0.0.1:" + port_text(allowed.port()), "--allow-host", "example.invalid"},
                      {"sh", "-c",
                       curl("http://127.0.0.1:" + port_text(allowed.port()) + "/file") + "; " +
                           curl_head("http://127.0.0.1:" + port_text(other.port()) + "/file")},
                      ws.path());
  EXPECT_EQ(r.exit_code, 0) << elide(r.all());
  EXPECT_NE(r.out.find(known_body() + "rc=0\n"), std::string::npos) << elide(r.all());
  EXPECT_NE(r.out.find("X-Cordon-Rule: default\r\n"), std::string::npos) << elide(r.out);
  EXPECT_EQ(allowed.connections(), 1);
  EXPECT_EQ(other.connections(), 0);
  expect_entry(r.report, "http_forward", "127.0.0.1", allowed.port(), 0, "allow");
  expect_entry(r.report, "http_forward", "127.0.0.1", other.port(), "default", "deny");
  EXPECT_EQ(r.report["controls"]["network_filter"]["level"], "enforced");

  // Usage errors: nothing runs.
  for (const std::vector<std::string>& flags : std::vector<std::vector<std::string>>{
           {"--allow-host", "127.0.0.1:" + port_text(allowed.port()), "--net", "none"},
           {"--net", "any", "--allow-host", "127.0.0.1"},
           {"--allow-host", "127.0.0.1:99999"},
           {"--allow-host", "127.0.0.1:"},
           {"--allow-host", "[::1"}}) {
    SCOPED_TRACE(flags[0] + " " + flags[1] + " " + flags.back());
    auto bad = run_sh(ws.path(), "touch ran", flags);
    EXPECT_EQ(bad.exit_code, 125) << bad.all();
    EXPECT_EQ(bad.err.rfind("cordon: usage_error: ", 0), 0u) << bad.err;
    EXPECT_FALSE(fs::exists(ws.path() + "/ran"));
  }
  captured help = run_cli({"run", "--help"}, "/");
  EXPECT_NE(help.out.find("--allow-host"), std::string::npos) << help.out;
  // An invalid host pattern is refused too.
  auto invalid = run_sh(ws.path(), "touch ran", {"--allow-host", "http://x.example"});
  EXPECT_EQ(invalid.exit_code, 125) << invalid.all();
  EXPECT_FALSE(fs::exists(ws.path() + "/ran"));
  EXPECT_EQ(allowed.connections(), 1);
}

TEST(NetworkFilter, ManyConcurrentTunnelsWorkUnderTheUsualDescriptorLimit) {
  // 1024 is the soft RLIMIT_NOFILE most shells and services start with; 300
  // open tunnels is well below the broker's documented 512 connections, but
  // each one holds six of the supervisor's descriptors (two sockets, two
  // splice pipes): the supervisor must raise its own soft limit.
  served_files files;
  http_server server(files.root());  // holds each connection until its request head (or 5 s)
  temp_dir ws, dir;
  const std::string policy = filtered_policy(dir, "[" + allow_rule("127.0.0.1", server.port()) + "]");
  const std::string script =
      "import socket\n"
      "tunnels = []\n"
      "ok = 0\n"
      "for _ in range(300):\n"
      "  s = socket.create_connection(('127.0.0.1', 3128), 10)\n"
      "  s.settimeout(10)\n"
      "  s.sendall(b'CONNECT 127.0.0.1:" + port_text(server.port()) + " HTTP/1.1\\r\\n\\r\\n')\n"
      "  head = s.recv(200)\n"
      "  ok += head.startswith(b'HTTP/1.1 200')\n"
      "  if not head.startswith(b'HTTP/1.1 200'): print(head.split(b'\\r\\n')[0].decode())\n"
      "  tunnels.append(s)\n"
      "print('tunnels', ok)\n";
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &saved), 0);
  if (saved.rlim_max != RLIM_INFINITY && saved.rlim_max < 4096) {
    GTEST_SKIP() << "the hard descriptor limit here is " << saved.rlim_max << ": too low for 300 relayed connections";
  }
  rlimit usual = saved;
  usual.rlim_cur = std::min<rlim_t>(saved.rlim_max, 1024);
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &usual), 0);  // cordon inherits it
  auto r = run_cordon({"--policy", policy}, {"python3", "-c", script}, ws.path());
  ::setrlimit(RLIMIT_NOFILE, &saved);
  EXPECT_EQ(r.exit_code, 0) << r.all();
  EXPECT_NE(r.out.find("tunnels 300\n"), std::string::npos) << r.all().substr(0, 2000);
  EXPECT_EQ(server.connections(), 300);
  EXPECT_EQ(r.report["network"]["allowed"], 300) << r.report["network"].dump();
}

// Sockets directly in /tmp (where a careless implementation would put one).
std::set<std::string> sockets_in_tmp() {
  std::set<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/tmp", fs::directory_options::skip_permission_denied, ec)) {
    if (e.is_socket(ec)) names.insert(e.path().filename().string());
  }
  return names;
}

// Entries named like the broker's socket in the host's usual scratch places (three levels deep).
std::vector<std::string> proxy_sockets_on_host() {
  std::vector<std::string> found;
  for (const char* top : {"/tmp", "/var/tmp", "/run", "/dev", "/dev/shm"}) {
    std::error_code ec;
    fs::recursive_directory_iterator it(top, fs::directory_options::skip_permission_denied, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
      if (it.depth() >= 2) it.disable_recursion_pending();
      if (it->path().filename().string().find("cordon-proxy") != std::string::npos) found.push_back(it->path());
    }
  }
  return found;
}

// Is anything on this (host) network namespace listening on TCP port 3128?
bool host_listens_on_3128() {
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(table);
    std::string line;
    std::getline(in, line);
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string slot, local, remote, state;
      fields >> slot >> local >> remote >> state;
      if (state == "0A" && local.size() > 5 && local.substr(local.size() - 5) == ":0C38") return true;
    }
  }
  return false;
}

TEST(NetworkFilter, TheListenersExistOnlyInsideAndNothingIsLeftBehind) {
  served_files files;
  http_server server(files.root());
  temp_dir ws, dir;
  const bool listened_before = host_listens_on_3128();
  const auto tmp_before = sockets_in_tmp();
  ASSERT_EQ(proxy_sockets_on_host(), std::vector<std::string>{});
  // While the command runs (after it has used the broker), look at the host.
  std::atomic<bool> host_had_socket{false}, host_listened{false}, looked{false};
  std::thread watcher([&] {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!fs::exists(ws.path() + "/fetched") && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    host_had_socket = !proxy_sockets_on_host().empty();
    host_listened = !listened_before && host_listens_on_3128();
    looked = true;
    std::ofstream(ws.path() + "/looked") << "";
  });
  auto r = run_cordon({"--policy", filtered_policy(dir, "[" + allow_rule("127.0.0.1", server.port()) + "]")},
                      {"sh", "-c",
                       curl("-o fetched-body http://127.0.0.1:" + port_text(server.port()) + "/file") +
                           " && touch fetched; i=0; while [ ! -e looked ] && [ $i -lt 100 ]; do sleep 0.05; "
                           "i=$((i+1)); done; test -S /dev/cordon-proxy.sock && echo socket-inside"},
                      ws.path());
  watcher.join();
  EXPECT_EQ(r.exit_code, 0) << elide(r.all());
  EXPECT_NE(r.out.find("rc=0\nsocket-inside\n"), std::string::npos) << elide(r.all());
  EXPECT_TRUE(looked);
  EXPECT_FALSE(host_had_socket);
  EXPECT_FALSE(host_listened);
  EXPECT_EQ(server.connections(), 1);
  // Afterwards: no socket anywhere, the workspace holds only what the command made.
  EXPECT_EQ(proxy_sockets_on_host(), std::vector<std::string>{});
  EXPECT_EQ(host_listens_on_3128(), listened_before);
  for (const auto& name : sockets_in_tmp()) EXPECT_TRUE(tmp_before.count(name)) << "/tmp/" << name << " appeared";
  std::set<std::string> in_ws;
  for (const auto& e : fs::directory_iterator(ws.path())) in_ws.insert(e.path().filename().string());
  EXPECT_EQ(in_ws, (std::set<std::string>{"fetched", "fetched-body", "looked"}));
}

}  // namespace
}  // namespace cordon::test
