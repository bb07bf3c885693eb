// Unit tests: a connection allowed for a name carries only bytes that name
// it (src/broker/client_judge.h, first_bytes.h). First the judge alone on
// byte streams, then the broker between a client and real servers on
// loopback: an OpenSSL server that records every server name it is sent,
// and Python's http.server recording every request it serves. Each case
// either reaches the server with the allowed name or is refused and
// recorded; none reaches it with the denied one.
#include <gtest/gtest.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "broker/client_judge.h"
#include "broker/first_bytes.h"
#include "broker_test_support.h"

namespace cordon::broker {
namespace {

using namespace test;
using namespace std::chrono_literals;

[[maybe_unused]] const bool sigpipe_ignored = [] {
  ::signal(SIGPIPE, SIG_IGN);
  return true;
}();

constexpr const char* allowed = "allowed.example";
constexpr const char* denied = "denied.example";

// A TLS record of `type` carrying `fragment`.
std::string record(std::uint8_t type, const std::string& fragment) {
  return std::string(1, static_cast<char>(type)) + "\x03\x01" + be16(fragment.size()) + fragment;
}

// The ClientHello of `hello` (one record, as client_hello() makes it) split
// into records of at most `piece` bytes of handshake each.
std::string fragmented(const std::string& hello, std::size_t piece) {
  const std::string handshake = hello.substr(5);
  std::string out;
  for (std::size_t at = 0; at < handshake.size(); at += piece) out += record(0x16, handshake.substr(at, piece));
  return out;
}

// ---- the judge alone --------------------------------------------------------

judge_verdict feed_all(client_judge& j, const std::string& bytes, std::string& out) {
  return j.feed(bytes, out);
}

TEST(BrokerJudge, EmptyAndFragmentedRecordsAreReadToTheWholeClientHello) {
  const std::string good = client_hello(sni_extension(allowed));
  const std::string bad = client_hello(sni_extension(denied));
  for (const auto& [wire, ok] : std::vector<std::pair<std::string, bool>>{
           {record(0x16, "") + bad, false},
           {record(0x16, "") + record(0x16, "") + good, true},
           {fragmented(bad, 7), false},
           {fragmented(good, 1), true},
       }) {
    client_judge j(allowed, true, 16384);
    std::string out;
    // Byte by byte: never a verdict before the ClientHello is whole.
    judge_verdict v = judge_verdict::more;
    for (std::size_t i = 0; i < wire.size(); ++i) {
      v = j.feed(wire.substr(i, 1), out);
      if (i + 1 < wire.size()) {
        ASSERT_EQ(v, judge_verdict::more) << i;
      }
    }
    EXPECT_EQ(v, ok ? judge_verdict::pass_rest : judge_verdict::refuse) << j.reason();
    EXPECT_EQ(out, ok ? wire : "");
  }
}

TEST(BrokerJudge, TlsItCannotReadIsRefused) {
  const std::string good = client_hello(sni_extension(allowed));
  for (const std::string& wire : {record(0x15, "\x01\x00") + good,  // an alert first
                                  record(0x17, "x") + good,         // application data first
                                  record(0x16, std::string("\x02\x00\x00\x00", 4)),  // not a ClientHello
                                  std::string("\x16\x09\x00\x00\x05xxxxx", 10)}) {
    client_judge j(allowed, true, 16384);
    std::string out;
    EXPECT_EQ(feed_all(j, wire, out), judge_verdict::refuse);
    EXPECT_TRUE(j.malformed()) << j.reason();
    EXPECT_EQ(out, "");
  }
  client_judge j(allowed, true, 16384);  // an SSL 2.0-format ClientHello names nothing
  std::string out;
  EXPECT_EQ(j.feed(std::string("\x80\x2e\x01\x03\x01", 5), out), judge_verdict::refuse);
  EXPECT_EQ(j.reason(), "TLS without a server name (SNI) in a tunnel to allowed.example");
}

TEST(BrokerJudge, RequestHeadsAreReadAsALenientServerReadsThem) {
  const auto verdict = [](const std::string& wire, std::string* reason = nullptr) {
    client_judge j(allowed, true, 16384);
    std::string out;
    const auto v = j.feed(wire, out);
    if (reason) *reason = j.reason();
    return v;
  };
  EXPECT_EQ(verdict("\r\n\r\nGET / HTTP/1.1\r\nHost: denied.example\r\n\r\n"), judge_verdict::refuse);
  EXPECT_EQ(verdict("\n\nGET / HTTP/1.1\r\nHost: allowed.example\r\n\r\n"), judge_verdict::relay);
  EXPECT_EQ(verdict("GET  http://denied.example/ \tHTTP/1.1\r\nHost: allowed.example\r\n\r\n"), judge_verdict::refuse);
  EXPECT_EQ(verdict("GET\thttp://allowed.example/\x0bHTTP/1.1\nHost: allowed.example\n\n"), judge_verdict::relay);
  EXPECT_EQ(verdict("FOO / HTTP/1.1\r\nHost: denied.example\r\n\r\n"), judge_verdict::refuse);  // any method
  std::string reason;
  EXPECT_EQ(verdict("GET / HTTP/1.1\r\nHost: allowed.example\r\nHost: denied.example\r\n\r\n", &reason),
            judge_verdict::refuse);
  EXPECT_EQ(reason, "unreadable HTTP request in a tunnel to allowed.example: more than one Host field");
  EXPECT_EQ(verdict("GET / HTTP/1.1\r\nHost : denied.example\r\n\r\n"), judge_verdict::refuse);
  EXPECT_EQ(verdict("GET / HTTP/1.1\r\nX: y\r\n Host: denied.example\r\n\r\n"), judge_verdict::refuse);
  EXPECT_EQ(verdict("GET /a b HTTP/1.1\r\nHost: allowed.example\r\n\r\n"), judge_verdict::refuse);
  EXPECT_EQ(verdict("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), judge_verdict::refuse);
  EXPECT_EQ(verdict("GET /\r\n"), judge_verdict::refuse);  // HTTP/0.9: no host
  EXPECT_EQ(verdict("GET / HTTP/1.0\r\n\r\n", &reason), judge_verdict::refuse);
  EXPECT_EQ(reason, "HTTP request without a host in a tunnel to allowed.example (a server would pick one)");
  EXPECT_EQ(verdict("CONNECT allowed.example:443 HTTP/1.1\r\nHost: allowed.example\r\n\r\n"), judge_verdict::refuse);
  EXPECT_EQ(verdict("GET / HTTP/1.1\r\nHost: allowed.example\r\nUpgrade: h2c\r\n\r\n"), judge_verdict::refuse);
  EXPECT_EQ(verdict("POST / HTTP/1.1\r\nHost: allowed.example\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"),
            judge_verdict::refuse);
  // Not HTTP at all: another protocol passes.
  EXPECT_EQ(verdict("SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n"), judge_verdict::pass_rest);
  EXPECT_EQ(verdict(std::string("\x00\x01\x02", 3)), judge_verdict::pass_rest);
  // A first line that has not ended goes on as it comes (no server acts on
  // it yet); its end decides, and a request head from there on is held.
  client_judge j(allowed, true, 16384);
  std::string out;
  EXPECT_EQ(j.feed("FO", out), judge_verdict::relay);
  EXPECT_EQ(j.feed("O / HT", out), judge_verdict::relay);
  EXPECT_EQ(out, "FOO / HT");
  EXPECT_EQ(j.feed("TP/1.1\r\nHost: denied.example\r\n", out), judge_verdict::more);
  EXPECT_EQ(j.feed("\r\n", out), judge_verdict::refuse);
  EXPECT_EQ(out, "FOO / HT") << "nothing from the line's end on went";
  client_judge k(allowed, true, 16384);
  out.clear();
  EXPECT_EQ(k.feed("early", out), judge_verdict::relay);
  EXPECT_EQ(k.feed("\n", out), judge_verdict::pass_rest);  // one word: not a request line
  EXPECT_EQ(out, "early\n");
}

TEST(BrokerJudge, EveryRequestOnAKeptAliveConnectionIsJudged) {
  client_judge j(allowed, true, 16384);
  std::string out;
  const std::string first = "POST / HTTP/1.1\r\nHost: allowed.example\r\nContent-Length: 40\r\n\r\n";
  const std::string body = "GET / HTTP/1.1\r\nHost: denied.example\r\n\r\n";  // a body, not a request
  ASSERT_EQ(body.size(), 40u);
  const std::string chunked = "POST / HTTP/1.1\r\nHost: allowed.example\r\nTransfer-Encoding: chunked\r\n\r\n"
                              "5;x=1\r\nhello\r\n0\r\nTrailer: t\r\n\r\n";
  const std::string third = "GET / HTTP/1.1\r\nHost: allowed.example\r\n\r\n";
  const std::string wire = first + body + chunked + third;
  for (std::size_t i = 0; i < wire.size(); i += 5) {
    ASSERT_NE(j.feed(wire.substr(i, 5), out), judge_verdict::refuse) << i << ": " << j.reason();
  }
  EXPECT_EQ(out, wire);
  EXPECT_EQ(j.requests(), 3u);
  EXPECT_EQ(j.feed("GET / HTTP/1.1\r\nHost: denied.example\r\n\r\n", out), judge_verdict::refuse);
  EXPECT_EQ(j.reason(), "HTTP request for denied.example does not match the tunnel's host allowed.example (domain fronting)");
  EXPECT_EQ(out, wire);  // nothing of it let through
}

// ---- real servers -------------------------------------------------------------

// A TLS server on loopback (OpenSSL) that records the server name of every
// ClientHello it reads, completes the handshake with a self-signed
// certificate and echoes four bytes.
class sni_recording_server {
 public:
  sni_recording_server() : server_([this](int fd) { serve(fd); }) {
    ctx_ = SSL_CTX_new(TLS_server_method());
    EVP_PKEY* key = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256");
    X509* cert = X509_new();
    ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
    X509_gmtime_adj(X509_getm_notBefore(cert), 0);
    X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
    X509_set_pubkey(cert, key);
    X509_NAME_add_entry_by_txt(X509_get_subject_name(cert), "CN", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>(allowed), -1, -1, 0);
    X509_set_issuer_name(cert, X509_get_subject_name(cert));
    X509_sign(cert, key, EVP_sha256());
    SSL_CTX_use_certificate(ctx_, cert);
    SSL_CTX_use_PrivateKey(ctx_, key);
    X509_free(cert);
    EVP_PKEY_free(key);
    SSL_CTX_set_client_hello_cb(ctx_, &sni_recording_server::on_hello, this);
  }
  ~sni_recording_server() {
    server_.stop();
    SSL_CTX_free(ctx_);
  }
  int port() const { return server_.port(); }
  std::vector<std::string> names() {
    std::lock_guard<std::mutex> lock(mutex_);
    return names_;
  }

 private:
  static int on_hello(SSL* ssl, int*, void* self) {
    const unsigned char* ext = nullptr;
    std::size_t length = 0;
    std::string name = "(none)";
    if (SSL_client_hello_get0_ext(ssl, TLSEXT_TYPE_server_name, &ext, &length) == 1 && length > 5) {
      name.assign(reinterpret_cast<const char*>(ext) + 5, length - 5);
    }
    auto* s = static_cast<sni_recording_server*>(self);
    std::lock_guard<std::mutex> lock(s->mutex_);
    s->names_.push_back(name);
    return SSL_CLIENT_HELLO_SUCCESS;
  }
  void serve(int fd) {
    SSL* ssl = SSL_new(ctx_);
    SSL_set_fd(ssl, fd);
    char buf[4];
    if (SSL_accept(ssl) == 1 && SSL_read(ssl, buf, 4) == 4) SSL_write(ssl, buf, 4);
    SSL_free(ssl);
  }
  SSL_CTX* ctx_ = nullptr;
  std::mutex mutex_;
  std::vector<std::string> names_;
  test_server server_;
};

// A TLS client for `name` whose ClientHello is re-framed by `reframe`
// before it goes out on `fd`; then the handshake completes over `fd` and
// "ping" is echoed. True when it was.
bool tls_ping(int fd, const std::string& name, const std::function<std::string(const std::string&)>& reframe) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  SSL* ssl = SSL_new(ctx);
  BIO* in = BIO_new(BIO_s_mem());
  BIO* out = BIO_new(BIO_s_mem());
  SSL_set_bio(ssl, in, out);
  SSL_ctrl(ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name, const_cast<char*>(name.c_str()));
  SSL_set_connect_state(ssl);
  bool first = true, ok = false;
  for (int round = 0; round < 20; ++round) {
    const int r = SSL_do_handshake(ssl);
    std::string pending(static_cast<std::size_t>(BIO_ctrl_pending(out)), '\0');
    if (!pending.empty()) BIO_read(out, pending.data(), static_cast<int>(pending.size()));
    if (first && !pending.empty()) {
      pending = reframe(pending);
      first = false;
    }
    if (!pending.empty() && !send_all(fd, pending)) break;
    if (r == 1) {
      SSL_write(ssl, "ping", 4);
      std::string flight(static_cast<std::size_t>(BIO_ctrl_pending(out)), '\0');
      BIO_read(out, flight.data(), static_cast<int>(flight.size()));
      if (!send_all(fd, flight)) break;
      char buf[4096];
      std::string got;
      while (got.size() < 4) {
        const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) break;
        BIO_write(in, buf, static_cast<int>(n));
        char plain[4];
        const int m = SSL_read(ssl, plain, 4);
        if (m > 0) got.append(plain, static_cast<std::size_t>(m));
      }
      ok = got == "ping";
      break;
    }
    if (SSL_get_error(ssl, r) != SSL_ERROR_WANT_READ) break;
    char buf[16384];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    BIO_write(in, buf, static_cast<int>(n));
  }
  SSL_free(ssl);
  SSL_CTX_free(ctx);
  return ok;
}

bool open_tunnel(int fd, const std::string& authority) {
  const std::string established = "HTTP/1.1 200 Connection established\r\n\r\n";
  if (!send_all(fd, connect_request(authority))) return false;
  return recv_exact(fd, established.size()) == established;
}

std::string empty_record_first(const std::string& hello) { return record(0x16, "") + hello; }
std::string split_records(const std::string& hello) {
  // The first record holds the ClientHello; cut its handshake into pieces of 50.
  const std::size_t length = (static_cast<unsigned char>(hello[3]) << 8) | static_cast<unsigned char>(hello[4]);
  return fragmented(hello.substr(0, 5 + length), 50) + hello.substr(5 + length);
}

TEST(BrokerJudgeTls, EmptyAndFragmentedClientHellosReachAnOpenSslServerOnlyForTheAllowedName) {
  sni_recording_server server;
  auto b = start_broker(filtered({rule(allowed, rule_action::allow)}), local_hooks(server.port()));
  ASSERT_TRUE(b.broker);
  int expected_total = 0;
  for (const auto& reframe : {std::function<std::string(const std::string&)>(empty_record_first),
                              std::function<std::string(const std::string&)>(split_records)}) {
    {
      fd_guard c = connect_tcp(b.port);
      ASSERT_TRUE(open_tunnel(c.get(), std::string(allowed) + ":443"));
      EXPECT_TRUE(tls_ping(c.get(), allowed, reframe));
    }
    {
      fd_guard c = connect_tcp(b.port);
      ASSERT_TRUE(open_tunnel(c.get(), std::string(allowed) + ":443"));
      EXPECT_FALSE(tls_ping(c.get(), denied, reframe));
    }
    expected_total += 2;
  }
  const auto e = wait_for_total(*b.broker, static_cast<std::uint64_t>(expected_total));
  EXPECT_EQ(e.allowed, 2u);
  EXPECT_EQ(e.denied, 2u);
  for (const auto& r : e.connections) {
    if (r.action == "deny") {
      EXPECT_EQ(r.reason, "TLS server name denied.example does not match the tunnel's host allowed.example (domain fronting)");
    }
  }
  EXPECT_EQ(server.names(), (std::vector<std::string>{allowed, allowed}));
}

TEST(BrokerJudgeTls, ASilentClientIsNeitherPassedNorHeldForever) {
  sni_recording_server server;
  broker_limits limits;
  limits.first_bytes_wait = 100ms;
  limits.request_timeout = 3000ms;
  auto b = start_broker(filtered({rule(allowed, rule_action::allow)}), local_hooks(server.port()), limits);
  ASSERT_TRUE(b.broker);
  {  // Silent past the first-bytes wait, then a ClientHello for the denied name: still judged.
    fd_guard c = connect_tcp(b.port);
    ASSERT_TRUE(open_tunnel(c.get(), std::string(allowed) + ":443"));
    std::this_thread::sleep_for(300ms);  // the old check passed a client silent this long
    EXPECT_FALSE(tls_ping(c.get(), denied, [](const std::string& h) { return h; }));
  }
  auto e = wait_for_total(*b.broker, 1);
  ASSERT_EQ(e.connections.size(), 1u);
  EXPECT_EQ(e.connections[0].action, "deny");
  {  // Silent to the end: refused at the request timeout, recorded.
    broker_limits short_limits;
    short_limits.request_timeout = 200ms;
    auto quick = start_broker(filtered({rule(allowed, rule_action::allow)}), local_hooks(server.port()), short_limits);
    fd_guard c = connect_tcp(quick.port);
    ASSERT_TRUE(open_tunnel(c.get(), std::string(allowed) + ":443"));
    EXPECT_TRUE(reads_eof(c.get()));
    const auto q = wait_for_total(*quick.broker, 1);
    ASSERT_EQ(q.connections.size(), 1u);
    EXPECT_EQ(q.connections[0].action, "malformed");
    EXPECT_EQ(q.connections[0].reason,
              "tunnel: the client sent nothing within 200 ms (a connection for a name carries only what the broker "
              "can judge)");
  }
  EXPECT_TRUE(server.names().empty());
}

// Python's http.server on 127.0.0.1 (HTTP/1.1, keep-alive), printing
// "<Host> <path>" for every request it serves.
class python_http_server {
 public:
  python_http_server() {
    int out[2];
    if (::pipe(out) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(out[1], 1);
      ::close(out[0]);
      ::close(out[1]);
      const char* script =
          "import http.server, sys\n"
          "class H(http.server.BaseHTTPRequestHandler):\n"
          "    protocol_version = 'HTTP/1.1'\n"
          "    def do_GET(self):\n"
          "        print(self.headers.get('Host'), self.path, flush=True)\n"
          "        self.send_response(200)\n"
          "        self.send_header('Content-Length', '2')\n"
          "        self.end_headers()\n"
          "        self.wfile.write(b'ok')\n"
          "    def log_message(self, *a): pass\n"
          "s = http.server.ThreadingHTTPServer(('127.0.0.1', 0), H)\n"
          "print(s.server_address[1], flush=True)\n"
          "s.serve_forever()\n";
      ::execl("/usr/bin/python3", "python3", "-c", script, static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(out[1]);
    out_ = fd_guard(out[0]);
    set_io_timeouts(out_.get(), 10s);
    const std::string first = recv_line();
    port_ = first.empty() ? 0 : std::atoi(first.c_str());
  }
  ~python_http_server() { served(); }
  int port() const { return port_; }
  // Stops the server; every "<Host> <path>" it served.
  std::vector<std::string> served() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      ::waitpid(pid_, nullptr, 0);
      pid_ = -1;
      for (std::string line = recv_line(); !line.empty(); line = recv_line()) lines_.push_back(line);
    }
    return lines_;
  }

 private:
  std::string recv_line() {
    std::string line;
    char c;
    while (::read(out_.get(), &c, 1) == 1 && c != '\n') line += c;
    return line;
  }
  pid_t pid_ = -1;
  fd_guard out_;
  int port_ = 0;
  std::vector<std::string> lines_;
};

// Sends `request` on `fd` and reads one response of the server above.
bool served_ok(int fd, const std::string& request) {
  if (!send_all(fd, request)) return false;
  std::string got = recv_until(fd, "\r\n\r\n");  // may hold the body too
  const auto end = got.find("\r\n\r\n");
  if (got.rfind("HTTP/1.", 0) != 0 || end == std::string::npos) return false;
  got.erase(0, end + 4);
  if (got.size() < 2) got += recv_exact(fd, 2 - got.size());
  return got == "ok";
}

TEST(BrokerJudgeHttp, RequestsReachPythonsServerOnlyForTheAllowedName) {
  if (::access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/python3 for http.server";
  python_http_server server;
  ASSERT_GT(server.port(), 0);
  auto b = start_broker(filtered({rule(allowed, rule_action::allow)}), local_hooks(server.port()));
  ASSERT_TRUE(b.broker);
  const std::string good = "GET /good HTTP/1.1\r\nHost: allowed.example\r\n\r\n";
  {  // A second request on a kept-alive tunnel, for the denied name: refused, the first served.
    fd_guard c = connect_tcp(b.port);
    ASSERT_TRUE(open_tunnel(c.get(), std::string(allowed) + ":80"));
    EXPECT_TRUE(served_ok(c.get(), good));
    EXPECT_FALSE(served_ok(c.get(), "GET /second HTTP/1.1\r\nHost: denied.example\r\n\r\n"));
  }
  for (const std::string& hidden : {std::string("\r\nGET /crlf HTTP/1.1\r\nHost: denied.example\r\n\r\n"),
                                    std::string("GET   /spaces   HTTP/1.1\r\nHost: denied.example\r\n\r\n"),
                                    std::string("GET  http://denied.example/absolute HTTP/1.1\r\nHost: allowed.example\r\n\r\n")}) {
    fd_guard c = connect_tcp(b.port);
    ASSERT_TRUE(open_tunnel(c.get(), std::string(allowed) + ":80"));
    EXPECT_FALSE(served_ok(c.get(), hidden));
  }
  {  // Extra spaces for the allowed name are served (python splits on whitespace too).
    fd_guard c = connect_tcp(b.port);
    ASSERT_TRUE(open_tunnel(c.get(), std::string(allowed) + ":80"));
    EXPECT_TRUE(served_ok(c.get(), "GET   /spaced   HTTP/1.1\r\nHost: allowed.example\r\n\r\n"));
  }
  const auto e = wait_for_total(*b.broker, 5);
  EXPECT_EQ(e.total, 5u);
  EXPECT_EQ(e.allowed, 1u);
  EXPECT_EQ(e.denied, 4u);
  for (const auto& r : e.connections) {
    if (r.action == "deny") {
      EXPECT_NE(r.reason.find("denied.example does not match the tunnel's host allowed.example"), std::string::npos)
          << r.reason;
    }
  }
  EXPECT_EQ(server.served(), (std::vector<std::string>{"allowed.example /good", "allowed.example /spaced"}));
}

}  // namespace
}  // namespace cordon::broker
