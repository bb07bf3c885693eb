// Unit tests: floods from inside the sandbox against the broker's budget
// (docs/network.md, "Memory budget"). Every broker structure is counted
// against the run's budget; past it, new work is refused and recorded with
// the reason "broker_budget", and the broker stays under its documented
// bound: the budget plus 640 KiB per open connection. Every socket is on
// 127.0.0.1.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "broker/relay_memory.h"
#include "broker_test_support.h"

namespace cordon::broker {
namespace {

using namespace test;
using namespace std::chrono_literals;

const std::string established = "HTTP/1.1 200 Connection established\r\n\r\n";

// The documented bound (docs/network.md, "Memory budget"): the budget plus
// both directions of every open connection at their base buffers.
std::uint64_t documented_bound(std::uint64_t budget, std::size_t connections) {
  return budget + connections * 2 * detail::base_tier.held_at_most();
}

// Waits until the broker's memory sample (every 100 ms) has seen something
// held: the state the test built is then in the peak. False after 5 s.
bool sampled(const network_broker& broker) {
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (broker.evidence().memory_peak_bytes == 0) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

// A broker that allows api.example.com (every connection dialed at the
// local `server_port`), with room for `connections` and `budget`.
running_broker start_allowing(int server_port, std::size_t connections, std::uint64_t budget) {
  broker_limits limits;
  limits.max_connections = connections + 8;
  limits.memory_budget_bytes = budget;
  return start_broker(filtered({rule("api.example.com", rule_action::allow)}), local_hooks(server_port), limits);
}

bool starts_with(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

// Until `deadline`, a CONNECT to `authority` through the broker at `port`
// until one is answered 200; that status, or the last one seen.
int connect_until_established(int port, const std::string& authority, std::chrono::milliseconds within) {
  const auto deadline = std::chrono::steady_clock::now() + within;
  int status = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    fd_guard c = connect_tcp(port);
    if (c.get() >= 0 && send_all(c.get(), connect_request(authority))) {
      status = status_of(recv_until(c.get(), "\r\n\r\n"));
      if (status == 200) return status;
    }
    std::this_thread::sleep_for(20ms);
  }
  return status;
}

// Stalled connections: 300 clients connect and never send a byte. With a
// budget of 2 MiB, the broker admits connections while what it holds and has
// reserved fits, then refuses the rest at accept: each closed unread and
// recorded as denied, "broker_budget". Its accounted peak never passes the
// budget (a silent connection holds less than it reserved). Once the stalled
// clients are gone, a connection is served again.
TEST(BrokerFlood, StalledConnectionsPastTheBudgetAreRefusedAndRecorded) {
  constexpr std::size_t connections = 300;
  if (!enough_descriptors(connections * 4 + 64)) GTEST_SKIP() << "needs " << connections * 4 + 64 << " descriptors";
  test_server server(echo);
  broker_limits limits;
  limits.memory_budget_bytes = 2u << 20;
  auto b = start_allowing(server.port(), connections, limits.memory_budget_bytes);
  ASSERT_TRUE(b.broker);
  std::vector<fd_guard> clients;
  for (std::size_t i = 0; i < connections; ++i) {
    fd_guard c = connect_tcp(b.port);
    ASSERT_GE(c.get(), 0) << i;
    clients.push_back(std::move(c));
  }
  // The refused ones are closed unread: each client learns it (EOF or reset).
  std::size_t refused = 0;
  for (auto& c : clients) {
    pollfd p{c.get(), POLLIN, 0};
    if (::poll(&p, 1, 0) == 1 && reads_eof(c.get())) ++refused;
  }
  auto e = wait_for_total(*b.broker, 1);
  ASSERT_GT(e.denied, 0u) << "300 stalled connections fit in 2 MiB: the test proves nothing";
  for (const auto& entry : e.connections) {
    EXPECT_EQ(entry.action, "deny");
    EXPECT_TRUE(starts_with(entry.reason, "broker_budget: ")) << entry.reason;
    EXPECT_FALSE(entry.rule_consulted);
  }
  EXPECT_LE(e.memory_peak_bytes, limits.memory_budget_bytes);
  std::printf("[ memory   ] %zu stalled connections, 2 MiB budget: %llu refused (clients saw %zu closed), broker peak %.2f MiB\n",
              connections, static_cast<unsigned long long>(e.denied), refused,
              static_cast<double>(e.memory_peak_bytes) / (1 << 20));
  // The stalled clients leave: the broker serves again (the allowed thing works).
  clients.clear();
  EXPECT_EQ(connect_until_established(b.port, "api.example.com:443", 10s), 200);
  b.broker->stop();
  e = b.broker->evidence();
  EXPECT_LE(e.memory_peak_bytes, documented_bound(limits.memory_budget_bytes, 0) + (1u << 20));
}

// Slow senders: 100 tunnels to an allowed name, each given its ClientHello
// one byte at a time, round robin, so that every connection is being judged
// at once. Every hello reaches the destination whole, and the broker's peak
// stays under the documented bound.
TEST(BrokerFlood, ClientHellosDribbledAByteAtATimeStayWithinTheBound) {
  constexpr std::size_t connections = 100;
  if (!enough_descriptors(connections * 8 + 64)) GTEST_SKIP() << "needs " << connections * 8 + 64 << " descriptors";
  test_server server(echo, 256);
  const broker_limits limits;
  auto b = start_allowing(server.port(), connections, limits.memory_budget_bytes);
  ASSERT_TRUE(b.broker);
  std::vector<fd_guard> clients;
  for (std::size_t i = 0; i < connections; ++i) {
    fd_guard c = connect_tcp(b.port);
    ASSERT_GE(c.get(), 0) << i;
    const int on = 1;
    ::setsockopt(c.get(), IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    ASSERT_TRUE(send_all(c.get(), connect_request("api.example.com:443")));
    ASSERT_EQ(recv_exact(c.get(), established.size()), established) << i;
    clients.push_back(std::move(c));
  }
  const std::string hello = client_hello(sni_extension("api.example.com"));
  // Half of every hello, a byte at a time; a sample sees them all being
  // judged; then the rest.
  for (std::size_t at = 0; at < hello.size(); ++at) {
    if (at == hello.size() / 2) {
      ASSERT_TRUE(sampled(*b.broker));
    }
    for (auto& c : clients) ASSERT_TRUE(send_all(c.get(), hello.substr(at, 1)));
  }
  for (std::size_t i = 0; i < connections; ++i) {
    EXPECT_EQ(recv_exact(clients[i].get(), hello.size()), hello) << i;
  }
  clients.clear();
  const auto e = wait_for_total(*b.broker, connections, 10s);
  b.broker->stop();
  EXPECT_EQ(e.allowed, connections);
  EXPECT_GT(e.memory_peak_bytes, 0u);
  EXPECT_LE(e.memory_peak_bytes, documented_bound(limits.memory_budget_bytes, connections));
  std::printf("[ memory   ] %zu connections judged a byte at a time: broker peak %.2f MiB (bound %.1f MiB)\n",
              connections, static_cast<double>(e.memory_peak_bytes) / (1 << 20),
              static_cast<double>(documented_bound(limits.memory_budget_bytes, connections)) / (1 << 20));
}

// Many small requests on kept-alive connections: 8 tunnels to an allowed
// name, 1,000 pipelined GETs each, every one judged (client_judge.h). All of
// them reach the destination; nothing the broker keeps grows with their
// number (the peak stays under the bound for 8 connections).
TEST(BrokerFlood, ManySmallRequestsOnKeptAliveConnectionsStayWithinTheBound) {
  constexpr std::size_t connections = 8;
  constexpr std::size_t requests = 1000;
  test_server server(echo);
  auto b = start_broker(filtered({rule("api.example.com", rule_action::allow)}), local_hooks(server.port()));
  ASSERT_TRUE(b.broker);
  const std::string one = "GET /x HTTP/1.1\r\nHost: api.example.com\r\n\r\n";
  std::string all;
  for (std::size_t i = 0; i < requests; ++i) all += one;
  std::vector<fd_guard> clients;
  for (std::size_t i = 0; i < connections; ++i) {
    fd_guard c = connect_tcp(b.port);
    ASSERT_GE(c.get(), 0);
    set_io_timeouts(c.get(), 20s);
    ASSERT_TRUE(send_all(c.get(), connect_request("api.example.com:80")));
    ASSERT_EQ(recv_exact(c.get(), established.size()), established);
    clients.push_back(std::move(c));
  }
  // The echo server's answers are read as they come, so neither side stalls.
  std::vector<std::thread> readers;
  std::vector<std::size_t> got(connections, 0);
  for (std::size_t i = 0; i < connections; ++i) {
    readers.emplace_back([&, i] { got[i] = recv_exact(clients[i].get(), all.size()).size(); });
  }
  for (auto& c : clients) EXPECT_TRUE(send_all(c.get(), all));
  for (auto& t : readers) t.join();
  for (std::size_t i = 0; i < connections; ++i) EXPECT_EQ(got[i], all.size()) << i;
  ASSERT_TRUE(sampled(*b.broker));
  clients.clear();
  const auto e = wait_for_total(*b.broker, connections, 10s);
  b.broker->stop();
  ASSERT_EQ(e.allowed, connections);
  for (const auto& c : e.connections) EXPECT_EQ(c.bytes_sent, all.size());
  EXPECT_LE(e.memory_peak_bytes, documented_bound(0, connections));
  std::printf("[ memory   ] %zu kept-alive connections x %zu requests: broker peak %.2f MiB\n", connections, requests,
              static_cast<double>(e.memory_peak_bytes) / (1 << 20));
}

}  // namespace
}  // namespace cordon::broker
