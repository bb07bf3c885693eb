// Network escapes: host TCP and UDP on loopback (IPv4 and IPv6), host unix
// sockets (abstract and named), netlink, raw and packet sockets. Every server
// here is one the test starts on loopback or binds in the host's namespace.
// Under linux-os-sandbox (no network namespace: the escape_os_sandbox pass)
// the expected outcome is the one its report claims for the control.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "escape_support.h"
#include "../host_expect.h"

namespace cordon::test::escape {
namespace {

// The Landlock ABI a run applied, from its report's filesystem mechanism
// ("... + landlock abi N: ..."); 0 when it used none.
int landlock_abi_of(const nlohmann::json& report) {
  if (!report.is_object() || !report.contains("controls")) return 0;
  std::string mechanism = report["controls"]["filesystem_write"].value("mechanism", "");
  auto at = mechanism.find("landlock abi ");
  return at == std::string::npos ? 0 : std::atoi(mechanism.c_str() + at + 13);
}

// A UDP socket bound to the host's loopback; received() says whether any datagram arrived.
class udp_server {
 public:
  explicit udp_server(bool ipv6) {
    fd_ = ::socket(ipv6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_storage ss{};
    socklen_t len;
    if (ipv6) {
      auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
      a->sin6_family = AF_INET6;
      a->sin6_addr = in6addr_loopback;
      len = sizeof *a;
    } else {
      auto* a = reinterpret_cast<sockaddr_in*>(&ss);
      a->sin_family = AF_INET;
      a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      len = sizeof *a;
    }
    ok_ = fd_ >= 0 && ::bind(fd_, reinterpret_cast<sockaddr*>(&ss), len) == 0 &&
          ::getsockname(fd_, reinterpret_cast<sockaddr*>(&ss), &len) == 0;
    port_ = ipv6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port)
                 : ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  }
  ~udp_server() {
    if (fd_ >= 0) ::close(fd_);
  }
  udp_server(const udp_server&) = delete;
  udp_server& operator=(const udp_server&) = delete;
  bool ok() const { return ok_; }
  int port() const { return port_; }
  bool received() const {
    char buf[64];
    return ::recv(fd_, buf, sizeof buf, 0) >= 0;
  }

 private:
  int fd_ = -1;
  int port_ = 0;
  bool ok_ = false;
};

// A unix stream listener in the host's network namespace, named or abstract.
class unix_listener {
 public:
  unix_listener(const std::string& name, bool abstract) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::size_t offset = abstract ? 1 : 0;
    std::memcpy(addr.sun_path + offset, name.data(), std::min(name.size(), sizeof addr.sun_path - 1 - offset));
    auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + offset + name.size() + (abstract ? 0 : 1));
    ok_ = fd_ >= 0 && ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), len) == 0 && ::listen(fd_, 4) == 0;
  }
  ~unix_listener() {
    if (fd_ >= 0) ::close(fd_);
  }
  unix_listener(const unix_listener&) = delete;
  unix_listener& operator=(const unix_listener&) = delete;
  bool ok() const { return ok_; }
  // Number of connections waiting to be accepted (accepts them).
  int pending() const {
    int n = 0;
    for (int i = 0; i < 16; ++i) {
      int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) break;
      ::close(c);
      ++n;
    }
    return n;
  }

 private:
  int fd_ = -1;
  bool ok_ = false;
};

// A host loopback address from inside: under linux-namespaces the probe
// reaches its own namespace's loopback (`in_own_namespace`, where nobody
// listens); under linux-os-sandbox seccomp refuses the inet socket itself,
// as its report's network control claims.
std::string host_inet_outcome(const run_result& r, const std::string& in_own_namespace) {
  if (!ran_os_sandbox(r)) return in_own_namespace;
  expect_claim(r, "network_deny", "enforced", "seccomp");
  return in_own_namespace.substr(0, in_own_namespace.find(' ')) + " socket EAFNOSUPPORT";
}

TEST(EscapeNetwork, HostTcpOnIpv4LoopbackIsUnreachable) {
  loopback_server server;
  temp_dir ws;
  install_probe(ws);
  auto r = run_probe(ws, {"tcp-connect", "127.0.0.1", std::to_string(server.port()), "+", "socketpair-unix"});
  EXPECT_EQ(r.exit_code, 0) << r.all();
  // 127.0.0.1 in the sandbox is its own namespace's loopback, where nobody listens.
  EXPECT_EQ(r.out, lines({host_inet_outcome(r, "tcp-connect connect ECONNREFUSED"), "socketpair-unix OK"}))
      << r.all();
  EXPECT_EQ(server.accepted(), 0);
}

TEST(EscapeNetwork, HostTcpOnIpv6LoopbackIsUnreachable) {
  loopback_server server(/*ipv6=*/true);
  if (server.port() == 0) GTEST_SKIP() << "this host has no IPv6 loopback";
  temp_dir ws;
  install_probe(ws);
  auto r = run_probe(ws, {"tcp-connect", "::1", std::to_string(server.port()), "+", "socketpair-unix"});
  EXPECT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(r.out, lines({host_inet_outcome(r, "tcp-connect connect ECONNREFUSED"), "socketpair-unix OK"}))
      << r.all();
  EXPECT_EQ(server.accepted(), 0);
}

TEST(EscapeNetwork, HostUdpOnIpv4LoopbackIsUnreachable) {
  udp_server server(false);
  ASSERT_TRUE(server.ok());
  temp_dir ws;
  install_probe(ws);
  auto r = run_probe(ws, {"udp-send", "127.0.0.1", std::to_string(server.port()), "+", "socketpair-unix"});
  EXPECT_EQ(r.exit_code, 0) << r.all();
  // The datagram goes to the namespace's own loopback, where nobody listens.
  EXPECT_EQ(r.out, lines({host_inet_outcome(r, "udp-send OK"), "socketpair-unix OK"})) << r.all();
  EXPECT_FALSE(server.received());
}

TEST(EscapeNetwork, HostUdpOnIpv6LoopbackIsUnreachable) {
  udp_server server(true);
  if (!server.ok()) GTEST_SKIP() << "this host has no IPv6 loopback";
  temp_dir ws;
  install_probe(ws);
  auto r = run_probe(ws, {"udp-send", "::1", std::to_string(server.port()), "+", "socketpair-unix"});
  EXPECT_EQ(r.exit_code, 0) << r.all();
  // The datagram goes to the namespace's own loopback, where nobody listens.
  EXPECT_EQ(r.out, lines({host_inet_outcome(r, "udp-send OK"), "socketpair-unix OK"})) << r.all();
  EXPECT_FALSE(server.received());
}

// With allow_local_binding the command may use inet sockets, but only in its
// own network namespace: 127.0.0.1 there is not the host's.
TEST(EscapeNetwork, LocalBindingSeesItsOwnLoopbackNotTheHosts) {
  loopback_server tcp;
  udp_server udp(false);
  ASSERT_TRUE(udp.ok());
  temp_dir ws, policy_dir;
  install_probe(ws);
  std::string policy = write_policy(policy_dir, R"({"readable": ["{workspace}"], "writable": ["{workspace}"]})",
                                    R"({"mode": "denied", "allow_local_binding": true})");
  auto r = run_probe(ws, {"tcp-connect", "127.0.0.1", std::to_string(tcp.port()), "+", "udp-send", "127.0.0.1",
                          std::to_string(udp.port()), "+", "socket-raw", "+", "socket-packet", "+", "tcp-local",
                          "127.0.0.1"},
                     {"--policy", policy});
  if (ran_os_sandbox(r)) {
    // No network namespace: allow_local_binding cannot be kept, and the run is refused before it starts.
    EXPECT_EQ(r.exit_code, 125) << r.all();
    EXPECT_EQ(r.out, "") << r.all();
    EXPECT_EQ(r.report["error"].value("code", ""), "enforcement_unavailable") << r.report.dump();
    EXPECT_NE(r.report.dump().find("allow_local_binding needs a network namespace"), std::string::npos)
        << r.report.dump();
    EXPECT_EQ(tcp.accepted(), 0);
    EXPECT_FALSE(udp.received());
    return;
  }
  EXPECT_EQ(r.exit_code, 0) << r.all();
  // The datagram goes to the namespace's own loopback, where nobody listens.
  EXPECT_EQ(r.out, lines({"tcp-connect connect ECONNREFUSED", "udp-send OK", "socket-raw EPERM",
                          "socket-packet EPERM", "tcp-local OK"}))
      << r.all();
  EXPECT_EQ(tcp.accepted(), 0);
  EXPECT_FALSE(udp.received());
}

TEST(EscapeNetwork, HostAbstractUnixSocketIsUnreachable) {
  std::string name = "cordon-escape-" + unique_token();
  unix_listener host(name, /*abstract=*/true);
  ASSERT_TRUE(host.ok());
  temp_dir ws;
  install_probe(ws);
  // Abstract names live in the network namespace: the host's is not there.
  // Without one (linux-os-sandbox, CORDON_LINUX_BACKEND=os-sandbox) the name
  // is the host's: the supervisor refuses every abstract connect (EACCES),
  // and the host's name is taken for a bind.
  auto r = run_probe(ws, {"abstract-connect", name, "+", "abstract-local", name});
  EXPECT_EQ(r.exit_code, 0) << r.all();
  if (r.report["backend"].value("name", "") == "linux-os-sandbox") {
    EXPECT_EQ(r.out, lines({"abstract-connect EACCES", "abstract-local bind EADDRINUSE"})) << r.all();
  } else {
    EXPECT_EQ(r.out, lines({"abstract-connect ECONNREFUSED", "abstract-local OK"})) << r.all();
  }
  EXPECT_EQ(host.pending(), 0);
}

// Under an unrestricted network the command shares the host's network
// namespace; Landlock's abstract-socket scope (ABI 6) still refuses the host's listener.
TEST(EscapeNetwork, HostAbstractUnixSocketIsScopedAwayEvenWithTheHostNetwork) {
  std::string name = "cordon-escape-" + unique_token();
  unix_listener host(name, /*abstract=*/true);
  ASSERT_TRUE(host.ok());
  loopback_server tcp;
  temp_dir ws, policy_dir;
  install_probe(ws);
  std::string policy = write_policy(policy_dir, R"({"readable": ["{workspace}"], "writable": ["{workspace}"]})",
                                    R"({"mode": "unrestricted"})");
  auto r = run_probe(ws, {"abstract-connect", name, "+", "socket-raw", "+", "socket-packet", "+", "abstract-local",
                          name + "-inside", "+", "tcp-connect", "127.0.0.1", std::to_string(tcp.port())},
                     {"--policy", policy});
  EXPECT_EQ(r.exit_code, 0) << r.all();
  std::string mechanism = r.report["controls"]["unix_sockets"]["mechanism"].dump() +
                          r.report["controls"]["filesystem_write"]["mechanism"].dump();
  if (mechanism.find("landlock abi") == std::string::npos) {
    CORDON_SKIP_UNLESS_DECLARED("landlock", 1, "no Landlock here: " << mechanism);
  }
  // Before ABI 6 (Debian's 6.1 has 2) no scope exists: the host's listener is
  // reachable, and the report must say so rather than claim the scope.
  const bool scoped = landlock_abi_of(r.report) >= 6;
  // Which branch holds is the host's to say (scripts/host-expect.py), not the report's.
  if (auto declared = cordon::test::declared_number("landlock")) {
    EXPECT_EQ(scoped, *declared >= 6) << mechanism;
  }
  // Raw and packet sockets need CAP_NET_RAW in the host's namespace: none.
  EXPECT_EQ(r.out, lines({scoped ? "abstract-connect EPERM" : "abstract-connect OK", "socket-raw EPERM",
                          "socket-packet EPERM", "abstract-local OK", "tcp-connect OK"}))
      << r.all();
  EXPECT_EQ(host.pending(), scoped ? 0 : 1);
  if (!scoped) {
    EXPECT_EQ(r.report["controls"]["unix_sockets"]["level"], "partial");
    EXPECT_EQ(mechanism.find("scope"), std::string::npos) << mechanism;
    EXPECT_NE(r.report["controls"]["unix_sockets"]["detail"].get<std::string>().find("host's abstract sockets are "
                                                                                      "connectable"),
              std::string::npos)
        << r.report["controls"]["unix_sockets"].dump();
  }
  EXPECT_EQ(tcp.accepted(), 1);
}

// A named socket inside the workspace: unix_socket_escape_test.cpp (refused
// unless filesystem.unix_sockets lists it).

TEST(EscapeNetwork, NamedUnixSocketsOutsideTheWorkspaceAreInvisible) {
  temp_dir ws, host_tmp, var_tmp("/var/tmp");
  install_probe(ws);
  unix_listener in_tmp(host_tmp.path() + "/agent.sock", false);
  unix_listener in_var(var_tmp.path() + "/agent.sock", false);
  ASSERT_TRUE(in_tmp.ok());
  ASSERT_TRUE(in_var.ok());
  unix_listener inside(ws.path() + "/own.sock", false);
  ASSERT_TRUE(inside.ok());
  auto r = run_probe(ws, {"unix-connect", host_tmp.path() + "/agent.sock", "+", "unix-connect",
                          var_tmp.path() + "/agent.sock", "+", "unix-connect", "own.sock"});
  EXPECT_EQ(r.exit_code, 0) << r.all();
  // The host's listener inside the workspace is there, and refused (not listed).
  // Under linux-os-sandbox the others are there too (no private view) and
  // the supervisor refuses them alike.
  if (ran_os_sandbox(r)) {
    expect_claim(r, "unix_sockets", "enforced", "only when filesystem.unix_sockets lists it");
    EXPECT_EQ(r.out, lines({"unix-connect EACCES", "unix-connect EACCES", "unix-connect EACCES"})) << r.all();
  } else {
    EXPECT_EQ(r.out, lines({"unix-connect ENOENT", "unix-connect ENOENT", "unix-connect EACCES"})) << r.all();
  }
  EXPECT_EQ(in_tmp.pending(), 0);
  EXPECT_EQ(in_var.pending(), 0);
}

TEST(EscapeNetwork, NetlinkSocketsAreRefused) {
  temp_dir ws;
  install_probe(ws);
  auto r = run_probe(ws, {"socket-netlink", "+", "socketpair-unix"});
  EXPECT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(r.out, lines({"socket-netlink EAFNOSUPPORT", "socketpair-unix OK"})) << r.all();
}

TEST(EscapeNetwork, RawSocketsAreRefused) {
  temp_dir ws;
  install_probe(ws);
  auto r = run_probe(ws, {"socket-raw", "+", "socket-raw6", "+", "socketpair-inet", "+", "socketpair-unix"});
  EXPECT_EQ(r.exit_code, 0) << r.all();
  // IPv4/IPv6 sockets exist (the namespace's own loopback); a raw one needs
  // CAP_NET_RAW, which the sandbox has not; the kernel has no inet pairs.
  if (ran_os_sandbox(r)) {
    // No network namespace of its own: seccomp refuses every inet family.
    EXPECT_EQ(r.out, lines({"socket-raw EAFNOSUPPORT", "socket-raw6 EAFNOSUPPORT", "socketpair-inet EAFNOSUPPORT",
                            "socketpair-unix OK"}))
        << r.all();
    return;
  }
  EXPECT_EQ(r.out, lines({"socket-raw EPERM", "socket-raw6 EPERM", "socketpair-inet EOPNOTSUPP",
                          "socketpair-unix OK"}))
      << r.all();
}

TEST(EscapeNetwork, PacketAndOtherFamiliesAreRefused) {
  temp_dir ws;
  install_probe(ws);
  auto r = run_probe(ws, {"socket-packet", "+", "socket-vsock", "+", "socket-alg", "+", "abstract-local",
                          "cordon-escape-" + unique_token()});
  EXPECT_EQ(r.exit_code, 0) << r.all();
  // Without a network namespace abstract names are the host's: the
  // supervisor refuses every abstract connect, the command's own too.
  if (ran_os_sandbox(r)) expect_claim(r, "unix_sockets", "enforced", "abstract names");
  EXPECT_EQ(r.out, lines({"socket-packet EAFNOSUPPORT", "socket-vsock EAFNOSUPPORT", "socket-alg EAFNOSUPPORT",
                          ran_os_sandbox(r) ? "abstract-local EACCES" : "abstract-local OK"}))
      << r.all();
}

}  // namespace
// Filtered network: inet sockets exist so the command can reach the broker,
// and that is all they reach. A direct TCP connect is routed to the broker
// (docs/network.md, "Transparent routing"), which decides it: only the
// allowed server is reached, never 127.0.0.2; a port no rule names fails at
// connect (the host's ::1 server); raw, packet
// and netlink sockets, binding a port, and UDP to the host all fail; each
// connection is in the report.
TEST(EscapeNetwork, FilteredModeReachesOnlyTheBroker) {
  loopback_server tcp;
  loopback_server tcp6(/*ipv6=*/true);
  udp_server udp(false);
  ASSERT_TRUE(udp.ok());
  temp_dir ws, policy_dir;
  install_probe(ws);
  // The rule allows the host server by IP, so only the broker may reach it.
  std::string policy = write_policy(
      policy_dir, R"({"readable": ["{workspace}"], "writable": ["{workspace}"]})",
      R"({"mode": "filtered", "rules": [{"host": "127.0.0.1", "port": )" + std::to_string(tcp.port()) +
          R"(, "action": "allow"}]})");
  std::vector<std::string> args = {"tcp-connect", "127.0.0.1", std::to_string(tcp.port()), "+", "tcp-connect",
                                   "127.0.0.2", std::to_string(tcp.port()), "+", "udp-send", "127.0.0.1",
                                   std::to_string(udp.port()), "+", "socket-raw", "+", "socket-packet", "+",
                                   "socket-netlink", "+", "tcp-local", "127.0.0.1", "+", "tcp-connect", "127.0.0.1",
                                   "3128"};
  std::vector<std::string> expected = {"tcp-connect OK",             "tcp-connect OK",             "udp-send OK",
                                       "socket-raw EPERM",           "socket-packet EAFNOSUPPORT",
                                       "socket-netlink EAFNOSUPPORT", "tcp-local bind EACCES", "tcp-connect OK"};
  if (tcp6.port() != 0) {
    args.insert(args.end(), {"+", "tcp-connect", "::1", std::to_string(tcp6.port())});
    expected.push_back("tcp-connect connect EACCES");  // no rule allows that port at all
  }
  auto r = run_probe(ws, args, {"--policy", policy});
  if (ran_os_sandbox(r)) {
    // linux-os-sandbox (no network namespace): below Landlock ABI 4 the
    // filtered policy is refused before anything runs; from it the command
    // makes TCP streams only and the supervisor connects them to the
    // broker's own port on 127.0.0.1 only, with no transparent routing
    // (docs/linux-backend.md, "Filtered networking without a network namespace").
    if (landlock_abi_of(r.report) < 4) {
      EXPECT_EQ(r.exit_code, 125) << r.all();
      EXPECT_EQ(r.out, "") << r.all();
      EXPECT_EQ(r.report["error"].value("code", ""), "enforcement_unavailable") << r.report.dump();
      EXPECT_NE(r.report.dump().find("network_filter"), std::string::npos) << r.report.dump();
    } else {
      EXPECT_EQ(r.exit_code, 0) << r.all();
      expected = {"tcp-connect connect EACCES", "tcp-connect connect EACCES", "udp-send socket EAFNOSUPPORT",
                  "socket-raw EAFNOSUPPORT",    "socket-packet EAFNOSUPPORT", "socket-netlink EAFNOSUPPORT",
                  "tcp-local bind EACCES",      "tcp-connect connect EACCES"};
      if (tcp6.port() != 0) expected.push_back("tcp-connect connect EACCES");
      EXPECT_EQ(r.out, lines(expected)) << r.all();
      EXPECT_EQ(r.report["controls"]["network_filter"]["level"], "enforced");
      const std::string violations = r.report["violations"].dump();
      EXPECT_NE(violations.find("\"127.0.0.2:" + std::to_string(tcp.port()) + "\""), std::string::npos) << violations;
    }
    EXPECT_EQ(tcp.accepted(), 0);
    EXPECT_EQ(tcp6.accepted(), 0);
    EXPECT_FALSE(udp.received());
    return;
  }
  // Landlock TCP rules (ABI 4) refuse the bind; before them the bind works on
  // the namespace's own loopback and seccomp's connect(2) check refuses the connect.
  if (landlock_abi_of(r.report) < 4) expected[6] = "tcp-local connect EACCES";
  EXPECT_EQ(r.exit_code, 0) << r.all();
  // The datagram goes to the namespace's own loopback, where nobody listens.
  EXPECT_EQ(r.out, lines(expected)) << r.all();
  EXPECT_LE(tcp.accepted(), 1);  // only through the broker (the probe closes at once; the run may end first)
  EXPECT_EQ(tcp6.accepted(), 0);
  EXPECT_FALSE(udp.received());
  EXPECT_EQ(r.report["controls"]["network_filter"]["level"], "enforced");
  const auto& connections = r.report["network"]["connections"];
  int refused = 0;
  for (const auto& c : connections) {
    if (c["host"] == "127.0.0.2" || c["host"] == "::1") {
      EXPECT_EQ(c["protocol"], "transparent") << c.dump();
      EXPECT_EQ(c["action"], "deny") << c.dump();
      ++refused;
    }
  }
  EXPECT_EQ(refused, 1) << connections.dump();  // 127.0.0.2: the port is open to 127.0.0.1 only
  if (tcp6.port() != 0) {
    const std::string violations = r.report["violations"].dump();
    EXPECT_NE(violations.find("\"[::1]:" + std::to_string(tcp6.port()) + "\""), std::string::npos) << violations;
  }
}

}  // namespace cordon::test::escape
