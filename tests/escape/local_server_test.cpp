// Local servers under the default profile: the sandbox's network namespace
// is its own, so a command may listen on and connect to its own loopback (a
// test suite's HTTP fixture) while the host's loopback servers stay out of
// reach: 127.0.0.1 inside is not the host's. Any other destination is
// refused by the supervisor (EACCES, a network_connect violation), and other
// socket families stay refused (EAFNOSUPPORT; a netlink route socket is a
// probe in the report, not a violation). docs/doors.md, "Closed".
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "escape_support.h"

namespace cordon::test::escape {
namespace {

// Starts `python3 -m http.server` on the sandbox's 127.0.0.1, waits until it
// accepts, fetches a file from it, then tries the host's servers (IPv4 and
// IPv6 loopback), an address outside, and a netlink socket. One line each.
std::string script(int host_port, int host_port6) {
  return R"(python3 -m http.server --bind 127.0.0.1 8000 >/dev/null 2>&1 &
server=$!
python3 - )" + std::to_string(host_port) + " " + std::to_string(host_port6) + R"( <<'EOF'
import errno, socket, sys, time, urllib.request
# Readiness, not a timing guess: retry until the server accepts (bounded).
for _ in range(400):
    try:
        socket.create_connection(("127.0.0.1", 8000), timeout=5).close()
        break
    except ConnectionRefusedError:
        time.sleep(0.025)
print("fetch", urllib.request.urlopen("http://127.0.0.1:8000/hello.txt", timeout=30).read().decode().strip())
def attempt(name, family, address):
    s = socket.socket(family, socket.SOCK_STREAM)
    try:
        s.connect(address)
        print(name, "OK")
    except OSError as e:
        print(name, errno.errorcode[e.errno])
    finally:
        s.close()
attempt("host-loopback", socket.AF_INET, ("127.0.0.1", int(sys.argv[1])))
if int(sys.argv[2]):
    attempt("host-loopback6", socket.AF_INET6, ("::1", int(sys.argv[2])))
attempt("outside", socket.AF_INET, ("192.0.2.1", 80))
try:
    socket.socket(socket.AF_NETLINK, socket.SOCK_RAW)
    print("netlink OK")
except OSError as e:
    print("netlink", errno.errorcode[e.errno])
EOF
kill $server
)";
}

bool has_violation(const nlohmann::json& report, const std::string& kind, const std::string& target) {
  if (!report.contains("violations")) return false;
  for (const auto& v : report["violations"]) {
    if (v.value("kind", "") == kind && v.value("target", "") == target) return true;
  }
  return false;
}

TEST(EscapeLocalServer, AnHttpServerOnTheSandboxsLoopbackServesWhileTheHostsStaysOutOfReach) {
  loopback_server host;
  loopback_server host6(/*ipv6=*/true);
  temp_dir ws;
  std::ofstream(ws.path() + "/hello.txt") << "hello from the fixture\n";
  auto r = run_sh(ws.path(), script(host.port(), host6.port()));
  if (r.report.is_object() && r.report["backend"].value("name", "") == "linux-os-sandbox") {
    GTEST_SKIP() << "linux-os-sandbox has no network namespace: inet sockets stay refused "
                    "(OsSandbox.TcpToAHostLoopbackServerFailsAndUnixSocketPairsWork)";
  }
  EXPECT_EQ(r.exit_code, 0) << r.all();
  std::string expected = "fetch hello from the fixture\nhost-loopback ECONNREFUSED\n";
  if (host6.port() != 0) expected += "host-loopback6 ECONNREFUSED\n";
  expected += "outside EACCES\nnetlink EAFNOSUPPORT\n";
  EXPECT_EQ(r.out, expected) << r.all();
  EXPECT_EQ(host.accepted(), 0);
  EXPECT_EQ(host6.accepted(), 0);
  // The refusals are in the report, each with what was tried.
  EXPECT_TRUE(has_violation(r.report, "network_connect", "192.0.2.1:80")) << r.report.dump();
  // A netlink route socket is a probe (libc and npm make them), refused all the same but no violation.
  EXPECT_FALSE(has_violation(r.report, "network_socket", "socket(AF_NETLINK)")) << r.report.dump();
  ASSERT_TRUE(r.report.contains("probes")) << r.report.dump();
  EXPECT_EQ(r.report["probes"], nlohmann::json::parse(
                                    R"j([{"kind": "network_probe", "target": "socket(AF_NETLINK)", "count": 1}])j"))
      << r.report.dump();
  // What the report claims still holds: denied, by the namespace.
  const auto& deny = r.report["controls"]["network_deny"];
  EXPECT_EQ(deny["level"], "enforced") << deny.dump();
  EXPECT_NE(deny["mechanism"].get<std::string>().find("network namespace (own loopback only, no route out)"),
            std::string::npos)
      << deny.dump();
}

}  // namespace
}  // namespace cordon::test::escape
