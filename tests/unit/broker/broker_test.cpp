// Unit tests: a running network broker (src/broker/broker.h) on a listener
// of the test's own, relaying to servers on 127.0.0.1. The hooks resolve
// every name to a documentation address and dial the local server instead,
// so nothing leaves loopback.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "broker_test_support.h"
#include "source_dir.h"

namespace cordon::broker {
namespace {

using namespace test;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

const std::string established = "HTTP/1.1 200 Connection established\r\n\r\n";

// Sends a CONNECT and reads the broker's response head; true on 200.
bool open_tunnel(int fd, const std::string& authority, const std::string& extra = "") {
  if (!send_all(fd, connect_request(authority, extra))) return false;
  return recv_exact(fd, established.size()) == established;
}

// Sends `request`, reads until the broker closes: the whole response.
std::string round_trip(int port, const std::string& request) {
  fd_guard c = connect_tcp(port);
  if (c.get() < 0 || !send_all(c.get(), request)) return {};
  return recv_all(c.get());
}

const network_connection* only_record(const network_evidence& e) {
  return e.connections.size() == 1 ? &e.connections[0] : nullptr;
}

// Both relay paths: splice(2) through pipes (the default), and user-space
// buffers (when no pipe can be had).
class BrokerRelay : public ::testing::TestWithParam<bool> {};
INSTANTIATE_TEST_SUITE_P(Paths, BrokerRelay, ::testing::Values(true, false),
                         [](const auto& path) { return path.param ? "splice" : "buffers"; });

broker_limits relay_limits() {
  broker_limits limits;
  limits.splice = BrokerRelay::GetParam();
  return limits;
}

TEST_P(BrokerRelay, ConnectRelaysBothWaysWithPipelinedBytesAndExactCounts) {
  test_server server(echo);
  auto b = start_broker(filtered({rule("**.example.com", rule_action::allow)}), local_hooks(server.port()),
                        relay_limits());
  ASSERT_TRUE(b.broker);
  fd_guard c = connect_tcp(b.port);
  ASSERT_GE(c.get(), 0);
  // "early" arrives with the request head: it must reach the destination.
  ASSERT_TRUE(open_tunnel(c.get(), "api.example.com:443", "early"));
  EXPECT_EQ(recv_exact(c.get(), 5), "early");
  std::size_t sent = 5;
  for (int i = 0; i < 16; ++i) {
    const std::string chunk(4096, static_cast<char>('a' + i));
    ASSERT_TRUE(send_all(c.get(), chunk));
    ASSERT_EQ(recv_exact(c.get(), chunk.size()), chunk);
    sent += chunk.size();
  }
  ::shutdown(c.get(), SHUT_WR);
  EXPECT_TRUE(reads_eof(c.get()));  // the echo server closes after our EOF; the broker passes it on
  c.reset();

  const auto e = wait_for_total(*b.broker, 1);
  const auto* r = only_record(e);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->protocol, "http_connect");
  EXPECT_EQ(r->host, "api.example.com");
  EXPECT_EQ(r->port, 443);
  EXPECT_EQ(r->rule, 0u);
  EXPECT_EQ(r->action, "allow");
  EXPECT_EQ(r->reason, "");
  EXPECT_EQ(r->address, "203.0.113.7");  // the decided address, not the dialed one
  EXPECT_EQ(r->bytes_sent, sent);
  EXPECT_EQ(r->bytes_received, sent);
  EXPECT_GE(r->duration_ms, 0);
  EXPECT_EQ(e.total, 1u);
  EXPECT_EQ(e.allowed, 1u);
  EXPECT_EQ(e.listeners, std::vector<std::string>{"127.0.0.1:" + std::to_string(b.port)});
}

TEST(Broker, ConnectWithIpv6Literal) {
  test_server server(echo);
  auto b = start_broker(filtered({rule("2001:db8::5", rule_action::allow, 443)}), local_hooks(server.port()));
  ASSERT_TRUE(b.broker);
  fd_guard c = connect_tcp(b.port);
  ASSERT_TRUE(open_tunnel(c.get(), "[2001:DB8:0::5]:443"));
  ASSERT_TRUE(send_all(c.get(), "v6"));
  EXPECT_EQ(recv_exact(c.get(), 2), "v6");
  c.reset();
  const auto e = wait_for_total(*b.broker, 1);
  ASSERT_EQ(e.connections.size(), 1u);
  EXPECT_EQ(e.connections[0].host, "2001:db8::5");
  EXPECT_EQ(e.connections[0].address, "2001:db8::5");
}

TEST(Broker, ForwardGetReachesTheOriginInOriginForm) {
  std::mutex mutex;
  std::string seen;
  const std::string response = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello";
  test_server origin([&](int fd) {
    const std::string request = recv_until(fd, "\r\n\r\nping");
    {
      std::lock_guard<std::mutex> lock(mutex);
      seen = request;
    }
    send_all(fd, response);
  });
  std::vector<std::pair<std::string, int>> dialed;
  broker_hooks hooks = local_hooks(origin.port());
  hooks.dial = [&](const std::string& address, int port) {
    dialed.emplace_back(address, port);
    return std::make_pair(std::string("127.0.0.1"), origin.port());
  };
  auto b = start_broker(filtered({rule("origin.example", rule_action::allow, 8080)}), hooks);
  ASSERT_TRUE(b.broker);
  const std::string got = round_trip(b.port,
                                     "POST http://origin.example:8080/submit?x=1 HTTP/1.1\r\n"
                                     "Host: origin.example:8080\r\n"
                                     "Proxy-Connection: keep-alive\r\n"
                                     "Proxy-Authorization: Basic Zm9vOmJhcg==\r\n"
                                     "Connection: keep-alive, X-Secret\r\n"
                                     "Keep-Alive: 300\r\n"
                                     "X-Secret: s\r\n"
                                     "Content-Length: 4\r\n"
                                     "\r\nping");
  EXPECT_EQ(got, response);
  const std::string head =
      "POST /submit?x=1 HTTP/1.1\r\nHost: origin.example:8080\r\nContent-Length: 4\r\nConnection: close\r\n\r\n";
  {
    std::lock_guard<std::mutex> lock(mutex);
    EXPECT_EQ(seen, head + "ping");
  }
  const auto e = wait_for_total(*b.broker, 1);
  ASSERT_EQ(e.connections.size(), 1u);
  const auto& r = e.connections[0];
  EXPECT_EQ(r.protocol, "http_forward");
  EXPECT_EQ(r.host, "origin.example");
  EXPECT_EQ(r.port, 8080);
  EXPECT_EQ(r.action, "allow");
  EXPECT_EQ(r.bytes_sent, head.size() + 4);  // what went to the origin: the rewritten head and the body
  EXPECT_EQ(r.bytes_received, response.size());
  ASSERT_EQ(dialed.size(), 1u);
  EXPECT_EQ(dialed[0], std::make_pair(std::string("203.0.113.7"), 8080));
}

TEST(Broker, ForwardDefaultPortAndAddedHost) {
  std::mutex mutex;
  std::string seen;
  test_server origin([&](int fd) {
    const std::string request = recv_until(fd, "\r\n\r\n");
    {
      std::lock_guard<std::mutex> lock(mutex);
      seen = request;
    }
    send_all(fd, "HTTP/1.0 204 No Content\r\n\r\n");
  });
  auto b = start_broker(filtered({rule("plain.example", rule_action::allow, 80)}), local_hooks(origin.port()));
  ASSERT_TRUE(b.broker);
  EXPECT_EQ(round_trip(b.port, "GET http://plain.example HTTP/1.0\r\nAccept: */*\r\n\r\n"),
            "HTTP/1.0 204 No Content\r\n\r\n");
  std::lock_guard<std::mutex> lock(mutex);
  EXPECT_EQ(seen, "GET / HTTP/1.0\r\nHost: plain.example\r\nAccept: */*\r\nConnection: close\r\n\r\n");
}

TEST(Broker, Socks5DomainIpv4AndIpv6) {
  test_server server(echo);
  auto b =
      start_broker(filtered({rule("api.example.com", rule_action::allow), rule("192.0.2.10", rule_action::allow, 22),
                             rule("2001:db8::10", rule_action::allow)}),
                   local_hooks(server.port()));
  ASSERT_TRUE(b.broker);
  struct attempt {
    std::string request;
    std::string host;
    std::string address;
  };
  const attempt attempts[] = {
      {socks_domain_request("api.example.com", 443), "api.example.com", "203.0.113.7"},
      {socks_ip_request("192.0.2.10", 22), "192.0.2.10", "192.0.2.10"},
      {socks_ip_request("2001:db8::10", 8443), "2001:db8::10", "2001:db8::10"},
  };
  for (const auto& a : attempts) {
    SCOPED_TRACE(a.host);
    fd_guard c = connect_tcp(b.port);
    std::string reply;
    ASSERT_EQ(socks_handshake(c.get(), a.request, &reply), 0);
    // BND.ADDR: the outbound socket's own address, here on loopback.
    ASSERT_EQ(reply.size(), 10u);
    EXPECT_EQ(reply.substr(3, 5), std::string("\x01\x7f\x00\x00\x01", 5));
    EXPECT_NE(reply.substr(8, 2), std::string(2, '\0'));
    ASSERT_TRUE(send_all(c.get(), "hi"));
    EXPECT_EQ(recv_exact(c.get(), 2), "hi");
  }
  const auto e = wait_for_total(*b.broker, 3);
  ASSERT_EQ(e.connections.size(), 3u);
  std::map<std::string, network_connection> by_host;  // recorded as they close, in no fixed order
  for (const auto& r : e.connections) by_host[r.host] = r;
  for (std::size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(attempts[i].host);
    const auto& r = by_host[attempts[i].host];
    EXPECT_EQ(r.protocol, "socks5");
    EXPECT_EQ(r.address, attempts[i].address);
    EXPECT_EQ(r.rule, i);
    EXPECT_EQ(r.bytes_sent, 2u);
  }
}

TEST(Broker, Socks5PipelinedGreetingRequestAndPayload) {
  test_server server(echo);
  auto b = start_broker(filtered({rule("api.example.com", rule_action::allow)}), local_hooks(server.port()));
  ASSERT_TRUE(b.broker);
  fd_guard c = connect_tcp(b.port);
  ASSERT_TRUE(
      send_all(c.get(), std::string{0x05, 0x01, 0x00} + socks_domain_request("api.example.com", 443) + "early"));
  EXPECT_EQ(recv_exact(c.get(), 2), std::string({0x05, 0x00}));
  const std::string reply = recv_exact(c.get(), 10);
  ASSERT_EQ(reply.size(), 10u);
  EXPECT_EQ(reply[1], 0x00);
  EXPECT_EQ(recv_exact(c.get(), 5), "early");
}

TEST(Broker, DeniedByRuleAndByDefault) {
  test_server server(echo);
  auto b =
      start_broker(filtered({rule("good.example.com", rule_action::allow), rule("bad.example.com", rule_action::deny)}),
                   local_hooks(server.port()));
  ASSERT_TRUE(b.broker);

  const std::string by_rule = round_trip(b.port, connect_request("bad.example.com:443"));
  EXPECT_EQ(status_of(by_rule), 403) << by_rule;
  EXPECT_EQ(header_of(by_rule, "X-Cordon-Rule"), "1");
  EXPECT_EQ(header_of(by_rule, "Connection"), "close");
  EXPECT_NE(by_rule.find("cordon"), std::string::npos);
  EXPECT_NE(by_rule.find("bad.example.com:443"), std::string::npos);
  EXPECT_NE(by_rule.find("rule 1"), std::string::npos);

  const std::string by_default = round_trip(b.port, connect_request("other.example.org:443"));
  EXPECT_EQ(status_of(by_default), 403) << by_default;
  EXPECT_EQ(header_of(by_default, "X-Cordon-Rule"), "default");
  EXPECT_NE(by_default.find("other.example.org:443"), std::string::npos);
  EXPECT_NE(by_default.find("default"), std::string::npos);

  const std::string forward =
      round_trip(b.port, "GET http://bad.example.com/ HTTP/1.1\r\nHost: bad.example.com\r\n\r\n");
  EXPECT_EQ(status_of(forward), 403) << forward;
  EXPECT_EQ(header_of(forward, "X-Cordon-Rule"), "1");

  fd_guard s = connect_tcp(b.port);
  EXPECT_EQ(socks_handshake(s.get(), socks_domain_request("bad.example.com", 443)), socks5_reply_code::not_allowed);
  EXPECT_TRUE(reads_eof(s.get()));
  s.reset();

  const auto e = wait_for_total(*b.broker, 4);
  ASSERT_EQ(e.connections.size(), 4u);
  EXPECT_EQ(e.denied, 4u);
  EXPECT_EQ(e.allowed + e.unreachable + e.malformed + e.error, 0u);
  EXPECT_EQ(e.connections[0].rule, 1u);
  EXPECT_TRUE(e.connections[0].rule_consulted);
  EXPECT_EQ(e.connections[0].action, "deny");
  EXPECT_EQ(e.connections[0].reason, "denied by rule 1");
  EXPECT_EQ(e.connections[0].address, "");
  EXPECT_FALSE(e.connections[1].rule);
  EXPECT_EQ(e.connections[1].reason, "denied by the default action");
  EXPECT_EQ(e.connections[2].protocol, "http_forward");
  EXPECT_EQ(e.connections[3].protocol, "socks5");
  EXPECT_EQ(e.connections[3].rule, 1u);
  EXPECT_EQ(server.connections(), 0);  // nothing denied was dialed
}

TEST(Broker, NameResolvingToLoopbackNeedsAnIpRule) {
  test_server server(echo);
  broker_hooks hooks = local_hooks(server.port());
  hooks.resolve = [](const std::string& host) {
    return host == "internal.example.com" ? std::vector<std::string>{"127.0.0.1"}
                                          : std::vector<std::string>{"203.0.113.7"};
  };
  {
    auto b = start_broker(filtered({rule("internal.example.com", rule_action::allow)}), hooks);
    ASSERT_TRUE(b.broker);
    const std::string got = round_trip(b.port, connect_request("internal.example.com:8080"));
    EXPECT_EQ(status_of(got), 403) << got;
    EXPECT_EQ(header_of(got, "X-Cordon-Rule"), "0");
    fd_guard s = connect_tcp(b.port);
    EXPECT_EQ(socks_handshake(s.get(), socks_domain_request("internal.example.com", 8080)),
              socks5_reply_code::not_allowed);
    s.reset();
    const auto e = wait_for_total(*b.broker, 2);
    ASSERT_EQ(e.connections.size(), 2u);
    for (const auto& r : e.connections) {
      EXPECT_EQ(r.action, "deny");
      EXPECT_EQ(r.rule, 0u);
      EXPECT_EQ(r.reason, "resolves to non-public address 127.0.0.1; only an IP rule can allow it");
    }
    EXPECT_EQ(e.denied, 2u);
    EXPECT_EQ(server.connections(), 0);
  }
  {
    auto b = start_broker(
        filtered({rule("internal.example.com", rule_action::allow), rule("127.0.0.1", rule_action::allow, 8080)}),
        hooks);
    ASSERT_TRUE(b.broker);
    fd_guard c = connect_tcp(b.port);
    ASSERT_TRUE(open_tunnel(c.get(), "internal.example.com:8080"));
    ASSERT_TRUE(send_all(c.get(), "in"));
    EXPECT_EQ(recv_exact(c.get(), 2), "in");
    c.reset();
    const auto e = wait_for_total(*b.broker, 1);
    ASSERT_EQ(e.connections.size(), 1u);
    EXPECT_EQ(e.connections[0].action, "allow");
    EXPECT_EQ(e.connections[0].rule, 0u);  // the name's rule decided; the IP rule opened the address
    EXPECT_EQ(e.connections[0].address, "127.0.0.1");
  }
}

TEST(Broker, IpLiteralNonPublicNeedsItsOwnRule) {
  test_server server(echo);
  {
    auto b = start_broker(filtered({rule("*", rule_action::allow)}), local_hooks(server.port()));
    ASSERT_TRUE(b.broker);
    for (const char* authority : {"10.0.0.1:443", "[::1]:443", "[::ffff:169.254.169.254]:80", "0.0.0.0:22"}) {
      const std::string got = round_trip(b.port, connect_request(authority));
      EXPECT_EQ(status_of(got), 403) << authority << ": " << got;
      EXPECT_NE(got.find("only an IP rule can allow it"), std::string::npos) << got;
    }
    EXPECT_EQ(server.connections(), 0);
  }
  {
    auto b = start_broker(filtered({rule("10.0.0.1", rule_action::allow)}), local_hooks(server.port()));
    ASSERT_TRUE(b.broker);
    fd_guard c = connect_tcp(b.port);
    EXPECT_TRUE(open_tunnel(c.get(), "10.0.0.1:443"));
  }
}

TEST(Broker, MalformedRequests) {
  test_server server(echo);
  broker_limits limits;
  limits.max_request_bytes = 1024;
  auto b = start_broker(filtered({rule("*", rule_action::allow)}), local_hooks(server.port()), limits);
  ASSERT_TRUE(b.broker);

  std::string got = round_trip(b.port, "HELLO\r\n\r\n");
  EXPECT_EQ(status_of(got), 400) << got;
  EXPECT_EQ(header_of(got, "Connection"), "close");
  got = round_trip(b.port, "GET /index.html HTTP/1.1\r\nHost: a.example\r\n\r\n");
  EXPECT_EQ(status_of(got), 400) << got;
  got = round_trip(b.port, "GET https://a.example/ HTTP/1.1\r\nHost: a.example\r\n\r\n");
  EXPECT_EQ(status_of(got), 400) << got;
  got = round_trip(b.port, "CONNECT a.example:443 HTTP/1.1\r\nX-Fill: " + std::string(2000, 'x') + "\r\n\r\n");
  EXPECT_EQ(status_of(got), 431) << got;
  got = round_trip(b.port, connect_request("under_score.example:443"));  // an invalid destination
  EXPECT_EQ(status_of(got), 400) << got;
  got =
      round_trip(b.port, std::string("\x05\x01\x00", 3) + std::string("\x05\x02\x00\x01\xc0\x00\x02\x01\x00\x50", 10));
  EXPECT_EQ(got, std::string("\x05\x00\x05\x07\x00\x01\x00\x00\x00\x00\x00\x00", 12));  // BIND: 0x07
  got = round_trip(b.port, std::string("\x05\x01\x02", 3));                             // username/password only
  EXPECT_EQ(got, std::string("\x05\xff", 2));
  {
    fd_guard c = connect_tcp(b.port);
    send_all(c.get(), "CONNECT a.exa");
    ::shutdown(c.get(), SHUT_WR);  // gives up halfway
    EXPECT_EQ(recv_all(c.get()), "");
  }

  const auto e = wait_for_total(*b.broker, 8);
  ASSERT_EQ(e.connections.size(), 8u);
  const char* protocols[] = {"unknown",      "http_forward", "http_forward", "http_connect",
                             "http_connect", "socks5",       "socks5",       "unknown"};
  for (std::size_t i = 0; i < 8; ++i) {
    SCOPED_TRACE(i);
    const auto& r = e.connections[i];
    EXPECT_EQ(r.protocol, protocols[i]);
    EXPECT_EQ(r.action, "malformed");  // no rule was consulted
    EXPECT_FALSE(r.rule_consulted);
    EXPECT_FALSE(r.reason.empty());
    EXPECT_EQ(r.bytes_sent + r.bytes_received, 0u);
  }
  EXPECT_EQ(e.connections[0].reason.rfind("malformed request: ", 0), 0u) << e.connections[0].reason;
  EXPECT_NE(e.connections[1].reason.find("origin-form"), std::string::npos) << e.connections[1].reason;
  EXPECT_NE(e.connections[3].reason.find("1024"), std::string::npos) << e.connections[3].reason;
  EXPECT_EQ(e.connections[4].host, "under_score.example");
  EXPECT_EQ(e.connections[4].reason.rfind("invalid destination: ", 0), 0u) << e.connections[4].reason;
  EXPECT_EQ(e.connections[5].host, "192.0.2.1");
  EXPECT_NE(e.connections[5].reason.find("BIND"), std::string::npos);
  EXPECT_NE(e.connections[6].reason.find("authentication"), std::string::npos);
  EXPECT_NE(e.connections[7].reason.find("closed"), std::string::npos);
  EXPECT_EQ(e.denied, 0u);
  EXPECT_EQ(e.malformed, 8u);
  EXPECT_EQ(server.connections(), 0);
}

TEST(Broker, SlowClientsDoNotBlockOthersAndAreClosedAfterTheRequestTimeout) {
  test_server server(echo);
  broker_limits limits;
  limits.request_timeout = 400ms;
  auto b = start_broker(filtered({rule("api.example.com", rule_action::allow)}), local_hooks(server.port()), limits);
  ASSERT_TRUE(b.broker);

  const auto start = steady::now();
  fd_guard stalled = connect_tcp(b.port);
  ASSERT_TRUE(send_all(stalled.get(), "CONNECT api.example.com:443 HTTP/1.1\r\nHo"));
  fd_guard trickle = connect_tcp(b.port);

  // Meanwhile another client is served at once.
  fd_guard other = connect_tcp(b.port);
  ASSERT_TRUE(open_tunnel(other.get(), "api.example.com:443"));
  ASSERT_TRUE(send_all(other.get(), "quick"));
  EXPECT_EQ(recv_exact(other.get(), 5), "quick");
  EXPECT_LT(steady::now() - start, 300ms);

  // Trickling bytes does not extend the deadline: it runs from accept.
  bool closed = false;
  while (steady::now() - start < 2s) {
    if (::send(trickle.get(), "X", 1, MSG_NOSIGNAL) != 1) {
      closed = true;
      break;
    }
    char buf[512];
    const ssize_t n = ::recv(trickle.get(), buf, sizeof buf, MSG_DONTWAIT);
    if (n >= 0) {
      closed = true;
      break;
    }
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_TRUE(closed);
  EXPECT_LT(steady::now() - start, 1500ms);

  const std::string got = recv_all(stalled.get());
  const auto elapsed = steady::now() - start;
  EXPECT_EQ(status_of(got), 408) << got;
  EXPECT_GE(elapsed, 400ms);
  EXPECT_LT(elapsed, 1500ms);
  stalled.reset();
  trickle.reset();
  other.reset();

  const auto e = wait_for_total(*b.broker, 3);
  ASSERT_EQ(e.total, 3u);
  EXPECT_EQ(e.allowed, 1u);
  EXPECT_EQ(e.malformed, 2u);
  for (const auto& r : e.connections) {
    if (r.action == "allow") continue;
    EXPECT_EQ(r.action, "malformed");
    EXPECT_EQ(r.reason, "request timeout: no complete request within 400 ms");
  }
}

TEST_P(BrokerRelay, HalfCloseFromTheClient) {
  // The server answers only after it saw EOF.
  test_server server([](int fd) {
    const std::string got = recv_all(fd);
    send_all(fd, "got:" + std::to_string(got.size()));
  });
  auto b = start_broker(filtered({rule("api.example.com", rule_action::allow)}), local_hooks(server.port()),
                        relay_limits());
  ASSERT_TRUE(b.broker);
  fd_guard c = connect_tcp(b.port);
  ASSERT_TRUE(open_tunnel(c.get(), "api.example.com:443", "ab"));
  ASSERT_TRUE(send_all(c.get(), "c"));
  ::shutdown(c.get(), SHUT_WR);
  EXPECT_EQ(recv_all(c.get()), "got:3");
  c.reset();
  const auto e = wait_for_total(*b.broker, 1);
  ASSERT_EQ(e.connections.size(), 1u);
  EXPECT_EQ(e.connections[0].bytes_sent, 3u);
  EXPECT_EQ(e.connections[0].bytes_received, 5u);
}

TEST_P(BrokerRelay, HalfCloseFromTheDestination) {
  // The server sends a banner and closes its side, then still reads.
  std::mutex mutex;
  std::condition_variable done;
  std::string late;
  bool finished = false;
  test_server server([&](int fd) {
    send_all(fd, "banner");
    ::shutdown(fd, SHUT_WR);
    const std::string got = recv_all(fd);
    std::lock_guard<std::mutex> lock(mutex);
    late = got;
    finished = true;
    done.notify_all();
  });
  auto b = start_broker(filtered({rule("api.example.com", rule_action::allow)}), local_hooks(server.port()),
                        relay_limits());
  ASSERT_TRUE(b.broker);
  fd_guard c = connect_tcp(b.port);
  // A tunnel to a name rule relays what the client sends once it is judged
  // (docs/network.md, "TLS in tunnels": every request on the connection is
  // read, and a silent client is refused): each direction carries whole
  // requests for the allowed name.
  const std::string head = "GET / HTTP/1.1\r\nHost: api.example.com\r\n\r\n";
  const std::string second = "GET /late HTTP/1.1\r\nHost: api.example.com\r\n\r\n";
  ASSERT_TRUE(open_tunnel(c.get(), "api.example.com:443", head));
  EXPECT_EQ(recv_all(c.get()), "banner");  // then EOF
  ASSERT_TRUE(send_all(c.get(), second));  // the other direction still works
  ::shutdown(c.get(), SHUT_WR);
  {
    std::unique_lock<std::mutex> lock(mutex);
    ASSERT_TRUE(done.wait_for(lock, io_timeout, [&] { return finished; }));
    EXPECT_EQ(late, head + second);
  }
  const auto e = wait_for_total(*b.broker, 1);  // both directions ended: the connection ends
  ASSERT_EQ(e.connections.size(), 1u);
  EXPECT_EQ(e.connections[0].bytes_sent, head.size() + second.size());
  EXPECT_EQ(e.connections[0].bytes_received, 6u);
}

TEST_P(BrokerRelay, SlowReaderDoesNotBlockAnotherConnection) {
  // 'F' asks for a flood the client never reads; anything else is echoed.
  std::atomic<pid_t> flooder{0};  // the flooding thread, once it floods
  test_server server([&flooder](int fd) {
    char first = 0;
    if (::recv(fd, &first, 1, 0) != 1) return;
    if (first != 'F') {
      send_all(fd, std::string(1, first));
      echo(fd);
      return;
    }
    flooder = ::gettid();
    const std::string chunk(64 * 1024, 'f');
    while (send_all(fd, chunk)) {
    }
  });
  auto b = start_broker(filtered({rule("api.example.com", rule_action::allow)}), local_hooks(server.port()),
                        relay_limits());
  ASSERT_TRUE(b.broker);
  fd_guard slow = connect_tcp(b.port);
  ASSERT_TRUE(open_tunnel(slow.get(), "api.example.com:443", "F"));
  // Every buffer on the way is full once the flooding thread blocks in send().
  ASSERT_TRUE(::cordon::test::thread_blocks(flooder)) << "the flood never filled the buffers on the way";
  fd_guard fast = connect_tcp(b.port);
  ASSERT_TRUE(open_tunnel(fast.get(), "api.example.com:443"));
  for (int i = 0; i < 20; ++i) {
    const std::string msg = "m" + std::to_string(i);
    ASSERT_TRUE(send_all(fast.get(), msg));
    ASSERT_EQ(recv_exact(fast.get(), msg.size()), msg);
  }
}

TEST(Broker, MaxConnections) {
  test_server server(echo);
  broker_limits limits;
  limits.max_connections = 2;
  auto b = start_broker(filtered({rule("api.example.com", rule_action::allow)}), local_hooks(server.port()), limits);
  ASSERT_TRUE(b.broker);
  fd_guard one = connect_tcp(b.port);
  fd_guard two = connect_tcp(b.port);
  ASSERT_TRUE(open_tunnel(one.get(), "api.example.com:443"));
  ASSERT_TRUE(open_tunnel(two.get(), "api.example.com:443"));
  fd_guard three = connect_tcp(b.port);
  ASSERT_GE(three.get(), 0);  // accepted by the kernel, then closed by the broker
  EXPECT_TRUE(reads_eof(three.get()));
  auto e = wait_for_total(*b.broker, 1);
  ASSERT_EQ(e.connections.size(), 1u);
  EXPECT_EQ(e.connections[0].reason, "too many connections: the limit is 2");
  EXPECT_EQ(e.connections[0].action, "error");
  EXPECT_EQ(e.error, 1u);

  one.reset();
  wait_for_total(*b.broker, 2);  // a slot is free again
  fd_guard four = connect_tcp(b.port);
  EXPECT_TRUE(open_tunnel(four.get(), "api.example.com:443"));
}

TEST(Broker, RecordsAreCappedAndCounted) {
  auto b = start_broker(filtered({}), broker_hooks{});
  ASSERT_TRUE(b.broker);
  const std::size_t n = network_evidence::max_recorded + 44;
  for (std::size_t i = 0; i < n; ++i) {
    const std::string got = round_trip(b.port, connect_request("c" + std::to_string(i) + ".example:443"));
    ASSERT_EQ(status_of(got), 403) << i;
  }
  const auto e = wait_for_total(*b.broker, n);
  EXPECT_EQ(e.total, n);
  EXPECT_EQ(e.denied, n);
  EXPECT_EQ(e.connections.size(), network_evidence::max_recorded);
  EXPECT_EQ(e.not_recorded, 44u);
  EXPECT_EQ(e.connections.front().host, "c0.example");  // the first ones are kept
  EXPECT_EQ(e.connections.back().host, "c255.example");
}

TEST(Broker, StopClosesOpenConnectionsPromptly) {
  test_server server(echo);
  auto b = start_broker(filtered({rule("api.example.com", rule_action::allow)}), local_hooks(server.port()));
  ASSERT_TRUE(b.broker);
  fd_guard tunnel = connect_tcp(b.port);
  ASSERT_TRUE(open_tunnel(tunnel.get(), "api.example.com:443"));
  ASSERT_TRUE(send_all(tunnel.get(), "x"));
  ASSERT_EQ(recv_exact(tunnel.get(), 1), "x");
  fd_guard half = connect_tcp(b.port);
  ASSERT_TRUE(send_all(half.get(), "CONNECT api.exa"));
  fd_guard socks = connect_tcp(b.port);
  ASSERT_TRUE(send_all(socks.get(), std::string{0x05, 0x01, 0x00}));
  ASSERT_EQ(recv_exact(socks.get(), 2), std::string({0x05, 0x00}));
  std::this_thread::sleep_for(20ms);  // the half request has arrived

  const auto start = steady::now();
  b.broker->stop();
  EXPECT_LT(steady::now() - start, 500ms);
  b.broker->stop();  // idempotent
  EXPECT_TRUE(reads_eof(tunnel.get()));
  EXPECT_TRUE(reads_eof(half.get()));
  EXPECT_TRUE(reads_eof(socks.get()));
  EXPECT_LT(connect_tcp(b.port).get(), 0);  // the listener is closed too

  const auto e = b.broker->evidence();  // complete after stop
  ASSERT_EQ(e.total, 3u);
  EXPECT_EQ(e.allowed, 1u);
  EXPECT_EQ(e.error, 2u);
  std::map<std::string, network_connection> by_protocol;  // stop() records in no particular order
  for (const auto& r : e.connections) by_protocol[r.protocol] = r;
  ASSERT_EQ(by_protocol.size(), 3u);
  EXPECT_EQ(by_protocol["http_connect"].action, "allow");
  EXPECT_EQ(by_protocol["http_connect"].reason, "");
  EXPECT_EQ(by_protocol["http_connect"].bytes_sent, 1u);
  EXPECT_EQ(by_protocol["unknown"].reason, "broker stopped before the request was complete");
  EXPECT_EQ(by_protocol["unknown"].action, "error");
  EXPECT_EQ(by_protocol["socks5"].reason, "broker stopped before the request was complete");
}

// A connection the kernel completed but the broker had not accepted yet when
// it stopped is still an attempt: stop() drains the accept queue and records
// each one.
TEST(Broker, StopRecordsConnectionsStillInTheAcceptQueue) {
  auto b = start_broker(filtered({}), broker_hooks{});
  ASSERT_TRUE(b.broker);
  std::vector<fd_guard> clients;
  for (int i = 0; i < 40; ++i) {
    clients.push_back(connect_tcp(b.port));
    ASSERT_GE(clients.back().get(), 0);
  }
  b.broker->stop();  // at once: some are still queued
  const auto e = b.broker->evidence();
  EXPECT_EQ(e.total, 40u);
  EXPECT_EQ(e.error, 40u);
  for (const auto& r : e.connections) {
    EXPECT_EQ(r.action, "error");
    EXPECT_FALSE(r.rule_consulted);
  }
}

// A listener whose accept queue is full: a connect to it gets no answer.
struct unanswered_port {
  fd_guard listener;
  std::vector<fd_guard> queued;
  int port = 0;
  unanswered_port() {
    listener = tcp_listener(port, 0);
    for (int i = 0; i < 3; ++i) {
      fd_guard fd(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
      sockaddr_in a = loopback(port);
      ::connect(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a);
      queued.push_back(std::move(fd));
    }
  }
};

TEST(Broker, ConnectTimeout) {
  unanswered_port target;
  broker_limits limits;
  limits.connect_timeout = 300ms;
  // The dials, counted: the broker dials right before its connect.
  auto dials = std::make_shared<std::atomic<int>>(0);
  broker_hooks hooks = local_hooks(target.port);
  hooks.dial = [dials, dial = hooks.dial](const std::string& address, int port) {
    dials->fetch_add(1);
    return dial(address, port);
  };
  auto b = start_broker(filtered({rule("slow.example", rule_action::allow)}), hooks, limits);
  ASSERT_TRUE(b.broker);
  auto start = steady::now();
  const std::string got = round_trip(b.port, connect_request("slow.example:443"));
  EXPECT_EQ(status_of(got), 504) << got;
  EXPECT_GE(steady::now() - start, 300ms);
  EXPECT_LT(steady::now() - start, 1500ms);

  fd_guard s = connect_tcp(b.port);
  EXPECT_EQ(socks_handshake(s.get(), socks_domain_request("slow.example", 443)), socks5_reply_code::host_unreachable);
  s.reset();

  // And stop() does not wait for a connect in progress: once it is dialed
  // (polled, not a fixed pause).
  const int dialed = dials->load();
  fd_guard pending = connect_tcp(b.port);
  ASSERT_TRUE(send_all(pending.get(), connect_request("slow.example:443")));
  for (auto until = steady::now() + 10s; dials->load() == dialed && steady::now() < until;) {
    std::this_thread::sleep_for(5ms);  // polling a condition
  }
  ASSERT_GT(dials->load(), dialed) << "the pending connect was never dialed";
  start = steady::now();
  b.broker->stop();
  EXPECT_LT(steady::now() - start, 250ms);

  const auto e = b.broker->evidence();
  ASSERT_EQ(e.connections.size(), 3u);
  EXPECT_EQ(e.connections[0].action, "unreachable");  // the rules allowed it; reaching it failed
  EXPECT_EQ(e.connections[0].rule, 0u);
  EXPECT_EQ(e.connections[0].reason, "timeout: connecting to slow.example:443 took longer than 300 ms");
  EXPECT_EQ(e.connections[2].reason, "broker stopped while connecting");
  EXPECT_EQ(e.connections[2].action, "error");
  EXPECT_EQ(e.unreachable, 2u);
  EXPECT_EQ(e.error, 1u);
}

TEST(Broker, ConnectAndResolutionFailures) {
  int closed_port = 0;
  tcp_listener(closed_port);  // bound, then closed at once: nothing listens there
  broker_hooks hooks;
  hooks.resolve = [](const std::string& host) {
    return host == "nowhere.example" ? std::vector<std::string>{} : std::vector<std::string>{"203.0.113.7"};
  };
  hooks.dial = dial_local(closed_port);
  auto b = start_broker(filtered({rule("*", rule_action::allow)}), hooks);
  ASSERT_TRUE(b.broker);

  std::string got = round_trip(b.port, connect_request("refused.example:443"));
  EXPECT_EQ(status_of(got), 502) << got;
  got = round_trip(b.port, connect_request("nowhere.example:443"));
  EXPECT_EQ(status_of(got), 502) << got;
  fd_guard s = connect_tcp(b.port);
  EXPECT_EQ(socks_handshake(s.get(), socks_domain_request("refused.example", 443)),
            socks5_reply_code::connection_refused);
  s = connect_tcp(b.port);
  EXPECT_EQ(socks_handshake(s.get(), socks_domain_request("nowhere.example", 443)),
            socks5_reply_code::host_unreachable);
  s.reset();

  const auto e = wait_for_total(*b.broker, 4);
  ASSERT_EQ(e.connections.size(), 4u);
  EXPECT_EQ(e.unreachable, 4u);
  for (const auto& r : e.connections) {
    EXPECT_EQ(r.action, "unreachable");
    EXPECT_EQ(r.rule, 0u);
    EXPECT_EQ(r.address, "");
  }
  EXPECT_EQ(e.connections[0].reason.rfind("cannot connect to refused.example:443: 203.0.113.7: ", 0), 0u)
      << e.connections[0].reason;
  EXPECT_EQ(e.connections[1].reason, "cannot resolve nowhere.example");
}

TEST(Broker, UnixListener) {
  test_server server(echo);
  char dir_template[] = "/tmp/cordon-broker-test-XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const std::string path = std::string(dir_template) + "/proxy.sock";
  fd_guard listener(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::snprintf(a.sun_path, sizeof a.sun_path, "%s", path.c_str());
  ASSERT_EQ(::bind(listener.get(), reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(listener.get(), 16), 0);

  broker_options options;
  options.policy = filtered({rule("api.example.com", rule_action::allow)});
  options.hooks = local_hooks(server.port());
  options.listener_names = {path};
  auto started = network_broker::start(options, {listener.release()});
  ASSERT_TRUE(started) << started.error_value().describe();
  auto& broker = **started;

  fd_guard c(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  ASSERT_EQ(::connect(c.get(), reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  set_io_timeouts(c.get());
  ASSERT_TRUE(open_tunnel(c.get(), "api.example.com:443"));
  ASSERT_TRUE(send_all(c.get(), "unix"));
  EXPECT_EQ(recv_exact(c.get(), 4), "unix");
  ::shutdown(c.get(), SHUT_WR);
  EXPECT_TRUE(reads_eof(c.get()));
  const auto e = wait_for_total(broker, 1);
  ASSERT_EQ(e.connections.size(), 1u);
  EXPECT_EQ(e.connections[0].bytes_sent, 4u);
  EXPECT_EQ(e.listeners, std::vector<std::string>{path});
  broker.stop();
  std::filesystem::remove_all(dir_template);
}

// Without hooks: the system resolver (asio, getaddrinfo) and real dialing.
// "localhost" comes from /etc/hosts, so no query leaves the machine; the
// test is skipped where /etc/hosts does not name it.
TEST(Broker, SystemResolverAndDialer) {
  const std::string hosts = cordon::test::read_text("/etc/hosts");
  if (hosts.find("localhost") == std::string::npos) GTEST_SKIP() << "/etc/hosts does not name localhost";
  test_server server(echo);
  const std::string target = "localhost:" + std::to_string(server.port());
  {
    // A name rule alone does not reach loopback, whatever the resolver says.
    auto b = start_broker(filtered({rule("localhost", rule_action::allow)}), broker_hooks{});
    ASSERT_TRUE(b.broker);
    const std::string got = round_trip(b.port, connect_request(target));
    EXPECT_EQ(status_of(got), 403) << got;
    EXPECT_NE(got.find("resolves to non-public address"), std::string::npos) << got;
  }
  {
    // With an IP rule for 127.0.0.1 (and none for ::1) the IPv4 address is dialed.
    auto b = start_broker(filtered({rule("localhost", rule_action::allow), rule("127.0.0.1", rule_action::allow)}),
                          broker_hooks{});
    ASSERT_TRUE(b.broker);
    fd_guard c = connect_tcp(b.port);
    ASSERT_TRUE(open_tunnel(c.get(), target));
    ASSERT_TRUE(send_all(c.get(), "sys"));
    EXPECT_EQ(recv_exact(c.get(), 3), "sys");
    c.reset();
    const auto e = wait_for_total(*b.broker, 1);
    ASSERT_EQ(e.connections.size(), 1u);
    EXPECT_EQ(e.connections[0].address, "127.0.0.1");
  }
  EXPECT_EQ(server.connections(), 1);
}

bool is_open(int fd) { return ::fcntl(fd, F_GETFD) != -1; }

TEST(Broker, StartRejectsWhatIsNotAListeningStreamSocket) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe2(pipe_fds, O_CLOEXEC), 0);
  ::close(pipe_fds[1]);
  const int unbound = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int udp = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  for (int fd : {pipe_fds[0], unbound, udp}) {
    SCOPED_TRACE(fd);
    ASSERT_TRUE(is_open(fd));
    auto r = network_broker::start(broker_options{}, {fd});
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error_value().code, error_code::launch_failed);
    EXPECT_FALSE(is_open(fd));  // ownership passed, also on error
  }
  // One bad descriptor among good ones: all are closed.
  int port = 0;
  const int good = tcp_listener(port).release();
  const int bad = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  auto r = network_broker::start(broker_options{}, {good, bad});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error_value().message.find("not a listening socket"), std::string::npos) << r.error_value().message;
  EXPECT_FALSE(is_open(good));
  EXPECT_FALSE(is_open(bad));
}

}  // namespace
}  // namespace cordon::broker

namespace cordon::broker {
namespace {

// A broker whose only listener is transparent: a test connects to it and
// notes the original destination under its own source port, as the
// supervisor does (src/linux/connect_redirect.h).
struct transparent_broker {
  std::unique_ptr<network_broker> broker;
  std::shared_ptr<destination_table> table = std::make_shared<destination_table>();
  int port = 0;
};

transparent_broker start_transparent(network_policy policy, broker_hooks hooks, broker_limits limits = {}) {
  transparent_broker out;
  auto started = start_broker(std::move(policy), std::move(hooks), limits, out.table);
  out.broker = std::move(started.broker);
  out.port = started.port;
  return out;
}

// Connects to the transparent listener as if the command had dialed `address`:`port`.
fd_guard dial_transparent(transparent_broker& b, const std::string& address, int port) {
  fd_guard s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in local{};
  local.sin_family = AF_INET;
  local.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(s.get(), reinterpret_cast<sockaddr*>(&local), sizeof local);
  socklen_t length = sizeof local;
  ::getsockname(s.get(), reinterpret_cast<sockaddr*>(&local), &length);
  b.table->put(std::to_string(ntohs(local.sin_port)), {address, port});
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  to.sin_port = htons(static_cast<std::uint16_t>(b.port));
  if (::connect(s.get(), reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) return fd_guard(-1);
  return s;
}

TEST(BrokerTransparent, DecidesByHostThenAddress) {
  test_server server(echo);
  auto b = start_transparent(filtered({rule("api.example.com", rule_action::allow), rule("198.51.100.7", rule_action::allow)}),
                             local_hooks(server.port()));
  ASSERT_TRUE(b.broker);
  {  // Host names an allowed name: relayed, the head included.
    fd_guard c = dial_transparent(b, "203.0.113.9", 80);
    ASSERT_GE(c.get(), 0);
    const std::string head = "GET / HTTP/1.1\r\nHost: api.example.com\r\n\r\n";
    ASSERT_TRUE(send_all(c.get(), head));
    EXPECT_EQ(recv_exact(c.get(), head.size()), head);
  }
  {  // No name: the address decides; 198.51.100.7 has a rule.
    fd_guard c = dial_transparent(b, "198.51.100.7", 22);
    ASSERT_TRUE(send_all(c.get(), "SSH-2.0-x\r\n"));
    EXPECT_EQ(recv_exact(c.get(), 11), "SSH-2.0-x\r\n");
  }
  {  // A Host no rule allows: the broker's own 403.
    fd_guard c = dial_transparent(b, "198.51.100.7", 80);
    ASSERT_TRUE(send_all(c.get(), "GET / HTTP/1.1\r\nHost: other.example\r\n\r\n"));
    EXPECT_EQ(status_of(recv_all(c.get())), 403);
  }
  {  // Nothing noted for this source: refused.
    fd_guard c = connect_tcp(b.port);
    EXPECT_TRUE(reads_eof(c.get()));
  }
  const auto e = wait_for_total(*b.broker, 4);
  ASSERT_EQ(e.connections.size(), 4u);
  std::map<std::string, network_connection> by_original;
  for (const auto& r : e.connections) by_original[r.original] = r;
  const auto& host = by_original["203.0.113.9:80"];
  EXPECT_EQ(host.protocol, "transparent");
  EXPECT_EQ(host.host, "api.example.com");
  EXPECT_EQ(host.name_source, "http_host");
  EXPECT_EQ(host.action, "allow");
  EXPECT_EQ(host.rule, 0u);
  const auto& address = by_original["198.51.100.7:22"];
  EXPECT_EQ(address.name_source, "address");
  EXPECT_EQ(address.action, "allow");
  EXPECT_EQ(address.rule, 1u);
  const auto& other = by_original["198.51.100.7:80"];
  EXPECT_EQ(other.host, "other.example");
  EXPECT_EQ(other.action, "deny");
  const auto& unknown = by_original[""];
  EXPECT_EQ(unknown.action, "malformed");
  EXPECT_EQ(unknown.reason, "transparent connection without an original destination");
}

TEST(BrokerTransparent, AServerFirstProtocolIsDecidedByAddressAfterTheWait) {
  test_server server(echo);
  broker_limits limits;
  limits.first_bytes_wait = std::chrono::milliseconds(200);
  auto b = start_transparent(filtered({rule("198.51.100.7", rule_action::allow)}), local_hooks(server.port()), limits);
  ASSERT_TRUE(b.broker);
  fd_guard c = dial_transparent(b, "198.51.100.7", 25);
  const auto start = steady::now();
  // Says nothing first: the broker decides by address when the wait is over
  // and dials the server, which is the sign to go on (polled, not slept).
  const auto until = start + std::chrono::seconds(10);
  while (server.connections() == 0 && steady::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_EQ(server.connections(), 1) << "the silent connection was never passed on";
  EXPECT_GE(steady::now() - start, std::chrono::milliseconds(200)) << "passed on before the first-bytes wait";
  ASSERT_TRUE(send_all(c.get(), "late"));
  EXPECT_EQ(recv_exact(c.get(), 4), "late");
  c.reset();
  const auto e = wait_for_total(*b.broker, 1);
  ASSERT_EQ(e.connections.size(), 1u);
  EXPECT_EQ(e.connections[0].action, "allow");
  EXPECT_EQ(e.connections[0].name_source, "address");
}

}  // namespace
}  // namespace cordon::broker

namespace cordon::broker {
namespace {

// A CONNECT tunnel to a name carries TLS for that name only: a ClientHello
// naming another host (domain fronting) or none is refused before a byte
// reaches the destination; a matching one and non-TLS bytes pass.
TEST(BrokerTunnelTls, TheServerNameMustBeTheTunnelsHost) {
  test_server server(echo);
  auto b = start_broker(filtered({rule("api.example.com", rule_action::allow)}), local_hooks(server.port()));
  ASSERT_TRUE(b.broker);
  const std::string good = client_hello(sni_extension("API.example.com"));
  {
    fd_guard c = connect_tcp(b.port);
    ASSERT_TRUE(open_tunnel(c.get(), "api.example.com:443"));
    ASSERT_TRUE(send_all(c.get(), good));
    EXPECT_EQ(recv_exact(c.get(), good.size()), good);  // echoed by the destination
  }
  for (const std::string& bad : {client_hello(sni_extension("fronted.example")), client_hello(other_extension())}) {
    fd_guard c = connect_tcp(b.port);
    ASSERT_TRUE(open_tunnel(c.get(), "api.example.com:443"));
    ASSERT_TRUE(send_all(c.get(), bad));
    EXPECT_EQ(recv_all(c.get()), "");  // closed, nothing echoed
  }
  {
    fd_guard c = connect_tcp(b.port);
    ASSERT_TRUE(open_tunnel(c.get(), "api.example.com:22"));
    ASSERT_TRUE(send_all(c.get(), "SSH-2.0-x\r\n"));
    EXPECT_EQ(recv_exact(c.get(), 11), "SSH-2.0-x\r\n");
  }
  const auto e = wait_for_total(*b.broker, 4);
  ASSERT_EQ(e.connections.size(), 4u);
  std::vector<std::string> actions, reasons;
  for (const auto& r : e.connections) {
    actions.push_back(r.action);
    reasons.push_back(r.reason);
  }
  EXPECT_EQ(std::count(actions.begin(), actions.end(), "allow"), 2) << ::testing::PrintToString(reasons);
  EXPECT_EQ(std::count(actions.begin(), actions.end(), "deny"), 2) << ::testing::PrintToString(reasons);
  bool fronting = false, nameless = false;
  for (const auto& r : e.connections) {
    fronting = fronting || r.reason == "TLS server name fronted.example does not match the tunnel's host "
                                       "api.example.com (domain fronting)";
    nameless = nameless || r.reason == "TLS without a server name (SNI) in a tunnel to api.example.com";
    if (r.action == "deny") {
      EXPECT_EQ(r.address, "");
    }
  }
  EXPECT_TRUE(fronting && nameless) << ::testing::PrintToString(reasons);
}

// A plain HTTP request in a tunnel to a name must ask for that name (its
// Host, or its absolute-form target, which a server goes by instead): a
// server hosting both names would otherwise serve the other (fronting).
TEST(BrokerTunnelTls, AnHttpRequestMustBeForTheTunnelsHost) {
  test_server server(echo);
  auto b = start_broker(filtered({rule("api.example.com", rule_action::allow)}), local_hooks(server.port()));
  ASSERT_TRUE(b.broker);
  const std::string good = "GET / HTTP/1.1\r\nHost: API.example.com:80\r\n\r\n";
  {
    fd_guard c = connect_tcp(b.port);
    ASSERT_TRUE(open_tunnel(c.get(), "api.example.com:80"));
    ASSERT_TRUE(send_all(c.get(), good));
    EXPECT_EQ(recv_exact(c.get(), good.size()), good);  // echoed by the destination
  }
  for (const std::string& bad : {std::string("GET / HTTP/1.1\r\nHost: fronted.example\r\n\r\n"),
                                 std::string("GET http://fronted.example/ HTTP/1.1\r\nHost: api.example.com\r\n\r\n")}) {
    fd_guard c = connect_tcp(b.port);
    ASSERT_TRUE(open_tunnel(c.get(), "api.example.com:80"));
    ASSERT_TRUE(send_all(c.get(), bad));
    EXPECT_EQ(recv_all(c.get()), "");  // closed, nothing echoed
  }
  const auto e = wait_for_total(*b.broker, 3);
  ASSERT_EQ(e.connections.size(), 3u);
  EXPECT_EQ(e.allowed, 1u);
  EXPECT_EQ(e.denied, 2u);
  for (const auto& r : e.connections) {
    if (r.action != "deny") continue;
    EXPECT_EQ(r.reason, "HTTP request for fronted.example does not match the tunnel's host api.example.com "
                        "(domain fronting)");
    EXPECT_EQ(r.address, "");
  }
}

// A client that closes in the middle of its ClientHello sent nothing the
// check could judge and had nothing relayed: malformed, naming the rule. One
// that closes having sent nothing had an allowed tunnel that carried nothing.
TEST(BrokerTunnelTls, ClosingInTheMiddleOfTheClientHelloIsMalformed) {
  test_server server(echo);
  auto b = start_broker(filtered({rule("api.example.com", rule_action::allow)}), local_hooks(server.port()));
  ASSERT_TRUE(b.broker);
  const std::string hello = client_hello(sni_extension("api.example.com"));
  {
    fd_guard c = connect_tcp(b.port);
    ASSERT_TRUE(open_tunnel(c.get(), "api.example.com:443"));
    ASSERT_TRUE(send_all(c.get(), hello.substr(0, hello.size() / 2)));
  }
  auto e = wait_for_total(*b.broker, 1);
  ASSERT_EQ(e.connections.size(), 1u);
  EXPECT_EQ(e.connections[0].action, "malformed");
  EXPECT_EQ(e.connections[0].reason, "tunnel: the client closed before its TLS ClientHello or HTTP request head was complete");
  EXPECT_EQ(e.connections[0].rule, std::optional<std::size_t>(0));
  EXPECT_EQ(e.malformed, 1u);
  {
    fd_guard c = connect_tcp(b.port);
    ASSERT_TRUE(open_tunnel(c.get(), "api.example.com:443"));
  }
  e = wait_for_total(*b.broker, 2);
  ASSERT_EQ(e.connections.size(), 2u);
  EXPECT_EQ(e.connections[1].action, "allow") << e.connections[1].reason;
  EXPECT_EQ(e.allowed, 1u);
}

}  // namespace
}  // namespace cordon::broker
