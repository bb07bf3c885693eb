// network_tls_test.cpp — tls "terminate" rules end to end (docs/tls.md):
// curl inside a filtered sandbox reaches a loopback TLS server through the
// broker, which terminates the TLS with the run's CA (trusted inside through
// SSL_CERT_FILE and friends) and verifies the server against the test's own
// CA (CORDON_UPSTREAM_CA_FILE): a GET passes, a POST is refused with 403,
// and a credential reaches the server while the sandbox never sees it.
// Each way a terminated connection can end has its own action in the report.
#include <gtest/gtest.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <unistd.h>

#include <csignal>

#include <atomic>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "broker/http_exchange.h"
#include "broker/tls_authority.h"
#include "harness.h"

namespace cordon::test {
namespace {

using json = nlohmann::json;

// The test's TLS peers write with SSL_write on plain descriptors: a peer
// the broker already closed must fail that write (EPIPE), not kill the test.
[[maybe_unused]] const bool sigpipe_ignored = [] {
  ::signal(SIGPIPE, SIG_IGN);
  return true;
}();

// A TLS server on 127.0.0.1 with a leaf of its own test CA. It answers each
// request "200" with "auth-ok" when Authorization is `expected`, "auth-none"
// when absent, "auth-other" otherwise, and counts the requests.
class tls_server {
 public:
  explicit tls_server(std::string expected) : expected_(std::move(expected)) {
    authority_ = *broker::tls_authority::create();
    ctx_ = *authority_->server_context("127.0.0.1");
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd_, 16) != 0) return;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { loop(); });
  }
  ~tls_server() {
    stopping_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    if (thread_.joinable()) thread_.join();
    ::close(fd_);
  }
  int port() const { return port_; }
  int requests() const { return requests_.load(); }
  std::string ca_pem() const { return authority_->certificate_pem(); }

 private:
  void loop() {
    while (!stopping_) {
      const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) return;
      timeval tv{5, 0};
      ::setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      SSL* ssl = SSL_new(ctx_);
      SSL_set_fd(ssl, c);
      if (SSL_accept(ssl) == 1) serve(ssl);
      SSL_free(ssl);
      ::close(c);
    }
  }
  void serve(SSL* ssl) {
    while (true) {
      std::string head;
      char ch;
      while (head.find("\r\n\r\n") == std::string::npos && SSL_read(ssl, &ch, 1) == 1) head += ch;
      if (head.find("\r\n\r\n") == std::string::npos) return;
      ++requests_;
      const auto request = broker::parse_request_head(head);
      if (broker::header_value(request.headers, "Upgrade")) {  // a WebSocket, as far as the broker can tell
        serve_websocket(ssl);
        return;
      }
      const auto auth = broker::header_value(request.headers, "Authorization");
      const std::string body = !auth ? "auth-none" : *auth == expected_ ? "auth-ok" : "auth-other";
      const std::string response =
          "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
      if (SSL_write(ssl, response.data(), static_cast<int>(response.size())) <= 0) return;
    }
  }
  // 101, then every byte read echoed back until the connection ends (the
  // broker never parses frames, so the bytes need not be frames).
  static void serve_websocket(SSL* ssl) {
    const std::string switched = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n";
    if (SSL_write(ssl, switched.data(), static_cast<int>(switched.size())) <= 0) return;
    char buf[16384];
    while (true) {
      const int n = SSL_read(ssl, buf, sizeof buf);
      if (n <= 0 || SSL_write(ssl, buf, n) != n) return;
    }
  }
  std::string expected_;
  std::shared_ptr<broker::tls_authority> authority_;
  SSL_CTX* ctx_ = nullptr;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> requests_{0};
  std::thread thread_;
};

std::string random_secret() {
  std::random_device device;
  return "cordon-test-secret-" + std::to_string(device()) + std::to_string(device());
}

std::string policy_file(const temp_dir& dir, int port, bool credential, bool websocket = false) {
  const std::string path = dir.path() + "/policy.json";
  std::ofstream(path) << R"({"schema_version": 1, "name": "net-tls",
    "filesystem": {"read": "restricted", "readable": ["{workspace}"], "writable": ["{workspace}", "{run_tmp}"]},
    "network": {"mode": "filtered", "default_action": "deny",
      "rules": [{"host": "127.0.0.1", "port": )" << port
                      << R"(, "action": "allow", "tls": "terminate", "methods": ["GET", "HEAD"])"
                      << (websocket ? R"(, "websocket": true)" : "") << "}]"
                      << (credential ? R"(, "credentials": [{"host": "127.0.0.1", "header": "Authorization",
        "value_from": {"env": "CORDON_TEST_TOKEN"}, "format": "Bearer {}", "placeholder_env": "CORDON_TEST_TOKEN"}])"
                                     : "")
                      << R"(},
    "environment": {"set": {"PATH": "/usr/bin:/bin", "HOME": "/tmp"}}})";
  return path;
}

// The server's CA as the broker's upstream trust (CORDON_UPSTREAM_CA_FILE),
// in `dir`, both readable by an unprivileged supervisor.
std::string readable_upstream_ca(const temp_dir& dir, const tls_server& server) {
  const std::string ca = dir.write("upstream-ca.pem", server.ca_pem());
  ::chmod(dir.path().c_str(), 0755);
  ::chmod(ca.c_str(), 0644);
  return ca;
}

// The report's counters agree with its entries (fewer than 256: all listed).
void expect_counters_match(const json& net) {
  std::map<std::string, std::uint64_t> n;
  for (const auto& c : net["connections"]) ++n[c["action"].get<std::string>()];
  EXPECT_EQ(net["total"], net["connections"].size()) << net.dump(2);
  EXPECT_EQ(net["allowed"], n["allow"]) << net.dump(2);
  EXPECT_EQ(net["denied"], n["deny"]) << net.dump(2);
  EXPECT_EQ(net["unreachable"], n["unreachable"]) << net.dump(2);
  EXPECT_EQ(net["malformed"], n["malformed"]) << net.dump(2);
  EXPECT_EQ(net["error"], n["error"]) << net.dump(2);
}

// "action | reason" of each terminated connection of a run report, sorted;
// checks first that the counters agree with the entries.
std::vector<std::string> terminated_outcomes(const json& report) {
  if (!report.contains("network")) return {"no network evidence"};
  const json& net = report["network"];
  expect_counters_match(net);
  std::vector<std::string> out;
  for (const auto& c : net["connections"]) {
    if (c.value("tls", "") != "terminate") continue;
    EXPECT_EQ(c["rule"], 0) << c.dump();
    out.push_back(c["action"].get<std::string>() + " | " + c.value("reason", ""));
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(NetworkTls, GetPassesAndPostIsRefusedThroughTheProxyAndTransparently) {
  tls_server server("unused");
  ASSERT_GT(server.port(), 0);
  temp_dir ws, dir;
  const std::string ca = dir.write("upstream-ca.pem", server.ca_pem());
  ::chmod(dir.path().c_str(), 0755);
  ::chmod(ca.c_str(), 0644);
  const std::string url = "https://127.0.0.1:" + std::to_string(server.port()) + "/api/x";
  const std::string script =
      "curl -sS -m 10 " + url + "; echo \" get=$?\"; "
      "curl -sS -m 10 -o /dev/null -w 'post=%{http_code}\\n' -X POST -d data " + url + "; "
      "curl -sS -m 10 --noproxy '*' " + url + "; echo \" direct_get=$?\"; "
      "curl -sS -m 10 --noproxy '*' -o /dev/null -w 'direct_post=%{http_code}\\n' -X POST -d data " + url + "; "
      "echo ssl_cert_file=$SSL_CERT_FILE; grep -c 'BEGIN CERTIFICATE' /dev/cordon-ca.pem";
  auto r = run_cordon({"--policy", policy_file(dir, server.port(), false)}, {"sh", "-c", script}, ws.path(),
                      {"CORDON_UPSTREAM_CA_FILE=" + ca});
  EXPECT_EQ(r.exit_code, 0) << r.all();
  EXPECT_NE(r.out.find("auth-none get=0"), std::string::npos) << r.all();
  EXPECT_NE(r.out.find("post=403"), std::string::npos) << r.all();
  EXPECT_NE(r.out.find("auth-none direct_get=0"), std::string::npos) << r.all();
  EXPECT_NE(r.out.find("direct_post=403"), std::string::npos) << r.all();
  EXPECT_NE(r.out.find("ssl_cert_file=/dev/cordon-ca.pem"), std::string::npos) << r.all();
  EXPECT_EQ(server.requests(), 2) << "only the two GETs reach the server";
  ASSERT_TRUE(r.report.contains("network")) << r.all();
  const json& net = r.report["network"];
  EXPECT_EQ(net["tls"]["ca_certificate"], "/dev/cordon-ca.pem");
  std::vector<std::string> methods, actions;
  for (const auto& c : net["connections"]) {
    if (!c.contains("requests")) continue;
    EXPECT_EQ(c["tls"], "terminate");
    for (const auto& q : c["requests"]) {
      methods.push_back(q["method"]);
      actions.push_back(q["action"].get<std::string>() + ":" + std::to_string(q["status"].get<int>()));
      EXPECT_EQ(q["path"], "/api/x");
      EXPECT_EQ(q["host"], "127.0.0.1");
    }
  }
  std::sort(actions.begin(), actions.end());
  EXPECT_EQ(actions, (std::vector<std::string>{"allow:200", "allow:200", "deny:403", "deny:403"})) << net.dump(2);
  // Each connection was served: the refusals are its requests' own.
  EXPECT_EQ(terminated_outcomes(r.report), (std::vector<std::string>{"allow | ", "allow | ", "allow | ", "allow | "}))
      << net.dump(2);
}

TEST(NetworkTls, EachWayATerminatedConnectionEndsHasItsOwnAction) {
  tls_server server("unused");
  ASSERT_GT(server.port(), 0);
  temp_dir ws, dir;
  const std::string ca = dir.write("upstream-ca.pem", server.ca_pem());
  const std::string other_ca = dir.write("other-ca.pem", (*broker::tls_authority::create())->certificate_pem());
  ::chmod(dir.path().c_str(), 0755);
  ::chmod(ca.c_str(), 0644);
  ::chmod(other_ca.c_str(), 0644);
  const std::string port = std::to_string(server.port());
  const std::string url = "https://127.0.0.1:" + port + "/api/x";
  {
    // Served; a client that trusts only another CA (as one pinning its own
    // roots); a client whose SNI names another host than the rule's.
    const std::string pinned = ws.write("pinned-ca.pem", (*broker::tls_authority::create())->certificate_pem());
    const std::string script =
        "curl -sS -m 10 " + url + "; echo \" get=$?\"; "
        "curl -sS -m 10 --cacert " + pinned + " " + url + " 2>/dev/null; echo \"pinned=$?\"; "
        "printf 'GET /api/x HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n\\r\\n' | timeout 10 openssl s_client -quiet "
        "-proxy 127.0.0.1:3128 -connect 127.0.0.1:" + port + " -servername other.test 2>/dev/null | head -c 100 | head -n 1";
    auto r = run_cordon({"--policy", policy_file(dir, server.port(), false)},
                        {"sh", "-c", script}, ws.path(), {"CORDON_UPSTREAM_CA_FILE=" + ca});
    EXPECT_EQ(r.exit_code, 0) << r.all();
    EXPECT_NE(r.out.find("auth-none get=0"), std::string::npos) << r.all();
    EXPECT_NE(r.out.find("pinned=60"), std::string::npos) << "curl: peer certificate not verified\n" << r.all();
    EXPECT_NE(r.out.find("HTTP/1.1 403"), std::string::npos) << r.all();
    EXPECT_EQ(server.requests(), 1) << "only the first GET reaches the server";
    EXPECT_EQ(terminated_outcomes(r.report),
              (std::vector<std::string>{
                  "allow | ",
                  "deny | terminated TLS: TLS server name other.test does not match the host 127.0.0.1",
                  "malformed | terminated TLS: the client's TLS handshake failed: tlsv1 alert unknown ca (SSL routines)"}))
        << r.report.dump(2);
    ASSERT_TRUE(r.report.contains("network")) << r.all();
    for (const auto& c : r.report["network"]["connections"]) {
      if (c.value("tls", "") != "terminate") continue;
      if (c["action"] == "allow") {
        ASSERT_EQ(c["requests"].size(), 1u) << c.dump(2);
        const json& q = c["requests"][0];
        EXPECT_EQ(q["method"], "GET");
        EXPECT_EQ(q["host"], "127.0.0.1");
        EXPECT_EQ(q["path"], "/api/x");
        EXPECT_EQ(q["status"], 200);
        EXPECT_EQ(q["action"], "allow");
        EXPECT_GT(q["bytes_sent"].get<int>(), 0);
        EXPECT_GT(q["bytes_received"].get<int>(), 0);
      } else {
        EXPECT_TRUE(!c.contains("requests") || c["requests"].empty()) << c.dump(2);
      }
    }
  }
  {
    // The destination's certificate is not from the CA the broker trusts.
    auto r = run_cordon({"--policy", policy_file(dir, server.port(), false)},
                        {"sh", "-c", "curl -sS -m 10 -o /dev/null -w 'bad_upstream=%{http_code}\n' " + url}, ws.path(),
                        {"CORDON_UPSTREAM_CA_FILE=" + other_ca});
    EXPECT_NE(r.out.find("bad_upstream=502"), std::string::npos) << r.all();
    EXPECT_EQ(server.requests(), 1) << "nothing reaches the server";
    EXPECT_EQ(terminated_outcomes(r.report),
              (std::vector<std::string>{
                  "unreachable | terminated TLS: upstream TLS failed: self-signed certificate in certificate chain"}))
        << r.all();
  }
}

// The broker reads its upstream trust store after it has answered the
// supervisor (so that the read overlaps the sandbox's set-up): a store it
// cannot read still fails the run before the command starts, with the reason.
TEST(NetworkTls, AnUnreadableUpstreamTrustFileFailsTheRunBeforeTheCommand) {
  temp_dir ws, dir;
  const std::string marker = ws.path() + "/ran";
  auto r = run_cordon({"--policy", policy_file(dir, 9, false)}, {"sh", "-c", "touch ran"}, ws.path(),
                      {"CORDON_UPSTREAM_CA_FILE=" + dir.path() + "/no-such-ca.pem"});
  EXPECT_EQ(r.exit_code, 125) << r.all();
  EXPECT_NE(r.err.find("network broker: tls termination:"), std::string::npos) << r.all();
  EXPECT_NE(r.err.find("no-such-ca.pem"), std::string::npos) << r.all();
  EXPECT_NE(::access(marker.c_str(), F_OK), 0) << "the command ran";
}

TEST(NetworkTls, AnInjectedCredentialReachesTheServerButNeverTheSandbox) {
  const std::string secret = random_secret();
  tls_server server("Bearer " + secret);
  ASSERT_GT(server.port(), 0);
  temp_dir ws, dir;
  const std::string ca = dir.write("upstream-ca.pem", server.ca_pem());
  ::chmod(dir.path().c_str(), 0755);
  ::chmod(ca.c_str(), 0644);
  const std::string url = "https://127.0.0.1:" + std::to_string(server.port()) + "/v1";
  // The command sends its placeholder; then shows everything it can see:
  // its environment, PID 1's (not readable), and every file of its view
  // that it could write or that cordon made for it.
  const std::string script =
      "curl -sS -m 10 -H \"Authorization: Bearer $CORDON_TEST_TOKEN\" " + url + "; echo \" rc=$?\"; "
      "env; tr '\\0' '\\n' < /proc/self/environ; cat /proc/1/environ 2>&1; "
      // At most 1 MiB of each file: a file that grows while it is read (the
      // harness's own capture of this output) must not make the run endless.
      "find /tmp /dev " + ws.path() + " -xdev -type f ! -name out ! -name err -exec head -c 1048576 {} + 2>/dev/null; echo end";
  auto r = run_cordon({"--policy", policy_file(dir, server.port(), true)}, {"sh", "-c", script}, ws.path(),
                      {"CORDON_UPSTREAM_CA_FILE=" + ca, "CORDON_TEST_TOKEN=" + secret});
  EXPECT_EQ(r.exit_code, 0) << r.all();
  EXPECT_NE(r.out.find("auth-ok rc=0"), std::string::npos) << r.all();
  EXPECT_NE(r.out.find("CORDON_TEST_TOKEN=cordon-placeholder"), std::string::npos) << r.all();
  EXPECT_NE(r.out.find("end"), std::string::npos);
  EXPECT_EQ(r.out.find(secret), std::string::npos) << "the secret is visible inside the sandbox";
  EXPECT_EQ(r.report.dump().find(secret), std::string::npos) << "the report must never hold the value";
  ASSERT_TRUE(r.report.contains("network"));
  const json& injections = r.report["network"]["tls"]["injections"];
  ASSERT_EQ(injections.size(), 1u) << r.report["network"].dump(2);
  EXPECT_EQ(injections[0]["header"], "Authorization");
  EXPECT_EQ(injections[0]["count"], 1);
}

TEST(NetworkTls, AMissingSecretStopsTheRunBeforeItStarts) {
  tls_server server("unused");
  temp_dir ws, dir;
  auto r = run_cordon({"--policy", policy_file(dir, server.port(), true)}, {"true"}, ws.path(), {"CORDON_TEST_TOKEN="});
  EXPECT_NE(r.exit_code, 0) << r.all();
  EXPECT_NE(r.all().find("CORDON_TEST_TOKEN"), std::string::npos) << r.all();
  EXPECT_EQ(server.requests(), 0);
}

// A WebSocket through a rule that opts in (docs/tls.md, "WebSocket"):
// Python's ssl module inside the sandbox connects directly (routed
// transparently to the broker), trusts the run's CA through SSL_CERT_FILE,
// sends a hand-written upgrade and gets 256 KiB echoed; an h2c upgrade on
// the same rule is refused with 403. The report holds both requests.
TEST(NetworkTls, AWebsocketUpgradeThroughARealSandboxIsRelayedAndRecorded) {
  tls_server server("unused");
  ASSERT_GT(server.port(), 0);
  temp_dir ws, dir;
  const std::string ca = readable_upstream_ca(dir, server);
  const std::string client = ws.write("ws_client.py", R"PY(import socket, ssl, sys
port = int(sys.argv[1])
def upgrade(protocol):
    s = ssl.create_default_context().wrap_socket(
        socket.create_connection(("127.0.0.1", port), timeout=10), server_hostname="127.0.0.1")
    s.sendall(("GET /ws/ HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: %s\r\nConnection: Upgrade\r\n"
               "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n" % (port, protocol)).encode())
    head = b""
    while b"\r\n\r\n" not in head:
        c = s.recv(1)
        if not c:
            break
        head += c
    print(protocol, head.split(b"\r\n")[0].decode())
    return s
s = upgrade("websocket")
chunk = bytes(range(256)) * 256
echoed = 0
for _ in range(4):
    s.sendall(chunk)
    got = b""
    while len(got) < len(chunk):
        part = s.recv(65536)
        if not part:
            break
        got += part
    echoed += len(got) if got == chunk else 0
print("echoed", echoed)
s.close()
upgrade("h2c").close()
)PY");
  ::chmod(client.c_str(), 0644);
  auto r = run_cordon({"--policy", policy_file(dir, server.port(), false, true)},
                      {"python3", client, std::to_string(server.port())}, ws.path(), {"CORDON_UPSTREAM_CA_FILE=" + ca});
  EXPECT_EQ(r.exit_code, 0) << r.all();
  EXPECT_NE(r.out.find("websocket HTTP/1.1 101 Switching Protocols"), std::string::npos) << r.all();
  EXPECT_NE(r.out.find("echoed 262144"), std::string::npos) << r.all();
  EXPECT_NE(r.out.find("h2c HTTP/1.1 403"), std::string::npos) << r.all();
  EXPECT_EQ(server.requests(), 1) << "only the WebSocket upgrade reaches the server";
  ASSERT_TRUE(r.report.contains("network")) << r.all();
  std::vector<std::string> seen;
  for (const auto& c : r.report["network"]["connections"]) {
    if (!c.contains("requests")) continue;
    for (const auto& q : c["requests"]) {
      seen.push_back(q["action"].get<std::string>() + ":" + std::to_string(q["status"].get<int>()) + ":" +
                     q.value("upgraded", "-") + ":" + std::to_string(q.value("upgraded_bytes_sent", 0)) + ":" +
                     std::to_string(q.value("upgraded_bytes_received", 0)));
    }
  }
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, (std::vector<std::string>{"allow:101:websocket:262144:262144", "deny:403:-:0:0"}))
      << r.report["network"].dump(2);
  EXPECT_EQ(terminated_outcomes(r.report), (std::vector<std::string>{"allow | ", "allow | "})) << r.report.dump(2);
}

}  // namespace
}  // namespace cordon::test
