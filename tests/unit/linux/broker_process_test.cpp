// broker_process_test.cpp — the broker in its confined process
// (src/linux/broker_process.h): it is confined (seccomp filter, no_new_privs,
// no capability, no file it can open, only sockets and its own descriptors),
// and it still relays, resolves through the supervisor, receives transparent
// destinations and hands back its evidence; a broker that dies is recorded.
// Every socket is on 127.0.0.1.
#include "linux/broker_process.h"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <string_view>
#include <chrono>
#include <fstream>
#include <string>

#include "broker/broker_test_support.h"

namespace cordon::linux_impl {
namespace {

using namespace cordon::broker;
using namespace cordon::broker::test;

std::string status_field(pid_t pid, const std::string& name) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(name + ":", 0) == 0) {
      const auto value = line.find_first_not_of(" \t", name.size() + 1);
      return value == std::string::npos ? std::string() : line.substr(value);
    }
  }
  return "<missing>";
}

struct confined {
  std::unique_ptr<broker_process> broker;
  int port = 0;
};

// Every name resolves to a documentation address and every allowed
// connection goes to the local server on `port` (hooks cannot follow the
// broker into its own process: these are their data form).
broker_options::loopback_routes local_routes(int port) { return {{"203.0.113.7"}, port}; }

confined start_confined(network_policy policy, broker_options::loopback_routes routes = {},
                        std::shared_ptr<destination_table> transparent = nullptr) {
  confined out;
  fd_guard listener = tcp_listener(out.port);
  broker_options options = loopback_broker_options(std::move(policy), {}, {}, out.port, std::move(transparent));
  options.test_routes = std::move(routes);
  auto started = broker_process::start(std::move(options), {listener.release()});
  EXPECT_TRUE(started) << (started ? "" : started.error_value().describe());
  if (started) out.broker = std::move(*started);
  return out;
}

// Does any readable mapping of `pid` hold `needle`? Read through
// /proc/PID/mem (the broker is this process's child: ptrace access holds
// for root and for its own user under Yama's default scope), 1 MiB at a
// time. Mappings over 1 GiB are not data but reservations (a sanitizer's
// shadow memory and allocator space): they are counted in `skipped`.
bool memory_holds(pid_t pid, const std::string& needle, std::size_t& scanned, std::size_t& skipped) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  const int mem = ::open(("/proc/" + std::to_string(pid) + "/mem").c_str(), O_RDONLY | O_CLOEXEC);
  EXPECT_GE(mem, 0) << std::strerror(errno);
  if (mem < 0) return false;
  constexpr std::size_t chunk = 1 << 20;
  std::string window(chunk + needle.size(), '\0');
  bool found = false;
  for (std::string line; !found && std::getline(maps, line);) {
    unsigned long from = 0, to = 0;
    char perms[5] = {};
    if (std::sscanf(line.c_str(), "%lx-%lx %4s", &from, &to, perms) != 3 || perms[0] != 'r') continue;
    if (line.find("[vvar]") != std::string::npos || line.find("[vsyscall]") != std::string::npos) continue;
    if (to - from > (1UL << 30)) {
      skipped += to - from;
      continue;
    }
    for (unsigned long at = from; !found && at < to; at += chunk) {
      const std::size_t length = std::min<std::size_t>(chunk + needle.size(), to - at);
      const ssize_t n = ::pread(mem, window.data(), length, static_cast<off_t>(at));
      if (n <= 0) break;
      scanned += std::min<std::size_t>(static_cast<std::size_t>(n), chunk);
      found = std::string_view(window.data(), static_cast<std::size_t>(n)).find(needle) != std::string_view::npos;
    }
  }
  ::close(mem);
  return found;
}

#if defined(__SANITIZE_ADDRESS__)
constexpr bool sanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool sanitized = true;
#else
constexpr bool sanitized = false;
#endif
#else
constexpr bool sanitized = false;
#endif

// The broker's process is a new program with an empty environment: a host
// variable the supervisor holds is nowhere in its memory (its environment,
// its stack, its heap), while what it was sent (a rule's name) is.
TEST(BrokerProcess, HoldsNoneOfTheHostEnvironment) {
  const std::string secret = "cordon-host-secret-" + std::to_string(::getpid()) + "-c4n4ry";
  const std::string control = "control-" + std::to_string(::getpid()) + ".example";
  ASSERT_EQ(::setenv("CORDON_TEST_HOST_SECRET", secret.c_str(), 1), 0);
  test_server server(echo);
  auto b = start_confined(filtered({rule(control, rule_action::allow)}), local_routes(server.port()));
  ::unsetenv("CORDON_TEST_HOST_SECRET");
  ASSERT_TRUE(b.broker);
  std::ifstream environ_file("/proc/" + std::to_string(b.broker->pid()) + "/environ", std::ios::binary);
  const std::string environment((std::istreambuf_iterator<char>(environ_file)), std::istreambuf_iterator<char>());
  EXPECT_EQ(environment, "") << "the broker's environment";
  std::size_t scanned = 0;
  std::size_t skipped = 0;
  EXPECT_TRUE(memory_holds(b.broker->pid(), control, scanned, skipped)) << "the scan finds what the broker was sent";
  EXPECT_GT(scanned, 0U);
  EXPECT_FALSE(memory_holds(b.broker->pid(), secret, scanned, skipped)) << "a host variable reached the broker";
  // Only a sanitizer's reservations are left out (its heap among them:
  // there the scan covers the stack, the program's data and the maps
  // below 1 GiB).
  if (!sanitized) {
    EXPECT_EQ(skipped, 0U) << "every mapping is read in a normal build";
  }
  // The allowed thing still works after the scan.
  fd_guard client = connect_tcp(b.port);
  ASSERT_TRUE(send_all(client.get(), connect_request(control + ":443")));
  EXPECT_EQ(status_of(recv_until(client.get(), "\r\n\r\n")), 200);
}

TEST(BrokerProcess, IsConfinedAndCannotOpenAFile) {
  test_server server(echo);
  auto b = start_confined(filtered({rule("allowed.example", rule_action::allow)}), local_routes(server.port()));
  ASSERT_TRUE(b.broker);
  const pid_t pid = b.broker->pid();
  ASSERT_NE(pid, ::getpid());
  EXPECT_EQ(status_field(pid, "Seccomp"), "2");
  EXPECT_EQ(status_field(pid, "NoNewPrivs"), "1");
  EXPECT_EQ(status_field(pid, "CapEff"), "0000000000000000");
  EXPECT_EQ(status_field(pid, "CapPrm"), "0000000000000000");
  if (::geteuid() == 0) {
    EXPECT_EQ(status_field(pid, "CapBnd"), "0000000000000000");  // dropped, not only unused
  }
  // seccomp refuses every open call: the broker cannot read even a world-readable file.
  EXPECT_EQ(b.broker->probe_open("/etc/hostname"), EPERM);
  EXPECT_EQ(b.broker->probe_open("/proc/self/status"), EPERM);
  // It holds no file or directory of the supervisor's, only sockets, pipes and its own event descriptors.
  const std::string fds = "/proc/" + std::to_string(pid) + "/fd";
  DIR* dir = ::opendir(fds.c_str());
  ASSERT_NE(dir, nullptr);
  int count = 0;
  while (const dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    ++count;
    struct stat st {};
    ASSERT_EQ(::stat((fds + "/" + entry->d_name).c_str(), &st), 0);
    char target[256] = {};
    (void)::readlink((fds + "/" + entry->d_name).c_str(), target, sizeof target - 1);
    EXPECT_FALSE(S_ISDIR(st.st_mode)) << entry->d_name << " -> " << target;
    const bool is_null = std::string(target) == "/dev/null";
    EXPECT_TRUE(!S_ISREG(st.st_mode) || std::string(target).rfind("anon_inode:", 0) == 0 || is_null)
        << entry->d_name << " -> " << target;
  }
  ::closedir(dir);
  EXPECT_LE(count, 12);
  // The allowed thing still works: a tunnel to the allowed name relays.
  fd_guard client = connect_tcp(b.port);
  ASSERT_TRUE(send_all(client.get(), connect_request("allowed.example:443")));
  EXPECT_EQ(status_of(recv_until(client.get(), "\r\n\r\n")), 200);
  ASSERT_TRUE(send_all(client.get(), "ping"));
  EXPECT_EQ(recv_exact(client.get(), 4), "ping");
  client.reset();
  b.broker->stop();
  const auto evidence = b.broker->evidence();
  ASSERT_EQ(evidence.total, 1U);
  EXPECT_EQ(evidence.connections.at(0).action, "allow");
  EXPECT_EQ(evidence.connections.at(0).bytes_sent, 4U);
}

// Without a resolve hook the broker asks the supervisor, which resolves
// "localhost" (the hosts file, not DNS) to loopback; an IP rule lets it dial.
TEST(BrokerProcess, ResolvesThroughTheSupervisor) {
  test_server server(echo);
  auto b = start_confined(filtered({rule("localhost", rule_action::allow), rule("127.0.0.1", rule_action::allow)}));
  ASSERT_TRUE(b.broker);
  fd_guard client = connect_tcp(b.port);
  ASSERT_TRUE(send_all(client.get(), connect_request("localhost:" + std::to_string(server.port()))));
  EXPECT_EQ(status_of(recv_until(client.get(), "\r\n\r\n")), 200);
  ASSERT_TRUE(send_all(client.get(), "pong"));
  EXPECT_EQ(recv_exact(client.get(), 4), "pong");
  client.reset();
  b.broker->stop();
  const auto evidence = b.broker->evidence();
  ASSERT_EQ(evidence.total, 1U);
  EXPECT_EQ(evidence.connections.at(0).action, "allow");
  EXPECT_EQ(evidence.connections.at(0).address, "127.0.0.1");
}

// A destination the supervisor notes before the connect is there when the
// broker accepts it, and connections still queued at stop() are recorded.
TEST(BrokerProcess, TransparentDestinationsAndDrainAtStop) {
  test_server server(echo);
  auto table = std::make_shared<destination_table>();
  auto b = start_confined(filtered({rule("203.0.113.7", rule_action::allow)}), local_routes(server.port()), table);
  ASSERT_TRUE(b.broker);
  fd_guard client(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in self = loopback(0);
  ASSERT_EQ(::bind(client.get(), reinterpret_cast<sockaddr*>(&self), sizeof self), 0);
  socklen_t length = sizeof self;
  ASSERT_EQ(::getsockname(client.get(), reinterpret_cast<sockaddr*>(&self), &length), 0);
  ASSERT_TRUE(table->put(std::to_string(ntohs(self.sin_port)), {"203.0.113.7", 8080}));
  const sockaddr_in to = loopback(b.port);
  ASSERT_EQ(::connect(client.get(), reinterpret_cast<const sockaddr*>(&to), sizeof to), 0);
  set_io_timeouts(client.get());
  ASSERT_TRUE(send_all(client.get(), "hello"));
  EXPECT_EQ(recv_exact(client.get(), 5), "hello");
  client.reset();
  std::vector<fd_guard> queued;
  for (int i = 0; i < 3; ++i) queued.push_back(connect_tcp(b.port));
  b.broker->stop();
  const auto evidence = b.broker->evidence();
  EXPECT_EQ(evidence.total, 4U);
  EXPECT_EQ(evidence.allowed, 1U);
  const auto relayed = std::find_if(evidence.connections.begin(), evidence.connections.end(),
                                    [](const network_connection& c) { return c.action == "allow"; });
  ASSERT_NE(relayed, evidence.connections.end());
  EXPECT_EQ(relayed->original, "203.0.113.7:8080");
  EXPECT_EQ(relayed->bytes_sent, 5U);
}

// What the supervisor has merged, once it counts `n` entries (at most 5 s).
std::uint64_t wait_until_total(const broker_process& broker, std::uint64_t n) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (broker.evidence().total < n && std::chrono::steady_clock::now() < deadline) ::usleep(10 * 1000);
  return broker.evidence().total;
}

// The broker streams its evidence: a broker killed in the middle of the run
// leaves every entry it completed, and each connection it had decided and
// still held, with its action; one `error` entry says it died.
TEST(BrokerProcess, ADeadBrokerIsRecordedWithTheDecisionsItMade) {
  test_server server(echo);
  auto b = start_confined(
      filtered({rule("allowed.example", rule_action::allow), rule("denied.example", rule_action::deny)}),
      local_routes(server.port()));
  ASSERT_TRUE(b.broker);
  // Relayed and finished.
  {
    fd_guard done = connect_tcp(b.port);
    ASSERT_TRUE(send_all(done.get(), connect_request("allowed.example:443")));
    EXPECT_EQ(status_of(recv_until(done.get(), "\r\n\r\n")), 200);
    ASSERT_TRUE(send_all(done.get(), "ping"));
    EXPECT_EQ(recv_exact(done.get(), 4), "ping");
  }
  wait_until_total(*b.broker, 1);  // so that the entries' order is known
  // Refused by rule 1.
  {
    fd_guard denied = connect_tcp(b.port);
    ASSERT_TRUE(send_all(denied.get(), connect_request("denied.example:443")));
    EXPECT_EQ(status_of(recv_until(denied.get(), "\r\n\r\n")), 403);
  }
  // Relaying when the broker dies.
  fd_guard open = connect_tcp(b.port);
  ASSERT_TRUE(send_all(open.get(), connect_request("allowed.example:8443")));
  EXPECT_EQ(status_of(recv_until(open.get(), "\r\n\r\n")), 200);
  ASSERT_TRUE(send_all(open.get(), "pong"));
  EXPECT_EQ(recv_exact(open.get(), 4), "pong");
  // The two finished entries reach the supervisor while the broker runs.
  ASSERT_EQ(wait_until_total(*b.broker, 2), 2U) << "entries are streamed when they are complete";
  // The open connection's report has reached the supervisor (polled, not a
  // fixed pause; reports wait at most 2 ms to be sent together, broker_link.cpp).
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (b.broker->open_connections() < 1 && std::chrono::steady_clock::now() < until) ::usleep(5 * 1000);
  ASSERT_EQ(b.broker->open_connections(), 1U) << "the open connection was never reported";
  ASSERT_EQ(::kill(b.broker->pid(), SIGKILL), 0);
  EXPECT_TRUE(reads_eof(open.get())) << "the command loses its way out";
  b.broker->stop();
  const auto evidence = b.broker->evidence();
  ASSERT_EQ(evidence.total, 4U);
  ASSERT_EQ(evidence.connections.size(), 4U);
  EXPECT_EQ(evidence.allowed, 2U);
  EXPECT_EQ(evidence.denied, 1U);
  EXPECT_EQ(evidence.error, 1U);
  EXPECT_EQ(evidence.unreachable + evidence.malformed + evidence.not_recorded, 0U);
  const auto& finished = evidence.connections[0];
  EXPECT_EQ(finished.action, "allow");
  EXPECT_EQ(finished.port, 443);
  EXPECT_EQ(finished.bytes_sent, 4U);
  EXPECT_EQ(finished.reason, "");
  const auto& refused = evidence.connections[1];
  EXPECT_EQ(refused.action, "deny");
  EXPECT_EQ(refused.host, "denied.example");
  EXPECT_EQ(refused.rule, std::optional<std::size_t>(1));
  // Listed as last reported (when it was decided): its action and rule,
  // and a reason that says it never finished.
  const auto& unfinished = evidence.connections[2];
  EXPECT_EQ(unfinished.action, "allow");
  EXPECT_EQ(unfinished.host, "allowed.example");
  EXPECT_EQ(unfinished.port, 8443);
  EXPECT_EQ(unfinished.rule, std::optional<std::size_t>(0));
  EXPECT_EQ(unfinished.reason, "the network broker process was killed by signal Killed while this connection was open");
  const auto& died = evidence.connections[3];
  EXPECT_EQ(died.action, "error");
  EXPECT_NE(died.reason.find("killed by signal"), std::string::npos) << died.reason;
  // It says what it cannot list: the decisions not streamed yet.
  EXPECT_NE(died.reason.find("decided in its last 2 ms (not sent yet) is missing"), std::string::npos) << died.reason;
}

// The supervisor starts the broker's process before the sandbox exists; a
// run that ends before the listeners come leaves no process behind and no
// evidence.
TEST(BrokerProcess, ASpawnedBrokerThatNeverServesIsReaped) {
  auto spawned = broker_process::spawn(loopback_broker_options(filtered({}), {}, {}, 0, nullptr));
  ASSERT_TRUE(spawned) << spawned.error_value().describe();
  const pid_t pid = (*spawned)->pid();
  EXPECT_EQ(::kill(pid, 0), 0) << "it runs, waiting for its listeners";
  EXPECT_FALSE((*spawned)->served());
  spawned->reset();
  errno = 0;
  EXPECT_EQ(::kill(pid, 0), -1);
  EXPECT_EQ(errno, ESRCH) << "killed and reaped, not a zombie";
}

// Asked to, the broker's process makes the run's authority and hands back
// only its certificate; the options that carry the authority itself, or a
// hook (a closure), cannot be sent.
TEST(BrokerProcess, MakesTheRunsAuthorityAndReturnsItsCertificate) {
  broker_options options = loopback_broker_options(filtered({}), {}, {}, 0, nullptr);
  options.tls.make_authority = true;
  std::string certificate;
  auto spawned = broker_process::spawn(options, &certificate);
  ASSERT_TRUE(spawned) << spawned.error_value().describe();
  EXPECT_EQ(certificate.rfind("-----BEGIN CERTIFICATE-----", 0), 0U) << certificate;
  EXPECT_EQ(certificate.find("PRIVATE KEY"), std::string::npos);
  broker_options hooked = loopback_broker_options(filtered({}), local_hooks(1), {}, 0, nullptr);
  auto refused = broker_process::spawn(hooked);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error_value().code, error_code::usage_error);
}

// Killed before it decided anything: the one `error` entry.
TEST(BrokerProcess, ADeadBrokerIsRecorded) {
  auto b = start_confined(filtered({}));
  ASSERT_TRUE(b.broker);
  ASSERT_EQ(::kill(b.broker->pid(), SIGKILL), 0);
  b.broker->stop();
  const auto evidence = b.broker->evidence();
  ASSERT_EQ(evidence.total, 1U);
  ASSERT_EQ(evidence.error, 1U);
  EXPECT_NE(evidence.connections.at(0).reason.find("killed by signal"), std::string::npos)
      << evidence.connections.at(0).reason;
}

}  // namespace
}  // namespace cordon::linux_impl
