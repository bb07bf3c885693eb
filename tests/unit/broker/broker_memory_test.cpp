// Unit tests: the broker's relay memory budget (src/broker/relay_memory.h,
// docs/network.md "Memory budget"). Connections whose destination never
// reads hold only their base buffers; a bulk transfer gets bulk buffers
// while the budget has room; the evidence reports the budget and the peak.
// Every socket is on 127.0.0.1.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <atomic>
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

// A destination that never reads: it keeps each connection open, without
// reading, until the broker closes it or the test releases it (a FIN queued
// behind data the destination never took does not arrive).
std::atomic<bool> release_stalled{false};
void never_read(int fd) {
  pollfd p{fd, POLLRDHUP, 0};
  while (!release_stalled && ::poll(&p, 1, 100) == 0) {
  }
}

// Writes to the non-blocking `fd` until the kernel takes no more; bytes.
std::size_t fill(int fd) {
  static const std::string chunk(64 * 1024, 'x');
  std::size_t sent = 0;
  for (;;) {
    const ssize_t n = ::send(fd, chunk.data(), chunk.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n <= 0) return sent;
    sent += static_cast<std::size_t>(n);
  }
}

TEST(BrokerMemory, FourHundredStalledConnectionsHoldOnlyTheirBaseBuffers) {
  constexpr std::size_t connections = 400;
  if (!enough_descriptors(connections * 8 + 64)) {
    GTEST_SKIP() << "needs " << connections * 8 + 64 << " descriptors (RLIMIT_NOFILE hard limit is lower)";
  }
  release_stalled = false;
  test_server server(never_read, 1024);
  broker_limits limits;
  limits.max_connections = connections + 8;
  memory_samples samples;
  broker_hooks hooks = local_hooks(server.port());
  auto b = start_broker(filtered({rule("api.example.com", rule_action::allow)}), samples.attach(hooks), limits);
  ASSERT_TRUE(b.broker);

  std::vector<fd_guard> clients;
  for (std::size_t i = 0; i < connections; ++i) {
    fd_guard c = connect_tcp(b.port);
    ASSERT_GE(c.get(), 0) << i;
    ASSERT_TRUE(send_all(c.get(), connect_request("api.example.com:443")));
    ASSERT_EQ(recv_exact(c.get(), established.size()), established) << i;
    // A first byte at once: a tunnel for a name whose client says nothing
    // within the request timeout is refused (client_judge.h), and on a
    // loaded host setting up 400 connections takes longer than that.
    ASSERT_TRUE(send_all(c.get(), "x"));
    clients.push_back(std::move(c));
  }
  // Fill every connection until nothing moves any more: the destination's
  // receive queue, the broker's send queue, its pipe, its receive queue
  // and finally the client's own send queue are full.
  std::size_t total = 0;
  for (int round = 0; round < 50; ++round) {
    std::size_t moved = 0;
    for (auto& c : clients) moved += fill(c.get());
    total += moved;
    if (moved == 0 && round > 2) break;
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_TRUE(samples.wait_for(2)) << "the broker took no memory samples of the full state";
  b.broker->stop();
  release_stalled = true;
  const auto e = b.broker->evidence();
  EXPECT_EQ(e.memory_budget_bytes, limits.memory_budget_bytes);
  // Each stalled direction holds at most its base tier (plus the broker's
  // small user-space buffers); without the bounds, autotuning lets each
  // socket grow to tcp_rmem[2] / tcp_wmem[2] (megabytes each).
  // (The kernel lets a receive queue overshoot its buffer by a segment's
  // bookkeeping, hence the slack.)
  const std::uint64_t bound = connections * (detail::base_tier.held_at_most() + 128 * 1024);
  EXPECT_GT(e.memory_peak_bytes, 0u);
  EXPECT_LE(e.memory_peak_bytes, bound);
  std::printf("[ memory   ] %zu stalled connections: broker peak %.1f MiB (bound %.1f MiB), clients wrote %.1f MiB\n",
              connections, static_cast<double>(e.memory_peak_bytes) / (1 << 20),
              static_cast<double>(bound) / (1 << 20), static_cast<double>(total) / (1 << 20));
  RecordProperty("broker_peak_bytes", std::to_string(e.memory_peak_bytes));
  std::string others;
  for (const auto& c : e.connections) {
    if (c.action != "allow" && others.size() < 400) others += c.action + ": " + c.reason + "\n";
  }
  EXPECT_EQ(e.allowed, connections) << "total " << e.total << ", denied " << e.denied << ", error " << e.error
                                    << "\n" << others;
}

// A download of 8 MiB through the broker completes whole with a budget that
// has room for bulk buffers and with one that has none (base buffers only).
TEST(BrokerMemory, BulkTransferCompletesWithAndWithoutRoomInTheBudget) {
  constexpr std::size_t size = 8 << 20;
  test_server server([](int fd) {
    set_io_timeouts(fd, std::chrono::milliseconds(30000));  // a loaded host may not run the broker for seconds
    // Read what the client sent: closing with unread bytes resets the
    // connection, which discards what the broker has not relayed yet.
    if (recv_exact(fd, 2) != "go") return;
    const std::string chunk(256 * 1024, 'd');
    for (std::size_t sent = 0; sent < size; sent += chunk.size()) {
      if (!send_all(fd, chunk)) return;
    }
    ::shutdown(fd, SHUT_WR);
  });
  // 256 KiB admits the connection (its session, its request) but has no
  // room for a bulk grant (relay_memory.h).
  for (const std::uint64_t budget : {std::uint64_t{64} << 20, std::uint64_t{256} << 10}) {
    SCOPED_TRACE("budget " + std::to_string(budget));
    broker_limits limits;
    limits.memory_budget_bytes = budget;
    auto b =
        start_broker(filtered({rule("api.example.com", rule_action::allow)}), local_hooks(server.port()), limits);
    ASSERT_TRUE(b.broker);
    fd_guard c = connect_tcp(b.port);
    set_io_timeouts(c.get(), std::chrono::milliseconds(30000));
    ASSERT_TRUE(send_all(c.get(), connect_request("api.example.com:443")));
    ASSERT_EQ(recv_exact(c.get(), established.size()), established);
    ASSERT_TRUE(send_all(c.get(), "go"));
    std::size_t got = 0;
    char buffer[65536];
    for (ssize_t n; (n = ::recv(c.get(), buffer, sizeof buffer, 0)) > 0;) got += static_cast<std::size_t>(n);
    EXPECT_EQ(got, size);
    c.reset();
    const auto e = wait_for_total(*b.broker, 1);
    ASSERT_EQ(e.connections.size(), 1u);
    EXPECT_EQ(e.connections[0].bytes_received, size);
    b.broker->stop();
  }
}

TEST(BrokerMemory, BudgetGrantsFitTheLimit) {
  detail::relay_budget budget;
  EXPECT_TRUE(budget.take(3, 10));
  EXPECT_TRUE(budget.take(7, 10));
  EXPECT_FALSE(budget.take(1, 10));
  EXPECT_EQ(budget.granted(), 10u);
  budget.give(4);
  EXPECT_TRUE(budget.take(4, 10));
  budget.give(100);  // never below zero
  EXPECT_EQ(budget.granted(), 0u);
}

}  // namespace
}  // namespace cordon::broker
