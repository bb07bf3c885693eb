// Unit tests: what a transparent connection's first bytes name
// (src/broker/first_bytes.h): the SNI of a TLS ClientHello, the Host of an
// HTTP request head, or nothing.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "broker/first_bytes.h"
#include "broker_test_support.h"

namespace cordon::broker {
namespace {

using namespace test;

TEST(BrokerFirstBytes, TlsServerName) {
  const std::string hello = client_hello(other_extension() + sni_extension("api.example.com"));
  const auto got = classify_first_bytes(hello);
  EXPECT_EQ(got.status, first_bytes_status::tls);
  EXPECT_EQ(got.name, "api.example.com");
  // Every prefix is incomplete, never a wrong answer.
  for (std::size_t n = 1; n < hello.size(); ++n) {
    EXPECT_EQ(classify_first_bytes(hello.substr(0, n)).status, first_bytes_status::incomplete) << n;
  }
}

TEST(BrokerFirstBytes, TlsWithoutServerName) {
  auto got = classify_first_bytes(client_hello(other_extension()));
  EXPECT_EQ(got.status, first_bytes_status::tls);
  EXPECT_EQ(got.name, "");
  got = classify_first_bytes(client_hello("", false));
  EXPECT_EQ(got.status, first_bytes_status::tls);
  EXPECT_EQ(got.name, "");
}

// TLS no check can read is malformed, never passed as another protocol.
TEST(BrokerFirstBytes, MalformedTlsIsMalformed) {
  std::string hello = client_hello(sni_extension("api.example.com"));
  // The SNI list claims more than the extension holds.
  const auto at = hello.find("api.example.com") - 5;
  hello[at] = '\x7f';
  EXPECT_EQ(classify_first_bytes(hello).status, first_bytes_status::malformed);
  EXPECT_EQ(classify_first_bytes(std::string("\x16\x09\x00\x00\x05", 5) + "xxxxx").status, first_bytes_status::malformed);
  // A handshake that is not a ClientHello.
  const auto got = classify_first_bytes(std::string("\x16\x03\x01\x00\x04\x02\x00\x00\x00", 9));
  EXPECT_EQ(got.status, first_bytes_status::malformed);
  EXPECT_EQ(got.problem, "the first TLS handshake message is not a ClientHello");
  // Another record type before the ClientHello.
  EXPECT_EQ(classify_first_bytes(std::string("\x15\x03\x01\x00\x02\x01\x00", 7)).status, first_bytes_status::malformed);
}

TEST(BrokerFirstBytes, HttpHost) {
  auto got = classify_first_bytes("GET /x HTTP/1.1\r\nUser-Agent: t\r\nHOST: Files.Example:8080\r\n\r\n");
  EXPECT_EQ(got.status, first_bytes_status::http);
  EXPECT_EQ(got.name, "Files.Example");
  got = classify_first_bytes("GET / HTTP/1.1\r\nHost: [::1]:80\r\n\r\n");
  EXPECT_EQ(got.name, "[::1]");
  got = classify_first_bytes("GET / HTTP/1.1\r\nHost: [::1]\r\n\r\n");
  EXPECT_EQ(got.name, "[::1]");
  got = classify_first_bytes("GET / HTTP/1.0\r\n\r\n");
  EXPECT_EQ(got.status, first_bytes_status::http);
  EXPECT_EQ(got.name, "");
  EXPECT_EQ(classify_first_bytes("GET / HTTP/1.1\r\nHost: a").status, first_bytes_status::incomplete);
  EXPECT_EQ(classify_first_bytes("GE").status, first_bytes_status::incomplete);
  // As a lenient server reads it (RFC 9112 §2.2, §3): empty lines first,
  // any whitespace between the words, bare LF line ends.
  got = classify_first_bytes("\r\n\nGET \t /  HTTP/1.1\nHost:  b.example \n\n");
  EXPECT_EQ(got.status, first_bytes_status::http);
  EXPECT_EQ(got.name, "b.example");
  got = classify_first_bytes("GET  http://c.example/ HTTP/1.1\r\nHost: b.example\r\n\r\n");
  EXPECT_EQ(got.name, "c.example");
}

// A server routes a request whose target is in absolute form by that target
// and ignores Host (RFC 9112 §3.2.2): the target's host is the name.
TEST(BrokerFirstBytes, AnAbsoluteFormTargetNamesTheHost) {
  auto got = classify_first_bytes("GET http://denied.example/x HTTP/1.1\r\nHost: allowed.example\r\n\r\n");
  EXPECT_EQ(got.status, first_bytes_status::http);
  EXPECT_EQ(got.name, "denied.example");
  got = classify_first_bytes("GET HTTPS://user:pw@Denied.Example:8443?q HTTP/1.1\r\nHost: allowed.example\r\n\r\n");
  EXPECT_EQ(got.name, "Denied.Example");
  got = classify_first_bytes("GET http://[::1]:80/ HTTP/1.1\r\n\r\n");
  EXPECT_EQ(got.name, "[::1]");
  got = classify_first_bytes("GET /http://denied.example/ HTTP/1.1\r\nHost: allowed.example\r\n\r\n");
  EXPECT_EQ(got.name, "allowed.example");  // origin form: a path that only looks like a URL
}

TEST(BrokerFirstBytes, AnythingElseIsOther) {
  EXPECT_EQ(classify_first_bytes("SSH-2.0-OpenSSH_9.2\r\n").status, first_bytes_status::other);
  EXPECT_EQ(classify_first_bytes(std::string("\x00\x01\x02", 3)).status, first_bytes_status::other);
  EXPECT_EQ(classify_first_bytes("").status, first_bytes_status::incomplete);
  // A token could still be a method (servers accept methods they do not
  // know, and route them by Host): held until its line ends.
  EXPECT_EQ(classify_first_bytes("x").status, first_bytes_status::incomplete);
  EXPECT_EQ(classify_first_bytes("PING\r\n").status, first_bytes_status::other);
  EXPECT_EQ(classify_first_bytes("GETX / HTTP/1.1\r\nHost: a.example\r\n\r\n").name, "a.example");
  EXPECT_EQ(classify_first_bytes("PO").status, first_bytes_status::incomplete);
  EXPECT_EQ(classify_first_bytes("x\x01").status, first_bytes_status::other);
}

}  // namespace
}  // namespace cordon::broker
