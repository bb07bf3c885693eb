// broker_tls_test.cpp — rules with tls "terminate" (src/broker/terminate.h,
// docs/tls.md) against a loopback TLS server whose certificate comes from a
// test authority of its own, given to the broker as its upstream CA file:
// the system trust store is never used. Clients speak CONNECT, then TLS
// trusting only the run's authority.
#include <gtest/gtest.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <unistd.h>

#include <atomic>
#include <csignal>

#include <cstdio>
#include <fstream>
#include <map>
#include <optional>

#include "broker/http_exchange.h"
#include "broker/relay_memory.h"
#include "broker/tls_authority.h"
#include "broker/upstream_trust.h"
#include "broker_test_support.h"

namespace cordon::broker::test {
namespace {

constexpr const char* api_host = "api.example.test";

// The test's TLS peers write with SSL_write on plain descriptors: a peer
// the broker already closed must fail that write (EPIPE), not kill the test.
[[maybe_unused]] const bool sigpipe_ignored = [] {
  ::signal(SIGPIPE, SIG_IGN);
  return true;
}();

// A PEM file that removes itself.
struct temp_pem {
  explicit temp_pem(const std::string& pem) {
    char name[] = "/tmp/cordon-tls-test-XXXXXX";
    const int fd = ::mkstemp(name);
    path = name;
    if (fd >= 0) {
      send_all_file(fd, pem);
      ::close(fd);
    }
  }
  static void send_all_file(int fd, const std::string& data) {
    std::size_t at = 0;
    while (at < data.size()) {
      const ssize_t n = ::write(fd, data.data() + at, data.size() - at);
      if (n <= 0) return;
      at += static_cast<std::size_t>(n);
    }
  }
  ~temp_pem() { ::unlink(path.c_str()); }
  std::string path;
};

// Reads an HTTP message head (through the empty line) from `ssl`.
std::string ssl_read_head(SSL* ssl) {
  std::string out;
  char c;
  while (out.find("\r\n\r\n") == std::string::npos && out.size() < 65536) {
    if (SSL_read(ssl, &c, 1) != 1) break;
    out += c;
  }
  return out;
}

std::string ssl_read_exact(SSL* ssl, std::size_t n) {
  std::string out(n, '\0');
  std::size_t got = 0;
  while (got < n) {
    const int r = SSL_read(ssl, out.data() + got, static_cast<int>(n - got));
    if (r <= 0) break;
    got += static_cast<std::size_t>(r);
  }
  out.resize(got);
  return out;
}

bool ssl_write_all(SSL* ssl, const std::string& data) {
  return SSL_write(ssl, data.data(), static_cast<int>(data.size())) == static_cast<int>(data.size());
}

std::size_t content_length(const std::string& head) {
  const auto at = head.find("Content-Length: ");
  return at == std::string::npos ? 0 : std::stoul(head.substr(at + 16));
}

// `n` bytes of a pattern that `seed` changes (so an echo cannot pass for a push).
std::string test_bytes(std::size_t n, char seed) {
  std::string out(n, '\0');
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<char>((i * 7 + static_cast<unsigned char>(seed)) % 251);
  return out;
}

// The upstream: TLS with a leaf of its own test authority; answers every
// request "200" with the request's Authorization field (or "none") as body,
// keeps the connection open, and remembers the heads it got. With `answer`
// set (set_answer) it sends that instead (verbatim, possibly nothing) and closes.
struct tls_upstream {
  tls_upstream() {
    authority = *tls_authority::create();
    ca_file = std::make_unique<temp_pem>(authority->certificate_pem());
    ctx = *authority->server_context(api_host);
    server = std::make_unique<test_server>([this](int fd) { serve(fd); });
  }
  void serve(int fd) {
    SSL* ssl = SSL_new(ctx);
    SSL_set_fd(ssl, fd);
    if (SSL_accept(ssl) == 1) {
      while (true) {
        const std::string head = ssl_read_head(ssl);
        if (head.empty()) break;
        const std::string body = ssl_read_exact(ssl, content_length(head));
        {
          std::lock_guard<std::mutex> lock(mutex);
          heads.push_back(head);
        }
        if (const auto instead = canned_answer()) {
          ssl_write_all(ssl, *instead);
          break;
        }
        const auto request = parse_request_head(head);
        if (websocket && header_value(request.headers, "Upgrade")) {
          serve_websocket(ssl);
          break;
        }
        const std::string auth = header_value(request.headers, "Authorization").value_or("none");
        const std::string answer = auth + "|" + body;
        if (!ssl_write_all(ssl, "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(answer.size()) + "\r\n\r\n" + answer))
          break;
      }
    }
    SSL_free(ssl);
  }
  // A WebSocket server, as far as the broker can tell: 101, then
  // `websocket_push` bytes unasked (a server that speaks first), then every
  // byte it reads echoed back until the connection ends. The broker never
  // parses frames, so the bytes need not be frames.
  void serve_websocket(SSL* ssl) {
    if (!ssl_write_all(ssl, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                            "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n"))
      return;
    if (websocket_push > 0 && !ssl_write_all(ssl, test_bytes(websocket_push, 'S'))) return;
    char buf[16384];
    while (true) {
      const int n = SSL_read(ssl, buf, sizeof buf);
      if (n <= 0 || SSL_write(ssl, buf, n) != n) return;
    }
  }
  std::vector<std::string> seen() {
    std::lock_guard<std::mutex> lock(mutex);
    return heads;
  }
  void set_answer(std::string a) {
    std::lock_guard<std::mutex> lock(mutex);
    canned = std::move(a);
  }
  std::optional<std::string> canned_answer() {
    std::lock_guard<std::mutex> lock(mutex);
    return canned;
  }
  std::shared_ptr<tls_authority> authority;
  std::unique_ptr<temp_pem> ca_file;
  SSL_CTX* ctx = nullptr;
  std::mutex mutex;
  std::vector<std::string> heads;
  std::optional<std::string> canned;  // set_answer()
  std::atomic<bool> websocket{false};      // answer an Upgrade request as serve_websocket() does
  std::atomic<std::size_t> websocket_push{0};
  std::unique_ptr<test_server> server;  // last: stopped first
};

struct tls_client {
  fd_guard fd;
  SSL_CTX* ctx = nullptr;
  SSL* ssl = nullptr;
  ~tls_client() {
    if (ssl) SSL_free(ssl);
    if (ctx) SSL_CTX_free(ctx);
  }
};

// CONNECT through the broker: the socket once the broker answered 200
// (closed when it did not).
fd_guard open_tunnel(int broker_port) {
  fd_guard fd = connect_tcp(broker_port);
  if (fd.get() < 0) return fd;
  send_all(fd.get(), "CONNECT " + std::string(api_host) + ":443 HTTP/1.1\r\nHost: " + api_host + ":443\r\n\r\n");
  if (recv_until(fd.get(), "\r\n\r\n").rfind("HTTP/1.1 200", 0) != 0) return fd_guard();
  return fd;
}

// CONNECT through the broker, then TLS to `sni` trusting only `ca_pem`
// (and checking that the certificate names `sni` unless `check_name` is
// false). Returns a client whose ssl is null when any step failed.
std::unique_ptr<tls_client> connect_through(int broker_port, const std::string& ca_pem, const std::string& sni = api_host,
                                            bool check_name = true) {
  auto c = std::make_unique<tls_client>();
  c->fd = open_tunnel(broker_port);
  if (c->fd.get() < 0) return c;
  c->ctx = SSL_CTX_new(TLS_client_method());
  BIO* bio = BIO_new_mem_buf(ca_pem.data(), static_cast<int>(ca_pem.size()));
  X509* ca = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  X509_STORE_add_cert(SSL_CTX_get_cert_store(c->ctx), ca);
  X509_free(ca);
  SSL_CTX_set_verify(c->ctx, SSL_VERIFY_PEER, nullptr);
  SSL* ssl = SSL_new(c->ctx);
  SSL_set_fd(ssl, c->fd.get());
  SSL_ctrl(ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name, const_cast<char*>(sni.c_str()));
  if (check_name) SSL_set1_host(ssl, sni.c_str());
  if (SSL_connect(ssl) != 1) {
    SSL_free(ssl);
    return c;
  }
  c->ssl = ssl;
  return c;
}

// One request on an open client: its response head and body.
std::pair<std::string, std::string> request(tls_client& c, const std::string& head, const std::string& body = "") {
  if (!ssl_write_all(c.ssl, head + body)) return {};
  const std::string response = ssl_read_head(c.ssl);
  return {response, ssl_read_exact(c.ssl, content_length(response))};
}

struct terminated_broker {
  // `with_authority` false: a broker the supervisor would never start (its
  // run has no CA), to show how an internal failure is recorded.
  // `limits`: the broker's timeouts; `dial_port`: where allowed connections
  // are dialed instead of the test's TLS upstream (0: that upstream).
  terminated_broker(network_rule r, std::vector<tls_credential> credentials = {}, std::string ca_file = {},
                    bool with_authority = true, broker_limits limits = {}, int dial_port = 0,
                    bool trust_read_ahead = false) {
    r.tls = tls_mode::terminate;
    authority = *tls_authority::create();
    int port = 0;
    fd_guard listener = tcp_listener(port);
    broker_options options;
    options.policy = filtered({r});
    options.hooks = local_hooks(dial_port != 0 ? dial_port : upstream.server->port());
    samples.attach(options.hooks);
    options.limits = limits;
    options.listener_names = {"127.0.0.1:" + std::to_string(port)};
    if (with_authority) options.tls.authority = authority;
    options.tls.upstream_ca_file = ca_file.empty() ? upstream.ca_file->path : ca_file;
    options.tls.credentials = std::move(credentials);
    if (trust_read_ahead) {  // as the broker's own process does (broker_options_json.h)
      std::string why;
      trust = upstream_trust::read(options.tls.upstream_ca_file, why);
      EXPECT_TRUE(trust) << why;
      options.tls.upstream = trust;
    }
    auto started = network_broker::start(std::move(options), {listener.release()});
    if (started) broker = std::move(*started);
    broker_port = port;
  }
  network_evidence stop() {
    broker->stop();
    return broker->evidence();
  }
  // Waits (at most 5 s) until `n` connections were recorded: a client that
  // gave up returns before the broker read its last bytes.
  network_evidence stop_after(std::uint64_t n) {
    for (int i = 0; i < 500 && broker->evidence().total < n; ++i) ::usleep(10 * 1000);
    return stop();
  }
  tls_upstream upstream;
  std::shared_ptr<tls_authority> authority;
  std::shared_ptr<upstream_trust> trust;  // with trust_read_ahead
  std::unique_ptr<network_broker> broker;
  int broker_port = 0;
  memory_samples samples;  // the broker's periodic memory samples
};

const std::string get_head = std::string("GET /api/items?x=1 HTTP/1.1\r\nHost: ") + api_host + "\r\n\r\n";

// The counters agree with the entries (every connection was recorded).
void expect_counters_match(const network_evidence& e) {
  std::map<std::string, std::uint64_t> n;
  for (const auto& c : e.connections) ++n[c.action];
  EXPECT_EQ(e.total, e.connections.size());
  EXPECT_EQ(e.allowed, n["allow"]);
  EXPECT_EQ(e.denied, n["deny"]);
  EXPECT_EQ(e.unreachable, n["unreachable"]);
  EXPECT_EQ(e.malformed, n["malformed"]);
  EXPECT_EQ(e.error, n["error"]);
}

// The one connection of `e`, whose rule 0 decided it: its action and reason.
void expect_one_connection(const network_evidence& e, const std::string& action, const std::string& reason) {
  expect_counters_match(e);
  ASSERT_EQ(e.connections.size(), 1u);
  const auto& c = e.connections[0];
  EXPECT_EQ(c.action, action) << c.reason;
  EXPECT_EQ(c.reason, reason);
  EXPECT_TRUE(c.rule_consulted);
  EXPECT_EQ(c.rule, std::optional<std::size_t>(0));
  EXPECT_EQ(c.tls, "terminate");
}

// A client trusting only `client_ca` fails its TLS handshake through `b`:
// the one connection's action and reason; nothing reached the upstream.
void expect_failed_handshake(terminated_broker& b, const std::string& client_ca, const std::string& action,
                             const std::string& reason) {
  auto c = connect_through(b.broker_port, client_ca);
  EXPECT_FALSE(c->ssl) << "the client's handshake must fail";
  c.reset();
  expect_one_connection(b.stop_after(1), action, reason);
  EXPECT_TRUE(b.upstream.seen().empty());
}

TEST(BrokerTls, GetOnlyRuleForwardsGetAndRefusesPostOnTheSameConnection) {
  network_rule r = rule(api_host, rule_action::allow);
  r.methods = {"GET", "HEAD"};
  terminated_broker b(r);
  ASSERT_TRUE(b.broker);
  auto c = connect_through(b.broker_port, b.authority->certificate_pem());
  ASSERT_TRUE(c->ssl) << "TLS with the run's authority failed";
  const auto [head, body] = request(*c, get_head);
  EXPECT_EQ(head.rfind("HTTP/1.1 200", 0), 0u) << head;
  EXPECT_EQ(body, "none|");
  // Keep-alive: the second request on the same connection is decided too.
  const auto [refused, why] = request(*c, std::string("POST /api/items HTTP/1.1\r\nHost: ") + api_host +
                                              "\r\nContent-Length: 4\r\n\r\n", "data");
  EXPECT_EQ(refused.rfind("HTTP/1.1 403", 0), 0u) << refused;
  EXPECT_NE(why.find("method POST is not allowed"), std::string::npos) << why;
  EXPECT_EQ(b.upstream.seen().size(), 1u) << "the POST must not reach the server";
  c.reset();
  const auto e = b.stop_after(1);
  expect_one_connection(e, "allow", "");  // the connection was served; its requests say what each got
  ASSERT_EQ(e.connections.size(), 1u);
  const auto& conn = e.connections[0];
  ASSERT_EQ(conn.requests.size(), 2u);
  EXPECT_EQ(conn.requests[0].method, "GET");
  EXPECT_EQ(conn.requests[0].path, "/api/items");
  EXPECT_EQ(conn.requests[0].host, api_host);
  EXPECT_EQ(conn.requests[0].status, 200);
  EXPECT_EQ(conn.requests[0].action, "allow");
  EXPECT_GT(conn.requests[0].bytes_received, 0u);
  EXPECT_EQ(conn.requests[1].method, "POST");
  EXPECT_EQ(conn.requests[1].status, 403);
  EXPECT_EQ(conn.requests[1].action, "deny");
  EXPECT_EQ(conn.requests[1].reason, "method POST is not allowed by the rule");
}

TEST(BrokerTls, PathPrefixesHoldAndDotSegmentsAreRefused) {
  network_rule r = rule(api_host, rule_action::allow);
  r.paths = {"/api/"};
  terminated_broker b(r);
  ASSERT_TRUE(b.broker);
  for (const auto& [path, status] : std::vector<std::pair<std::string, std::string>>{
           {"/api/x", "200"}, {"/other", "403"}, {"/api/../admin", "403"}, {"/api/%2e%2e/admin", "403"}}) {
    auto c = connect_through(b.broker_port, b.authority->certificate_pem());
    ASSERT_TRUE(c->ssl);
    const auto [head, body] = request(*c, "GET " + path + " HTTP/1.1\r\nHost: " + api_host + "\r\n\r\n");
    EXPECT_EQ(head.substr(9, 3), status) << path << ": " << head;
  }
  EXPECT_EQ(b.upstream.seen().size(), 1u);
}

TEST(BrokerTls, CredentialIsInjectedTheClientCopyStrippedAndTraceRefused) {
  const std::string secret = "s3cr3t-" + std::to_string(::getpid());
  terminated_broker b(rule(api_host, rule_action::allow), {{api_host, "Authorization", "Bearer " + secret}});
  ASSERT_TRUE(b.broker);
  auto c = connect_through(b.broker_port, b.authority->certificate_pem());
  ASSERT_TRUE(c->ssl);
  const auto [head, body] = request(*c, std::string("GET /v1 HTTP/1.1\r\nHost: ") + api_host +
                                            "\r\nauthorization: Bearer placeholder\r\n\r\n");
  EXPECT_EQ(body, "Bearer " + secret + "|") << "the server got the secret, and only once";
  const auto seen = b.upstream.seen();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].find("placeholder"), std::string::npos) << seen[0];
  const auto [trace, trace_body] = request(*c, std::string("TRACE / HTTP/1.1\r\nHost: ") + api_host + "\r\n\r\n");
  EXPECT_EQ(trace.rfind("HTTP/1.1 403", 0), 0u) << trace;
  EXPECT_EQ(trace_body.find(secret), std::string::npos);
  c.reset();
  const auto e = b.stop_after(1);
  ASSERT_EQ(e.injections.size(), 1u);
  EXPECT_EQ(e.injections[0].host, api_host);
  EXPECT_EQ(e.injections[0].header, "Authorization");
  EXPECT_EQ(e.injections[0].count, 1u);
  ASSERT_EQ(e.connections.size(), 1u);
  ASSERT_EQ(e.connections[0].requests.size(), 2u);
  EXPECT_EQ(e.connections[0].requests[0].injected, std::vector<std::string>{"Authorization"});
  EXPECT_TRUE(e.connections[0].requests[1].injected.empty());
}

// One GET through a broker whose upstream trust is `ca_file` (read ahead, as
// the broker's own process reads it, or per connection) is answered 502:
// the one connection's action and reason; nothing reached the upstream.
void expect_502_with_trust(const std::string& ca_file, bool read_ahead, const std::string& action,
                           const std::string& reason) {
  terminated_broker b(rule(api_host, rule_action::allow), {}, ca_file, true, {}, 0, read_ahead);
  ASSERT_TRUE(b.broker);
  auto c = connect_through(b.broker_port, b.authority->certificate_pem());
  ASSERT_TRUE(c->ssl);
  const std::string response = ssl_read_head(c->ssl);
  EXPECT_EQ(response.rfind("HTTP/1.1 502", 0), 0u) << response;
  c.reset();
  const auto e = b.stop_after(1);
  expect_one_connection(e, action, reason);
  EXPECT_TRUE(e.connections.empty() || e.connections[0].requests.empty());
  EXPECT_TRUE(b.upstream.seen().empty());
  if (read_ahead) {
    EXPECT_TRUE(b.trust && b.trust->parsed()) << "the read-ahead store was not the one used";
  }
}

TEST(BrokerTls, UntrustedUpstreamCertificateIsRefusedWith502) {
  auto other = *tls_authority::create();
  temp_pem other_ca(other->certificate_pem());
  // Allowed, but the destination could not be reached over verified TLS.
  expect_502_with_trust(other_ca.path, false, "unreachable",
                        "terminated TLS: upstream TLS failed: self-signed certificate in certificate chain");
}

// The confined broker's trust store is read whole before confinement and
// parsed only when a terminated connection first needs it (upstream_trust.h).
TEST(BrokerTls, ATrustStoreReadAheadIsParsedAtTheFirstTerminatedConnection) {
  terminated_broker b(rule(api_host, rule_action::allow), {}, {}, true, {}, 0, true);
  ASSERT_TRUE(b.broker && b.trust);
  EXPECT_FALSE(b.trust->parsed()) << "parsed before any connection needed it";
  for (int i = 0; i < 2; ++i) {  // the second connection uses the parsed store
    auto c = connect_through(b.broker_port, b.authority->certificate_pem());
    ASSERT_TRUE(c->ssl);
    const auto [head, body] = request(*c, get_head);
    EXPECT_EQ(head.rfind("HTTP/1.1 200", 0), 0u) << head;
    EXPECT_TRUE(b.trust->parsed());
  }
  EXPECT_EQ(b.upstream.seen().size(), 2u);
}

TEST(BrokerTls, ATrustStoreReadAheadStillRefusesAnUntrustedUpstream) {
  auto other = *tls_authority::create();
  temp_pem other_ca(other->certificate_pem());
  expect_502_with_trust(other_ca.path, true, "unreachable",
                        "terminated TLS: upstream TLS failed: self-signed certificate in certificate chain");
}

// A file that cannot be read, or holds no certificate, is refused when it is
// read (the run fails before its command starts); one whose certificate
// block does not parse fails the connection that needs it, with the reason.
TEST(BrokerTls, AnUnusableTrustStoreIsRefusedWithItsName) {
  std::string why;
  EXPECT_FALSE(upstream_trust::read("/nonexistent/ca.pem", why));
  EXPECT_EQ(why, "cannot read the upstream trust store /nonexistent/ca.pem");
  temp_pem empty("no certificate here\n");
  EXPECT_FALSE(upstream_trust::read(empty.path, why));
  EXPECT_EQ(why, "the upstream trust store " + empty.path + " holds no PEM certificate");
  temp_pem broken("-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----\n");
  auto trust = upstream_trust::read(broken.path, why);
  ASSERT_TRUE(trust) << why;
  why.clear();
  EXPECT_EQ(trust->context(why), nullptr);
  EXPECT_EQ(why, "the upstream trust store " + broken.path + " holds no certificate OpenSSL can read");
}

TEST(BrokerTls, ATrustStoreWithNoReadableCertificateRefusesTheConnectionWith502) {
  temp_pem broken("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n");
  expect_502_with_trust(broken.path, true, "error",
                        "terminated TLS: the upstream trust store " + broken.path +
                            " holds no certificate OpenSSL can read");
}

TEST(BrokerTls, ClientSniNamingAnotherHostIsDeniedBeforeAnyUpstreamTls) {
  terminated_broker b(rule(api_host, rule_action::allow));
  ASSERT_TRUE(b.broker);
  // The client trusts the run's CA but does not check the name: only the
  // broker's SNI check stands between it and the rule's host.
  auto c = connect_through(b.broker_port, b.authority->certificate_pem(), "other.example.test", false);
  ASSERT_TRUE(c->ssl);
  const std::string response = ssl_read_head(c->ssl);
  EXPECT_EQ(response.rfind("HTTP/1.1 403", 0), 0u) << response;
  EXPECT_NE(response.find("X-Cordon-Rule: 0"), std::string::npos) << response;
  c.reset();
  const auto e = b.stop_after(1);
  expect_one_connection(e, "deny",
                        "terminated TLS: TLS server name other.example.test does not match the host api.example.test");
  EXPECT_TRUE(b.upstream.seen().empty());
}

TEST(BrokerTls, ClientThatRefusesTheRunCaIsMalformed) {
  terminated_broker b(rule(api_host, rule_action::allow));
  ASSERT_TRUE(b.broker);
  auto other = *tls_authority::create();  // as a client pinning its own roots: it refuses the run's leaf
  expect_failed_handshake(b, other->certificate_pem(), "malformed",
                          "terminated TLS: the client's TLS handshake failed: tlsv1 alert unknown ca (SSL routines)");
}

TEST(BrokerTls, ClientThatSpeaksNoTlsAfterConnectIsMalformed) {
  terminated_broker b(rule(api_host, rule_action::allow));
  ASSERT_TRUE(b.broker);
  fd_guard fd = open_tunnel(b.broker_port);
  ASSERT_GE(fd.get(), 0);
  send_all(fd.get(), std::string("GET / HTTP/1.1\r\nHost: ") + api_host + "\r\n\r\n");
  recv_all(fd.get());  // until the broker closes
  fd = fd_guard();
  const auto e = b.stop_after(1);
  expect_one_connection(e, "malformed", "terminated TLS: the client's TLS handshake failed: http request (SSL routines)");
}

// The upstream answers `answer` (verbatim) to the request `head`: the
// client must get the broker's 502. Returns the evidence once recorded.
network_evidence answered_502(terminated_broker& b, const std::string& answer, const std::string& head) {
  b.upstream.set_answer(answer);
  auto c = connect_through(b.broker_port, b.authority->certificate_pem());
  if (!c->ssl) {
    ADD_FAILURE() << "TLS through the broker failed";
    return {};
  }
  const auto [response, body] = request(*c, head);
  EXPECT_EQ(response.rfind("HTTP/1.1 502", 0), 0u) << response;
  c.reset();
  return b.stop_after(1);
}

// The request was forwarded (`allow`), the client got the broker's 502, and
// the connection is `unreachable`: a malformed status line, then an upstream
// that closes without answering.
TEST(BrokerTls, AnUnusableUpstreamResponseIsUnreachableAndTheRequestGets502) {
  struct answer_case {
    std::string answer, request_reason, connection_reason;
  };
  for (const auto& [answer, request_reason, connection_reason] : std::vector<answer_case>{
           {"SPDY/9 banana\r\n\r\n", "malformed response: a malformed status line",
            "terminated TLS: malformed response from api.example.test: a malformed status line"},
           {"", "no response: stream truncated", "terminated TLS: no response from api.example.test: stream truncated"}}) {
    SCOPED_TRACE(request_reason);
    terminated_broker b(rule(api_host, rule_action::allow));
    ASSERT_TRUE(b.broker);
    const auto e = answered_502(b, answer, get_head);
    expect_one_connection(e, "unreachable", connection_reason);
    ASSERT_EQ(e.connections.size(), 1u);
    ASSERT_EQ(e.connections[0].requests.size(), 1u);
    const auto& q = e.connections[0].requests[0];
    EXPECT_EQ(q.reason, request_reason);
    EXPECT_EQ(q.method, "GET");
    EXPECT_EQ(q.path, "/api/items");
    EXPECT_EQ(q.status, 502);
    EXPECT_EQ(q.action, "allow") << "it was forwarded";
    EXPECT_GT(q.bytes_sent, 0u);
    EXPECT_EQ(q.bytes_received, 0u) << "nothing of the destination's reached the client";
    EXPECT_EQ(b.upstream.seen().size(), 1u);
  }
}

TEST(BrokerTls, AnInternalFailureIsAnErrorNotAnAllow) {
  terminated_broker b(rule(api_host, rule_action::allow), {}, {}, false);
  ASSERT_TRUE(b.broker);
  expect_failed_handshake(b, b.authority->certificate_pem(), "error",
                          "terminated TLS: internal error: this run has no certificate authority");
}

TEST(BrokerTls, StopBeforeTheHandshakesIsAnErrorNotAnAllow) {
  terminated_broker b(rule(api_host, rule_action::allow));
  ASSERT_TRUE(b.broker);
  // The 200 is written by the terminated exchange itself: it is waiting for
  // the ClientHello that never comes.
  fd_guard fd = open_tunnel(b.broker_port);
  ASSERT_GE(fd.get(), 0);
  const auto e = b.stop();
  expect_one_connection(e, "error", "terminated TLS: the run ended before both TLS handshakes completed");
}

// Timeouts short enough for a test; the defaults are 10 s each.
broker_limits quick_limits() {
  broker_limits limits;
  limits.request_timeout = std::chrono::milliseconds(200);
  limits.connect_timeout = std::chrono::milliseconds(200);
  return limits;
}

// A client that stalls before its TLS handshake completed is closed by the
// broker at the request timeout, as a plain request would be, and is
// `malformed` (no request could arrive); nothing reached the destination.
void expect_stalled_client_closed(terminated_broker& b, int fd) {
  const auto before = std::chrono::steady_clock::now();
  set_io_timeouts(fd, std::chrono::milliseconds(5000));
  EXPECT_TRUE(reads_eof(fd)) << "the broker must close the connection";
  EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::milliseconds(3000));
  expect_one_connection(b.stop_after(1), "malformed",
                        "terminated TLS: the client's TLS handshake did not complete within 200 ms");
  EXPECT_TRUE(b.upstream.seen().empty());
}

TEST(BrokerTls, AClientThatSendsNoClientHelloIsClosedAtTheRequestTimeout) {
  terminated_broker b(rule(api_host, rule_action::allow), {}, {}, true, quick_limits());
  ASSERT_TRUE(b.broker);
  fd_guard fd = open_tunnel(b.broker_port);  // the 200 came; no byte follows
  ASSERT_GE(fd.get(), 0);
  expect_stalled_client_closed(b, fd.get());
}

TEST(BrokerTls, AClientThatStallsInTheMiddleOfItsClientHelloIsClosedAtTheRequestTimeout) {
  terminated_broker b(rule(api_host, rule_action::allow), {}, {}, true, quick_limits());
  ASSERT_TRUE(b.broker);
  fd_guard fd = open_tunnel(b.broker_port);
  ASSERT_GE(fd.get(), 0);
  const std::string hello = client_hello(sni_extension(api_host));
  ASSERT_TRUE(send_all(fd.get(), hello.substr(0, hello.size() / 2)));
  expect_stalled_client_closed(b, fd.get());
}

// The deadline ends with the handshake: a client idle longer than the
// request timeout once it is done still has its connection.
TEST(BrokerTls, TheHandshakeDeadlineIsCancelledOnceTheHandshakesComplete) {
  terminated_broker b(rule(api_host, rule_action::allow), {}, {}, true, quick_limits());
  ASSERT_TRUE(b.broker);
  auto c = connect_through(b.broker_port, b.authority->certificate_pem());
  ASSERT_TRUE(c->ssl);
  ::usleep(600 * 1000);  // three request timeouts
  const auto [head, body] = request(*c, get_head);
  EXPECT_EQ(head.rfind("HTTP/1.1 200", 0), 0u) << head;
  c.reset();
  expect_one_connection(b.stop_after(1), "allow", "");
}

// A destination that accepts the TCP connection and never answers the
// broker's ClientHello is `unreachable` at the connect timeout; the client
// gets 504, as for a connect that takes too long.
TEST(BrokerTls, AnUpstreamThatStallsItsHandshakeIsUnreachableAtTheConnectTimeout) {
  int silent_port = 0;
  fd_guard silent = tcp_listener(silent_port);  // the kernel completes the connect; nobody reads
  terminated_broker b(rule(api_host, rule_action::allow), {}, {}, true, quick_limits(), silent_port);
  ASSERT_TRUE(b.broker);
  auto c = connect_through(b.broker_port, b.authority->certificate_pem());
  ASSERT_TRUE(c->ssl) << "the client's handshake comes first and completes";
  const std::string response = ssl_read_head(c->ssl);
  EXPECT_EQ(response.rfind("HTTP/1.1 504", 0), 0u) << response;
  c.reset();
  expect_one_connection(b.stop_after(1), "unreachable",
                        "terminated TLS: timeout: the TLS handshake with api.example.test:443 took longer than 200 ms");
}

TEST(BrokerTls, PlainHttpToATerminatedRuleIsRefused) {
  terminated_broker b(rule(api_host, rule_action::allow));
  ASSERT_TRUE(b.broker);
  fd_guard fd = connect_tcp(b.broker_port);
  send_all(fd.get(), std::string("GET http://") + api_host + "/ HTTP/1.1\r\nHost: " + api_host + "\r\n\r\n");
  const std::string response = recv_until(fd.get(), "\r\n\r\n");
  EXPECT_EQ(response.rfind("HTTP/1.1 403", 0), 0u) << response;
}

TEST(BrokerTls, SmugglingShapedRequestsAreMalformed) {
  EXPECT_FALSE(parse_request_head("POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n").ok);
  EXPECT_FALSE(parse_request_head("POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n").ok);
  EXPECT_FALSE(parse_request_head("POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n").ok);
  EXPECT_FALSE(parse_request_head("GET http://x/ HTTP/1.1\r\n\r\n").ok);
  EXPECT_FALSE(parse_request_head("GET / HTTP/2\r\n\r\n").ok);
  const auto chunked = parse_request_head("POST /a?b HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n");
  ASSERT_TRUE(chunked.ok);
  EXPECT_EQ(chunked.framing, body_framing::chunked);
  EXPECT_EQ(chunked.path, "/a");
  EXPECT_EQ(parse_response_head("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n", "HEAD").framing, body_framing::none);
  EXPECT_EQ(parse_response_head("HTTP/1.1 200 OK\r\n\r\n", "GET").framing, body_framing::until_close);
}

// ---- WebSocket upgrades (docs/tls.md, "WebSocket") -------------------------

std::string upgrade_head(const std::string& path, const std::string& protocol = "websocket",
                         const std::string& extra = "") {
  return "GET " + path + " HTTP/1.1\r\nHost: " + api_host + "\r\nUpgrade: " + protocol +
         "\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n" +
         extra + "\r\n";
}

// A rule that opts into WebSockets, read-only, under /ws/.
network_rule websocket_rule() {
  network_rule r = rule(api_host, rule_action::allow);
  r.websocket = true;
  r.methods = {"GET", "HEAD", "OPTIONS"};
  r.paths = {"/ws/"};
  return r;
}

// The one request of `e`'s one connection (a reference into `e`: never
// into a temporary).
const network_request& only_request(network_evidence&&) = delete;
const network_request& only_request(const network_evidence& e) {
  static const network_request none;
  if (e.connections.size() != 1 || e.connections[0].requests.size() != 1) {
    ADD_FAILURE() << "expected one connection with one request";
    return none;
  }
  return e.connections[0].requests[0];
}

// An upgrade refused by the broker: 403 with `reason`, recorded as a
// denied request of an allowed connection; nothing reached the server.
void expect_upgrade_refused(network_rule r, const std::string& head, const std::string& reason) {
  terminated_broker b(std::move(r));
  ASSERT_TRUE(b.broker);
  b.upstream.websocket = true;
  auto c = connect_through(b.broker_port, b.authority->certificate_pem());
  ASSERT_TRUE(c->ssl);
  const auto [response, body] = request(*c, head);
  EXPECT_EQ(response.rfind("HTTP/1.1 403", 0), 0u) << response;
  EXPECT_NE(response.find("X-Cordon-Rule: 0"), std::string::npos) << response;
  EXPECT_NE(body.find(reason), std::string::npos) << body;
  c.reset();
  const auto e = b.stop_after(1);
  expect_one_connection(e, "allow", "");
  const auto& q = only_request(e);
  EXPECT_EQ(q.method, "GET");
  EXPECT_EQ(q.status, 403);
  EXPECT_EQ(q.action, "deny");
  EXPECT_EQ(q.reason, reason);
  EXPECT_EQ(q.upgraded, "");
  EXPECT_TRUE(b.upstream.seen().empty()) << "the upgrade must not reach the server";
}

// Through `b`, whose upstream becomes a WebSocket server pushing `push`
// bytes: a client that sent `head` and got 101 (`response`, its head), or
// one whose ssl is null.
std::unique_ptr<tls_client> open_websocket(terminated_broker& b, std::size_t push, const std::string& head,
                                           std::string& response) {
  b.upstream.websocket = true;
  b.upstream.websocket_push = push;
  auto c = connect_through(b.broker_port, b.authority->certificate_pem());
  if (!c->ssl || !ssl_write_all(c->ssl, head)) return std::make_unique<tls_client>();
  response = ssl_read_head(c->ssl);
  if (response.rfind("HTTP/1.1 101", 0) != 0) return std::make_unique<tls_client>();
  return c;
}


// bytes go both ways unjudged: first what the server pushes unasked (the
// client silent), then 16 KiB rounds echoed, a few hundred KiB each way, so
// both directions of the relay loop run many times over base buffers.
TEST(BrokerTls, WebsocketUpgradeOnAnOptedInRuleRelaysBothWaysAndIsRecorded) {
  constexpr std::size_t push = 200 * 1024;
  constexpr std::size_t round = 16 * 1024;
  constexpr int rounds = 20;  // 320 KiB each way
  terminated_broker b(websocket_rule());
  ASSERT_TRUE(b.broker);
  const std::string head = upgrade_head("/ws/chat?room=1");
  std::string response;
  auto c = open_websocket(b, push, head, response);
  ASSERT_TRUE(c->ssl) << response;
  EXPECT_NE(response.find("Upgrade: websocket"), std::string::npos) << response;
  EXPECT_EQ(ssl_read_exact(c->ssl, push), test_bytes(push, 'S')) << "the server's push, unasked";
  for (int i = 0; i < rounds; ++i) {
    const std::string frame = test_bytes(round, static_cast<char>('a' + i));
    ASSERT_TRUE(ssl_write_all(c->ssl, frame)) << "round " << i;
    ASSERT_EQ(ssl_read_exact(c->ssl, round), frame) << "round " << i;
  }
  c.reset();  // the client ends the connection: the broker ends the relay
  const auto e = b.stop_after(1);
  expect_one_connection(e, "allow", "");
  const auto& q = only_request(e);
  EXPECT_EQ(q.method, "GET");
  EXPECT_EQ(q.path, "/ws/chat");
  EXPECT_EQ(q.status, 101);
  EXPECT_EQ(q.action, "allow");
  EXPECT_EQ(q.upgraded, "websocket");
  EXPECT_EQ(q.bytes_sent, head.size()) << "the request head, forwarded as it came";
  EXPECT_EQ(q.bytes_received, response.size()) << "the 101 head";
  EXPECT_EQ(q.upgraded_bytes_sent, static_cast<std::uint64_t>(rounds) * round);
  EXPECT_EQ(q.upgraded_bytes_received, push + static_cast<std::uint64_t>(rounds) * round);
  ASSERT_EQ(e.connections.size(), 1u);
  EXPECT_EQ(e.connections[0].bytes_sent, q.bytes_sent + q.upgraded_bytes_sent);
  EXPECT_EQ(e.connections[0].bytes_received, q.bytes_received + q.upgraded_bytes_received);
  ASSERT_EQ(b.upstream.seen().size(), 1u);
}

// The destination ends the WebSocket: the broker ends the client's side
// too (close_notify, then the connection closes).
TEST(BrokerTls, WebsocketRelayEndsWhenTheDestinationCloses) {
  terminated_broker b(websocket_rule());
  ASSERT_TRUE(b.broker);
  b.upstream.set_answer("HTTP/1.1 101 Switching Protocols\r\nUpgrade: WebSocket\r\nConnection: Upgrade\r\n\r\nbye");
  auto c = connect_through(b.broker_port, b.authority->certificate_pem());
  ASSERT_TRUE(c->ssl);
  ASSERT_TRUE(ssl_write_all(c->ssl, upgrade_head("/ws/")));
  const std::string response = ssl_read_head(c->ssl);
  ASSERT_EQ(response.rfind("HTTP/1.1 101", 0), 0u) << response;
  EXPECT_EQ(ssl_read_exact(c->ssl, 3), "bye");
  char byte;
  EXPECT_LE(SSL_read(c->ssl, &byte, 1), 0) << "the client's side must end with the destination's";
  c.reset();
  const auto e = b.stop_after(1);
  const auto& q = only_request(e);
  EXPECT_EQ(q.upgraded, "websocket");
  EXPECT_EQ(q.upgraded_bytes_received, 3u);
  EXPECT_EQ(q.upgraded_bytes_sent, 0u);
}

// A client that stops reading while the server pushes holds the broker to a
// relay's base buffers (docs/network.md, "Memory budget"): the server is
// stopped instead of the broker queueing what it sends. Autotuning alone
// would let the broker's two sockets grow to megabytes.
TEST(BrokerTls, AStalledWebsocketClientHoldsTheBrokerToBaseBuffers) {
  constexpr std::size_t push = 16 * 1024 * 1024;
  terminated_broker b(websocket_rule());
  ASSERT_TRUE(b.broker);
  std::string response;
  auto c = open_websocket(b, push, upgrade_head("/ws/"), response);
  ASSERT_TRUE(c->ssl) << response;
  ASSERT_TRUE(b.samples.wait_for(3)) << "the broker took no memory samples of the stalled state";
  const std::uint64_t stalled_peak = b.broker->evidence().memory_peak_bytes;
  EXPECT_EQ(ssl_read_exact(c->ssl, push), test_bytes(push, 'S')) << "everything arrives once the client reads";
  c.reset();
  const auto e = b.stop_after(1);
  // Both queues of the stalled direction (upstream receive, client send) on
  // base buffers, with the kernel's slack for a segment's bookkeeping.
  const std::uint64_t bound = detail::base_tier.held_at_most() + 128 * 1024;
  std::printf("[ memory   ] stalled WebSocket client: broker peak %.0f KiB (bound %.0f KiB)\n",
              static_cast<double>(stalled_peak) / 1024, static_cast<double>(bound) / 1024);
  EXPECT_GT(stalled_peak, 0u);
  EXPECT_LE(stalled_peak, bound);
  EXPECT_EQ(only_request(e).upgraded_bytes_received, push);
}

TEST(BrokerTls, WebsocketUpgradeWithoutTheRuleFieldIsRefused) {
  network_rule r = websocket_rule();
  r.websocket = false;
  expect_upgrade_refused(r, upgrade_head("/ws/"), "protocol upgrade (Upgrade field) on a terminated connection");
}

TEST(BrokerTls, WebsocketUpgradeIsJudgedByTheRuleMethodsAndPaths) {
  network_rule r = websocket_rule();
  r.methods = {"POST"};
  expect_upgrade_refused(r, upgrade_head("/ws/"), "method GET is not allowed by the rule");
  expect_upgrade_refused(websocket_rule(), upgrade_head("/admin"), "path is outside the rule's prefixes");
}

TEST(BrokerTls, UpgradesOtherThanWebsocketAreRefusedEvenWithTheField) {
  expect_upgrade_refused(websocket_rule(), upgrade_head("/ws/", "h2c", "HTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n"),
                         "protocol upgrade to h2c: the rule allows only WebSocket upgrades");
  expect_upgrade_refused(websocket_rule(), upgrade_head("/ws/", "websocket, h2c"),
                         "protocol upgrade to websocket, h2c: the rule allows only WebSocket upgrades");
}

TEST(BrokerTls, TheCredentialGoesOnTheUpgradeRequestAndTheClientCopyIsStripped) {
  const std::string secret = "ws-s3cr3t-" + std::to_string(::getpid());
  terminated_broker b(websocket_rule(), {{api_host, "Authorization", "Bearer " + secret}});
  ASSERT_TRUE(b.broker);
  b.upstream.websocket = true;
  auto c = connect_through(b.broker_port, b.authority->certificate_pem());
  ASSERT_TRUE(c->ssl);
  ASSERT_TRUE(ssl_write_all(c->ssl, upgrade_head("/ws/", "websocket", "Authorization: Bearer placeholder\r\n")));
  ASSERT_EQ(ssl_read_head(c->ssl).rfind("HTTP/1.1 101", 0), 0u);
  ASSERT_TRUE(ssl_write_all(c->ssl, "ping"));
  EXPECT_EQ(ssl_read_exact(c->ssl, 4), "ping");
  c.reset();
  const auto e = b.stop_after(1);
  const auto seen = b.upstream.seen();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_NE(seen[0].find("Authorization: Bearer " + secret + "\r\n"), std::string::npos) << seen[0];
  EXPECT_EQ(seen[0].find("placeholder"), std::string::npos) << seen[0];
  EXPECT_NE(seen[0].find("Upgrade: websocket\r\n"), std::string::npos) << seen[0];
  const auto& q = only_request(e);
  EXPECT_EQ(q.upgraded, "websocket");
  EXPECT_EQ(q.injected, std::vector<std::string>{"Authorization"});
  ASSERT_EQ(e.injections.size(), 1u);
  EXPECT_EQ(e.injections[0].count, 1u);
}

// Any other answer to an upgrade is an ordinary response: the connection
// stays HTTP/1.1 and its next request is judged as usual.
TEST(BrokerTls, AnUpgradeAnsweredWithoutA101StaysHttp) {
  terminated_broker b(websocket_rule());
  ASSERT_TRUE(b.broker);  // the upstream answers 200 to everything
  auto c = connect_through(b.broker_port, b.authority->certificate_pem());
  ASSERT_TRUE(c->ssl);
  const auto [head, body] = request(*c, upgrade_head("/ws/"));
  EXPECT_EQ(head.rfind("HTTP/1.1 200", 0), 0u) << head;
  EXPECT_EQ(body, "none|");
  const auto [again, again_body] = request(*c, std::string("GET /ws/next HTTP/1.1\r\nHost: ") + api_host + "\r\n\r\n");
  EXPECT_EQ(again.rfind("HTTP/1.1 200", 0), 0u) << again;
  c.reset();
  const auto e = b.stop_after(1);
  ASSERT_EQ(e.connections.size(), 1u);
  ASSERT_EQ(e.connections[0].requests.size(), 2u);
  EXPECT_EQ(e.connections[0].requests[0].status, 200);
  EXPECT_EQ(e.connections[0].requests[0].upgraded, "");
  EXPECT_EQ(e.connections[0].requests[1].path, "/ws/next");
}

// A 101 the request did not ask for (a plain GET), or to another protocol
// than websocket, is never passed on: the client gets 502.
TEST(BrokerTls, A101ToAnythingButAWebsocketUpgradeIsUnusable) {
  struct switch_case {
    std::string request, answer, reason;
  };
  for (const auto& [head, answer, reason] : std::vector<switch_case>{
           {get_head, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
            "unusable response: 101 Switching Protocols to a request that asked for no upgrade"},
           {upgrade_head("/ws/"), "HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n\r\n",
            "unusable response: 101 Switching Protocols with protocol upgrade to h2c (the request asked for websocket)"}}) {
    SCOPED_TRACE(reason);
    network_rule r = websocket_rule();
    r.paths.clear();
    terminated_broker b(r);
    ASSERT_TRUE(b.broker);
    const auto e = answered_502(b, answer, head);
    const auto& q = only_request(e);
    EXPECT_EQ(q.status, 502);
    EXPECT_EQ(q.reason, reason);
    EXPECT_EQ(q.upgraded, "");
    EXPECT_EQ(q.bytes_received, 0u) << "nothing of the 101 reached the client";
  }
}

TEST(BrokerTls, WebsocketHandshakeShapes) {
  network_rule r = websocket_rule();
  const auto judge = [&](const std::string& head) {
    const auto request = parse_request_head(head);
    return request.ok ? judge_request(r, api_host, 443, request) : "malformed: " + request.error;
  };
  EXPECT_EQ(judge(upgrade_head("/ws/")), "");
  const std::string host = std::string("Host: ") + api_host + "\r\n";
  EXPECT_EQ(judge("GET /ws/ HTTP/1.1\r\n" + host + "upgrade: WebSocket\r\nconnection: keep-alive, UPGRADE\r\n\r\n"), "");
  EXPECT_EQ(judge("GET /ws/ HTTP/1.1\r\n" + host + "Upgrade: websocket\r\nConnection: keep-alive\r\n\r\n"),
            "a WebSocket upgrade without Connection: upgrade");
  EXPECT_EQ(judge("GET /ws/ HTTP/1.0\r\n" + host + "Upgrade: websocket\r\nConnection: upgrade\r\n\r\n"),
            "a WebSocket upgrade in HTTP/1.0 (only HTTP/1.1)");
  EXPECT_EQ(judge("GET /ws/ HTTP/1.1\r\n" + host + "Upgrade: websocket\r\nUpgrade: h2c\r\nConnection: upgrade\r\n\r\n"),
            "more than one Upgrade field: the rule allows only WebSocket upgrades");
  EXPECT_EQ(judge("GET /ws/ HTTP/1.1\r\n" + host + "Upgrade: websocket\r\nConnection: upgrade\r\nContent-Length: 2\r\n\r\n"),
            "a WebSocket upgrade with a body");
  r.methods.clear();
  EXPECT_EQ(judge("POST /ws/ HTTP/1.1\r\n" + host + "Upgrade: websocket\r\nConnection: upgrade\r\n\r\n"),
            "a WebSocket upgrade with method POST (only GET)");
}

}  // namespace
}  // namespace cordon::broker::test
