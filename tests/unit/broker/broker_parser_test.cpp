// Unit tests: the broker's pure parsers and encoders (src/broker/http_request.h,
// src/broker/socks5.h).
#include <gtest/gtest.h>

#include <string>

#include "broker/http_request.h"
#include "broker/socks5.h"

namespace cordon::broker {
namespace {

constexpr std::size_t limit = 16 * 1024;

http_parse_result parse(const std::string& text, std::size_t max = limit) { return parse_http_request(text, max); }

TEST(BrokerHttpParser, ConnectWithName) {
  const std::string head = "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\nUser-Agent: t\r\n\r\n";
  const auto r = parse(head + "tunnel bytes");
  ASSERT_EQ(r.status, http_parse_status::complete) << r.error;
  EXPECT_EQ(r.request.kind, http_kind::connect);
  EXPECT_EQ(r.request.method, "CONNECT");
  EXPECT_EQ(r.request.host, "example.com");
  EXPECT_EQ(r.request.port, 443);
  EXPECT_EQ(r.request.version, "HTTP/1.1");
  ASSERT_EQ(r.request.headers.size(), 2u);
  EXPECT_EQ(r.request.headers[1].name, "User-Agent");
  EXPECT_EQ(r.request.headers[1].value, "t");
  EXPECT_EQ(r.head_length, head.size());  // what follows is payload
}

TEST(BrokerHttpParser, ConnectWithBracketedIpv6AndIpv4) {
  auto r = parse("CONNECT [2001:db8::1]:8443 HTTP/1.0\r\n\r\n");
  ASSERT_EQ(r.status, http_parse_status::complete) << r.error;
  EXPECT_EQ(r.request.host, "[2001:db8::1]");  // brackets kept: the matcher takes them
  EXPECT_EQ(r.request.port, 8443);
  r = parse("CONNECT [::ffff:10.0.0.1]:1 HTTP/1.1\r\n\r\n");
  ASSERT_EQ(r.status, http_parse_status::complete) << r.error;
  EXPECT_EQ(r.request.host, "[::ffff:10.0.0.1]");
  r = parse("CONNECT 192.0.2.1:22 HTTP/1.1\r\n\r\n");
  ASSERT_EQ(r.status, http_parse_status::complete) << r.error;
  EXPECT_EQ(r.request.host, "192.0.2.1");
  EXPECT_EQ(r.request.port, 22);
}

TEST(BrokerHttpParser, ConnectMalformedAuthorities) {
  for (const char* target : {"example.com", "example.com:", "example.com:https", "example.com:123456", "::1:443",
                             "[::1", "[::1]443", "[::1]:", "example.com:-1"}) {
    const auto r = parse(std::string("CONNECT ") + target + " HTTP/1.1\r\n\r\n");
    EXPECT_EQ(r.status, http_parse_status::bad_request) << target;
    EXPECT_FALSE(r.error.empty()) << target;
    EXPECT_EQ(r.request.kind, http_kind::connect) << target;  // recognized as CONNECT even so
  }
  // The port is not range-checked here: the rule matcher refuses 0 and 65536.
  auto r = parse("CONNECT example.com:65536 HTTP/1.1\r\n\r\n");
  ASSERT_EQ(r.status, http_parse_status::complete);
  EXPECT_EQ(r.request.port, 65536);
}

TEST(BrokerHttpParser, ForwardWithPortAndQuery) {
  const auto r = parse("GET http://Example.com:8080/a/b?x=1&y=2#frag HTTP/1.1\r\nHost: example.com:8080\r\n\r\n");
  ASSERT_EQ(r.status, http_parse_status::complete) << r.error;
  EXPECT_EQ(r.request.kind, http_kind::forward);
  EXPECT_EQ(r.request.method, "GET");
  EXPECT_EQ(r.request.host, "Example.com");
  EXPECT_EQ(r.request.port, 8080);
  EXPECT_EQ(r.request.authority, "Example.com:8080");
  EXPECT_EQ(r.request.path, "/a/b?x=1&y=2");
}

TEST(BrokerHttpParser, ForwardDefaultsPortAndPath) {
  auto r = parse("GET http://example.com HTTP/1.1\r\n\r\n");
  ASSERT_EQ(r.status, http_parse_status::complete) << r.error;
  EXPECT_EQ(r.request.port, 80);
  EXPECT_EQ(r.request.path, "/");
  r = parse("HEAD HTTP://example.com?q HTTP/1.0\r\n\r\n");  // scheme is case-insensitive
  ASSERT_EQ(r.status, http_parse_status::complete) << r.error;
  EXPECT_EQ(r.request.path, "/?q");
  r = parse("GET http://example.com:/x HTTP/1.1\r\n\r\n");  // empty port: the default (RFC 3986)
  ASSERT_EQ(r.status, http_parse_status::complete) << r.error;
  EXPECT_EQ(r.request.port, 80);
  r = parse("POST http://[2001:db8::2]/p HTTP/1.1\r\n\r\n");
  ASSERT_EQ(r.status, http_parse_status::complete) << r.error;
  EXPECT_EQ(r.request.host, "[2001:db8::2]");
  EXPECT_EQ(r.request.port, 80);
}

TEST(BrokerHttpParser, ForwardRefusesOtherSchemesAndOriginForm) {
  for (const char* line :
       {"GET https://example.com/ HTTP/1.1", "GET ftp://example.com/ HTTP/1.1", "GET /index.html HTTP/1.1",
        "OPTIONS * HTTP/1.1", "GET example.com/ HTTP/1.1", "GET http://user:pw@example.com/ HTTP/1.1"}) {
    const auto r = parse(std::string(line) + "\r\nHost: example.com\r\n\r\n");
    EXPECT_EQ(r.status, http_parse_status::bad_request) << line;
    EXPECT_EQ(r.request.kind, http_kind::forward) << line;
    EXPECT_EQ(r.request.method, std::string(line).substr(0, std::string(line).find(' '))) << line;
  }
}

TEST(BrokerHttpParser, MalformedLines) {
  const char* heads[] = {
      "GET  http://a.example/ HTTP/1.1\r\n\r\n",  // two spaces
      "GET http://a.example/ HTTP/2.0\r\n\r\n",   // not HTTP/1.x
      "GET http://a.example/\r\n\r\n",            // HTTP/0.9
      "G(T http://a.example/ HTTP/1.1\r\n\r\n",   // method not a token
      "GET http://a.example/ HTTP/1.1\r\nNoColon\r\n\r\n",
      "GET http://a.example/ HTTP/1.1\r\nBad Name: x\r\n\r\n",
      "GET http://a.example/ HTTP/1.1\r\nName : x\r\n\r\n",  // space before colon (RFC 9112 §5.1)
      "GET http://a.example/ HTTP/1.1\r\nA: b\r\n folded\r\n\r\n",
      "GET http://a.example/ HTTP/1.1\nHost: x\r\n\r\n",    // bare LF
      "GET http://a.example/ HTTP/1.1\r\nA: b\rc\r\n\r\n",  // bare CR
      "\r\n\r\n",
  };
  for (const char* head : heads) {
    const auto r = parse(head);
    EXPECT_EQ(r.status, http_parse_status::bad_request) << head;
    EXPECT_FALSE(r.error.empty());
  }
}

TEST(BrokerHttpParser, GarbageIsRefusedBeforeTheHeadEnds) {
  // A TLS ClientHello sent straight to the proxy: refused at its first byte.
  auto r = parse(std::string("\x16\x03\x01\x02\x00\x01", 6));
  EXPECT_EQ(r.status, http_parse_status::bad_request);
  // A bad request line is refused as soon as the line is complete.
  r = parse("HELLO THERE\r\nHost: x");
  EXPECT_EQ(r.status, http_parse_status::bad_request);
  const char with_nul[] = "GET http://a.example/ HTTP/1.1\r\nHost: a\0b";
  r = parse(std::string(with_nul, 39));
  EXPECT_EQ(r.status, http_parse_status::incomplete);  // the NUL has not arrived yet
  r = parse(std::string(with_nul, sizeof with_nul - 1));
  EXPECT_EQ(r.status, http_parse_status::bad_request);
}

TEST(BrokerHttpParser, IncompleteHeads) {
  for (const char* head : {"", "CONN", "CONNECT a.example:443 HTTP/1.1", "CONNECT a.example:443 HTTP/1.1\r",
                           "CONNECT a.example:443 HTTP/1.1\r\n", "CONNECT a.example:443 HTTP/1.1\r\nHost: a\r\n\r"}) {
    EXPECT_EQ(parse(head).status, http_parse_status::incomplete) << head;
  }
}

TEST(BrokerHttpParser, OversizeHead) {
  const std::string big = "CONNECT a.example:443 HTTP/1.1\r\nX-Fill: " + std::string(200, 'x') + "\r\n\r\n";
  EXPECT_EQ(parse(big, big.size()).status, http_parse_status::complete);
  EXPECT_EQ(parse(big, big.size() - 1).status, http_parse_status::too_large);
  // Incomplete and already at the limit: it can only grow.
  EXPECT_EQ(parse(big.substr(0, 100), 100).status, http_parse_status::too_large);
  EXPECT_EQ(parse(big.substr(0, 99), 100).status, http_parse_status::incomplete);
}

TEST(BrokerHttpParser, ForwardHeadRewriting) {
  const auto r = parse(
      "POST http://api.example:8080/v1/x?y=z HTTP/1.1\r\n"
      "Host: other.example\r\n"
      "Proxy-Connection: keep-alive\r\n"
      "Proxy-Authorization: Basic c2VjcmV0\r\n"
      "PROXY-Other: x\r\n"
      "Connection: keep-alive, X-Hop\r\n"
      "Keep-Alive: timeout=5\r\n"
      "X-Hop: 1\r\n"
      "Content-Length: 4\r\n"
      "Accept: */*\r\n\r\nbody");
  ASSERT_EQ(r.status, http_parse_status::complete) << r.error;
  EXPECT_EQ(forward_request_head(r.request),
            "POST /v1/x?y=z HTTP/1.1\r\n"
            "Host: api.example:8080\r\n"  // RFC 9112 §3.2.2: the target's authority, not the received Host
            "Content-Length: 4\r\n"
            "Accept: */*\r\n"
            "Connection: close\r\n\r\n");
}

TEST(BrokerHttpParser, ForwardHeadAddsHost) {
  const auto r = parse("GET http://a.example/ HTTP/1.0\r\nAccept: x\r\n\r\n");
  ASSERT_EQ(r.status, http_parse_status::complete) << r.error;
  EXPECT_EQ(forward_request_head(r.request),
            "GET / HTTP/1.0\r\nHost: a.example\r\nAccept: x\r\nConnection: close\r\n\r\n");
}

TEST(BrokerHttpParser, Responses) {
  const std::string r = http_response(403, "no\n", {{"X-Cordon-Rule", "2"}});
  EXPECT_EQ(r,
            "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 3\r\n"
            "Connection: close\r\nX-Cordon-Rule: 2\r\n\r\nno\n");
  EXPECT_EQ(http_reason_phrase(431), "Request Header Fields Too Large");
  EXPECT_EQ(http_reason_phrase(504), "Gateway Timeout");
}

// ---- SOCKS5 ----------------------------------------------------------------

std::string bytes(std::initializer_list<int> b) {
  std::string s;
  for (int c : b) s += static_cast<char>(c);
  return s;
}

TEST(BrokerSocks5, Greeting) {
  auto g = parse_socks5_greeting(bytes({5, 2, 2, 0}));
  ASSERT_EQ(g.status, socks5_status::complete);
  EXPECT_TRUE(g.no_auth_offered);
  EXPECT_EQ(g.length, 4u);
  g = parse_socks5_greeting(bytes({5, 1, 2}));  // username/password only
  ASSERT_EQ(g.status, socks5_status::complete);
  EXPECT_FALSE(g.no_auth_offered);
  g = parse_socks5_greeting(bytes({5, 0}));
  ASSERT_EQ(g.status, socks5_status::complete);
  EXPECT_FALSE(g.no_auth_offered);
  EXPECT_EQ(parse_socks5_greeting(bytes({5, 3, 0})).status, socks5_status::incomplete);
  EXPECT_EQ(parse_socks5_greeting(bytes({5})).status, socks5_status::incomplete);
  EXPECT_EQ(parse_socks5_greeting(bytes({4, 1, 0})).status, socks5_status::error);
  EXPECT_EQ(socks5_method_selection(true), bytes({5, 0}));
  EXPECT_EQ(socks5_method_selection(false), bytes({5, 0xff}));
}

TEST(BrokerSocks5, RequestIpv4) {
  const auto r = parse_socks5_request(bytes({5, 1, 0, 1, 192, 0, 2, 1, 0x01, 0xbb, 'x'}));
  ASSERT_EQ(r.status, socks5_status::complete) << r.error;
  EXPECT_EQ(r.request.host, "192.0.2.1");
  EXPECT_EQ(r.request.port, 443);
  EXPECT_EQ(r.length, 10u);
}

TEST(BrokerSocks5, RequestDomain) {
  std::string req = bytes({5, 1, 0, 3, 11}) + "example.com" + bytes({0x1f, 0x90});
  const auto r = parse_socks5_request(req);
  ASSERT_EQ(r.status, socks5_status::complete) << r.error;
  EXPECT_EQ(r.request.address_type, socks5_address_type::domain);
  EXPECT_EQ(r.request.host, "example.com");
  EXPECT_EQ(r.request.port, 8080);
  EXPECT_EQ(r.length, req.size());
  for (std::size_t n = 0; n < req.size(); ++n) {
    EXPECT_EQ(parse_socks5_request(req.substr(0, n)).status, socks5_status::incomplete) << n;
  }
  // Bytes are passed on unchecked; the matcher refuses them.
  const auto odd = parse_socks5_request(bytes({5, 1, 0, 3, 3, 'a', 0, 'b', 0, 80}));
  ASSERT_EQ(odd.status, socks5_status::complete);
  EXPECT_EQ(odd.request.host, std::string("a\0b", 3));
}

TEST(BrokerSocks5, RequestIpv6) {
  const auto r =
      parse_socks5_request(bytes({5, 1, 0, 4, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 22}));
  ASSERT_EQ(r.status, socks5_status::complete) << r.error;
  EXPECT_EQ(r.request.host, "2001:db8::1");
  EXPECT_EQ(r.request.port, 22);
  EXPECT_EQ(r.length, 22u);
}

TEST(BrokerSocks5, RequestErrors) {
  auto r = parse_socks5_request(bytes({4, 1, 0, 1, 1, 2, 3, 4, 0, 80}));
  EXPECT_EQ(r.status, socks5_status::error);
  EXPECT_EQ(r.reply, socks5_reply_code::general_failure);
  r = parse_socks5_request(bytes({5, 2, 0, 1, 192, 0, 2, 1, 0, 80}));  // BIND
  EXPECT_EQ(r.status, socks5_status::error);
  EXPECT_EQ(r.reply, socks5_reply_code::command_not_supported);
  EXPECT_EQ(r.request.host, "192.0.2.1");                           // parsed for the record
  r = parse_socks5_request(bytes({5, 3, 0, 1, 0, 0, 0, 0, 0, 0}));  // UDP ASSOCIATE
  EXPECT_EQ(r.reply, socks5_reply_code::command_not_supported);
  EXPECT_NE(r.error.find("UDP ASSOCIATE"), std::string::npos);
  r = parse_socks5_request(bytes({5, 9, 0, 1, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(r.reply, socks5_reply_code::command_not_supported);
  r = parse_socks5_request(bytes({5, 1, 0, 2, 1, 2, 3, 4, 0, 80}));
  EXPECT_EQ(r.status, socks5_status::error);
  EXPECT_EQ(r.reply, socks5_reply_code::address_type_not_supported);
}

TEST(BrokerSocks5, Replies) {
  EXPECT_EQ(socks5_reply(socks5_reply_code::not_allowed), bytes({5, 2, 0, 1, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(socks5_reply(0, "127.0.0.1", 40000), bytes({5, 0, 0, 1, 127, 0, 0, 1, 0x9c, 0x40}));
  EXPECT_EQ(socks5_reply(0, "::1", 1), bytes({5, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1}));
  EXPECT_EQ(socks5_reply(1, "not an address", 7), bytes({5, 1, 0, 1, 0, 0, 0, 0, 0, 7}));
}

}  // namespace
}  // namespace cordon::broker
