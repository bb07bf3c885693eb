// Filtered network: an IP rule must hold whatever notation the command
// writes the address in (docs/network.md, "Decisions" 1-2). The system
// resolver (inet_aton) reads "0xc6336402" and "0xc6.51.100.0x2" as
// 198.51.100.2 without asking DNS, so a destination in such a form that the
// matcher takes for a name would pass a `*` rule placed after a deny of that
// address.
//
// The "host" is a network namespace the test creates (unshare -n as root,
// unshare -rn otherwise) with only its loopback up: 198.51.100.0/24 has no
// route there, so nothing the broker dials can leave it.
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

TEST(EscapeFilteredNetwork, HexNotationDoesNotPassADeniedAddress) {
  for (const char* tool : {"/usr/bin/unshare", "/usr/bin/python3"}) {
    if (::access(tool, X_OK) != 0) GTEST_SKIP() << "no " << tool;
  }
  const char* ip = ::access("/usr/sbin/ip", X_OK) == 0 ? "/usr/sbin/ip" : "/sbin/ip";
  if (::access(ip, X_OK) != 0) GTEST_SKIP() << "no ip(8)";
  temp_dir dir;
  const std::string policy = write_policy(dir, R"({"read": "full"})",
                                          R"({"mode": "filtered", "rules": [
                                                {"host": "198.51.100.2", "action": "deny"},
                                                {"host": "*", "action": "allow"}]})");
  const std::string d = dir.path();
  // One CONNECT per line of the output: the destination and the status code.
  dir.write("connect.py",
            "import socket\n"
            "for host in ['198.51.100.2', '0xc6336402', '0xc6.51.100.0x2', '0xc6.0x33.0x64.0x2', "
            "'198.51.100.3']:\n"
            "    s = socket.create_connection(('127.0.0.1', 3128), timeout=20)\n"
            "    s.sendall(('CONNECT %s:80 HTTP/1.1\\r\\nHost: %s:80\\r\\n\\r\\n' % (host, host)).encode())\n"
            "    head = s.recv(4096).split(b'\\r\\n')[0].decode()\n"
            "    print(host, head.split(' ')[1])\n");
  const std::string script = "set -e\n" + std::string(ip) + " link set lo up\nset +e\n" + cordon_cli() +
                             " run --policy " + policy + " --workspace " + d + " --report " + d +
                             "/report.json -- /usr/bin/python3 " + d + "/connect.py >" + d + "/status\n";
  const std::string script_path = dir.write("run.sh", script);
  const int rc = host_command({"/usr/bin/unshare", running_as_root() ? "-n" : "-rn", "/bin/sh", script_path}, d);
  const std::string status = read_all(d + "/status");
  if (rc != 0 && status.empty()) GTEST_SKIP() << "cannot create a network namespace here";
  // The denied address is refused in every notation (a name that is really
  // an address is not a valid destination: 400); the address next to it
  // is allowed by `*` (and unreachable in this namespace: 502).
  EXPECT_EQ(status,
            "198.51.100.2 403\n"
            "0xc6336402 400\n"
            "0xc6.51.100.0x2 400\n"
            "0xc6.0x33.0x64.0x2 400\n"
            "198.51.100.3 502\n");
  const auto report = nlohmann::json::parse(read_all(d + "/report.json"), nullptr, false);
  ASSERT_TRUE(report.is_object());
  const auto& connections = report["network"]["connections"];
  ASSERT_EQ(connections.size(), 5u) << report["network"].dump();
  EXPECT_EQ(connections[0]["action"], "deny") << connections.dump();
  EXPECT_EQ(connections[0]["rule"], 0) << connections.dump();
  for (int i = 1; i <= 3; ++i) {
    EXPECT_EQ(connections[i]["action"], "malformed") << connections[i].dump();
    EXPECT_FALSE(connections[i].contains("address")) << connections[i].dump();
  }
  EXPECT_EQ(connections[4]["action"], "unreachable") << connections.dump();
  EXPECT_EQ(connections[4]["rule"], 1) << connections.dump();
}

// An IPv4 address embedded in the well-known NAT64 prefix (RFC 6052:
// 64:ff9b::198.51.100.2) is matched as an IPv6 address; a deny rule for
// 198.51.100.2 followed by `*` must still refuse it: on a network with a
// NAT64 translator that connection reaches 198.51.100.2. (IPv4-mapped forms
// are matched as IPv4 already.)
TEST(EscapeFilteredNetwork, Nat64FormDoesNotPassADeniedAddress) {
  for (const char* tool : {"/usr/bin/unshare", "/usr/bin/python3"}) {
    if (::access(tool, X_OK) != 0) GTEST_SKIP() << "no " << tool;
  }
  const char* ip = ::access("/usr/sbin/ip", X_OK) == 0 ? "/usr/sbin/ip" : "/sbin/ip";
  if (::access(ip, X_OK) != 0) GTEST_SKIP() << "no ip(8)";
  temp_dir dir;
  const std::string policy = write_policy(dir, R"({"read": "full"})",
                                          R"({"mode": "filtered", "rules": [
                                                {"host": "198.51.100.2", "action": "deny"},
                                                {"host": "*", "action": "allow"}]})");
  const std::string d = dir.path();
  dir.write("connect.py",
            "import socket\n"
            "for host in ['[::ffff:198.51.100.2]', '[64:ff9b::198.51.100.2]', '[64:ff9b::c633:6402]']:\n"
            "    s = socket.create_connection(('127.0.0.1', 3128), timeout=20)\n"
            "    s.sendall(('CONNECT %s:80 HTTP/1.1\\r\\nHost: %s:80\\r\\n\\r\\n' % (host, host)).encode())\n"
            "    print(host, s.recv(4096).split(b' ')[1].decode())\n");
  const std::string script = "set -e\n" + std::string(ip) + " link set lo up\nset +e\n" + cordon_cli() +
                             " run --policy " + policy + " --workspace " + d + " -- /usr/bin/python3 " + d +
                             "/connect.py >" + d + "/status\n";
  const std::string script_path = dir.write("run.sh", script);
  const int rc = host_command({"/usr/bin/unshare", running_as_root() ? "-n" : "-rn", "/bin/sh", script_path}, d);
  const std::string status = read_all(d + "/status");
  if (rc != 0 && status.empty()) GTEST_SKIP() << "cannot create a network namespace here";
  EXPECT_EQ(status,
            "[::ffff:198.51.100.2] 403\n"
            "[64:ff9b::198.51.100.2] 403\n"
            "[64:ff9b::c633:6402] 403\n");
}

}  // namespace
}  // namespace cordon::test::escape
