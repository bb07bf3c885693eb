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
#include <vector>

#include "escape_support.h"

namespace cordon::test::escape {
namespace {

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

struct connect_attempts {
  bool ran = false;        // false: no network namespace could be made here
  std::string status;      // "<destination> <HTTP status>" per line
  nlohmann::json report;   // the run's report
};

// Runs, in a network namespace of its own with only loopback up, a command
// that sends `CONNECT <host>:80` for each of `hosts` through the broker at
// 127.0.0.1:3128, under a filtered policy: deny 198.51.100.2, then `*`.
connect_attempts connect_through_broker(const std::vector<std::string>& hosts) {
  const char* ip = ::access("/usr/sbin/ip", X_OK) == 0 ? "/usr/sbin/ip" : "/sbin/ip";
  temp_dir dir;
  const std::string policy = write_policy(dir, R"({"read": "full"})",
                                          R"({"mode": "filtered", "rules": [
                                                {"host": "198.51.100.2", "action": "deny"},
                                                {"host": "*", "action": "allow"}]})");
  const std::string d = dir.path();
  std::string list;
  for (const auto& host : hosts) list += (list.empty() ? "'" : ", '") + host + "'";
  dir.write("connect.py",
            "import socket\n"
            "for host in [" + list + "]:\n"
            "    s = socket.create_connection(('127.0.0.1', 3128), timeout=20)\n"
            "    s.sendall(('CONNECT %s:80 HTTP/1.1\\r\\nHost: %s:80\\r\\n\\r\\n' % (host, host)).encode())\n"
            "    print(host, s.recv(4096).split(b' ')[1].decode())\n");
  const std::string script = "set -e\n" + std::string(ip) + " link set lo up\nset +e\n" + cordon_cli() +
                             " run --policy " + policy + " --workspace " + d + " --report " + d +
                             "/report.json -- /usr/bin/python3 " + d + "/connect.py >" + d + "/status\n";
  const std::string script_path = dir.write("run.sh", script);
  const int rc = host_command({"/usr/bin/unshare", running_as_root() ? "-n" : "-rn", "/bin/sh", script_path}, d);
  connect_attempts out;
  out.status = read_all(d + "/status");
  out.ran = rc == 0 || !out.status.empty();
  out.report = nlohmann::json::parse(read_all(d + "/report.json"), nullptr, false);
  return out;
}

bool have_tools() {
  const bool ip = ::access("/usr/sbin/ip", X_OK) == 0 || ::access("/sbin/ip", X_OK) == 0;
  return ip && ::access("/usr/bin/unshare", X_OK) == 0 && ::access("/usr/bin/python3", X_OK) == 0;
}

TEST(EscapeFilteredNetwork, HexNotationDoesNotPassADeniedAddress) {
  if (!have_tools()) GTEST_SKIP() << "needs ip(8), unshare(1) and python3";
  const auto r = connect_through_broker({"198.51.100.2", "0xc6336402", "0xc6.51.100.0x2", "0xc6.0x33.0x64.0x2",
                                         "198.51.100.3"});
  if (!r.ran) GTEST_SKIP() << "cannot create a network namespace here";
  // The denied address is refused in every notation (a name that is really
  // an address is not a valid destination: 400); the address next to it
  // is allowed by `*` (and unreachable in this namespace: 502).
  EXPECT_EQ(r.status, lines({"198.51.100.2 403", "0xc6336402 400", "0xc6.51.100.0x2 400", "0xc6.0x33.0x64.0x2 400",
                             "198.51.100.3 502"}));
  ASSERT_TRUE(r.report.is_object());
  const auto& connections = r.report["network"]["connections"];
  ASSERT_EQ(connections.size(), 5u) << r.report["network"].dump();
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
// are matched as IPv4 already.) Another embedded address stays allowed.
TEST(EscapeFilteredNetwork, Nat64FormDoesNotPassADeniedAddress) {
  if (!have_tools()) GTEST_SKIP() << "needs ip(8), unshare(1) and python3";
  const auto r = connect_through_broker({"[::ffff:198.51.100.2]", "[64:ff9b::198.51.100.2]", "[64:ff9b::c633:6402]",
                                         "[64:ff9b::198.51.100.3]"});
  if (!r.ran) GTEST_SKIP() << "cannot create a network namespace here";
  EXPECT_EQ(r.status, lines({"[::ffff:198.51.100.2] 403", "[64:ff9b::198.51.100.2] 403", "[64:ff9b::c633:6402] 403",
                             "[64:ff9b::198.51.100.3] 502"}));
  ASSERT_EQ(r.report["network"]["connections"].size(), 4u) << r.report.dump();
  EXPECT_EQ(r.report["network"]["connections"][1]["reason"], "NAT64 address of 198.51.100.2, denied by rule 0")
      << r.report["network"].dump();
}

}  // namespace
}  // namespace cordon::test::escape
