// Filtered network: the broker must never let a name, a wildcard or `*` reach
// the host's own services (docs/network.md, "Decisions" 3). Loopback literals
// and names resolving to loopback are covered elsewhere; this file covers the
// host's own *interface* addresses, public ones included: a service bound to
// 0.0.0.0 answers on each of them.
//
// The "host" here is a network namespace the test creates (unshare -n as
// root, unshare -rn otherwise) with 203.0.113.7 on its loopback device: the
// service, cordon and its broker all run inside it, and no packet can leave.
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>

#include "escape_support.h"

namespace cordon::test::escape {
namespace {

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(EscapeFilteredNetwork, StarRuleDoesNotReachTheHostsOwnInterfaceAddress) {
  for (const char* tool : {"/usr/bin/curl", "/usr/bin/unshare", "/usr/bin/python3"}) {
    if (::access(tool, X_OK) != 0) GTEST_SKIP() << "no " << tool;
  }
  const char* ip = ::access("/usr/sbin/ip", X_OK) == 0 ? "/usr/sbin/ip" : "/sbin/ip";
  if (::access(ip, X_OK) != 0) GTEST_SKIP() << "no ip(8)";
  temp_dir dir;
  const std::string policy = write_policy(dir, R"({"read": "full"})",
                                          R"({"mode": "filtered", "rules": [{"host": "*", "action": "allow"}]})");
  const std::string d = dir.path();
  const std::string script =
      "set -e\n" + std::string(ip) + " link set lo up\n" + ip +
      " addr add 203.0.113.7/32 dev lo\n"
      "python3 -c '\n"
      "import socket, sys\n"
      "s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
      "s.bind((\"0.0.0.0\", 8099)); s.listen(8)\n"
      "open(sys.argv[1], \"w\").write(\"ready\")\n"
      "while True:\n"
      "  c, _ = s.accept(); open(sys.argv[2], \"a\").write(\"x\"); c.recv(4096)\n"
      "  c.sendall(b\"HTTP/1.0 200 OK\\r\\nContent-Length: 3\\r\\n\\r\\nhi\\n\"); c.close()\n"
      "' " + d + "/ready " + d + "/accepted &\n"
      "while [ ! -s " + d + "/ready ]; do sleep 0.05; done\n"
      "set +e\n" + cordon_cli() + " run --policy " + policy + " --workspace " + d + " --report " + d +
      "/report.json -- /usr/bin/curl -s -m 5 -o /dev/null -w '%{http_code}' http://203.0.113.7:8099/ >" + d +
      "/status\n"
      "kill %1\n";
  const std::string script_path = dir.write("run.sh", script);
  const bool root = running_as_root();
  const int rc = host_command({"/usr/bin/unshare", root ? "-n" : "-rn", "/bin/sh", script_path}, d);
  if (rc != 0 && read_all(d + "/ready").empty()) GTEST_SKIP() << "cannot create a network namespace here";
  EXPECT_EQ(read_all(d + "/accepted"), "") << "the broker connected to the namespace's own 203.0.113.7";
  EXPECT_EQ(read_all(d + "/status"), "403");
  const auto report = nlohmann::json::parse(read_all(d + "/report.json"), nullptr, false);
  ASSERT_TRUE(report.is_object());
  const auto& connections = report["network"]["connections"];
  ASSERT_EQ(connections.size(), 1u) << report["network"].dump();
  EXPECT_EQ(connections[0]["action"], "deny") << connections.dump();
  EXPECT_EQ(connections[0]["reason"], "this host's own address 203.0.113.7; only an IP rule can allow it")
      << connections.dump();
  EXPECT_FALSE(connections[0].contains("address")) << connections.dump();
}

}  // namespace
}  // namespace cordon::test::escape
