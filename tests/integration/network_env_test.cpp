// Network denial, the clean environment, privileges and descriptors.
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "harness.h"

namespace cordon::test {
namespace {

std::string connect_script(int port, const char* family = "AF_INET", const char* host = "127.0.0.1") {
  return std::string("import socket, errno\ntry:\n  s = socket.socket(socket.") + family +
         ", socket.SOCK_STREAM)\n  s.settimeout(3)\n  s.connect(('" + host + "', " + std::to_string(port) +
         "))\n  print('connected')\nexcept OSError as e:\n  print('refused', errno.errorcode.get(e.errno, e.errno))\n";
}

// What a connect to the host's loopback gives: in the sandbox's own network
// namespace its own loopback, where nobody listens; linux-os-sandbox has no
// namespace, so no IPv4/IPv6 socket at all.
std::string host_loopback_refusal(const run_result& r) {
  return r.report.is_object() && r.report["backend"].value("name", "") == "linux-os-sandbox"
             ? "refused EAFNOSUPPORT\n"
             : "refused ECONNREFUSED\n";
}

std::string write_policy(const temp_dir& dir, const std::string& network_mode) {
  std::string path = dir.path() + "/policy.json";
  std::ofstream(path) << R"({"schema_version": 1, "name": "net-)" << network_mode << R"(",
    "filesystem": {"read": "restricted", "readable": ["{workspace}"], "writable": ["{workspace}"]},
    "network": {"mode": ")" << network_mode << R"("},
    "environment": {"set": {"PATH": "/usr/bin:/bin"}}})";
  return path;
}

TEST(Network, TcpToHostLoopbackIsRefusedUnderDefaultProfile) {
  loopback_server server;
  temp_dir ws;
  auto r = run_cordon({}, {"python3", "-c", connect_script(server.port())}, ws.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, host_loopback_refusal(r)) << r.all();
  EXPECT_EQ(server.accepted(), 0);
  EXPECT_EQ(r.report["controls"]["network_deny"]["level"], "enforced");
}

TEST(Network, TcpToHostIpv6LoopbackIsRefused) {
  loopback_server server(/*ipv6=*/true);
  temp_dir ws;
  auto r = run_cordon({}, {"python3", "-c", connect_script(server.port(), "AF_INET6", "::1")}, ws.path());
  EXPECT_EQ(r.out, host_loopback_refusal(r)) << r.all();
  EXPECT_EQ(server.accepted(), 0);
}

TEST(Network, UnixSocketsStillWorkInside) {
  temp_dir ws;
  auto r = run_cordon({}, {"python3", "-c",
                           "import socket\na, b = socket.socketpair()\na.sendall(b'ping')\nprint(b.recv(4).decode())"},
                      ws.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "ping\n");
}

TEST(Network, UnrestrictedPolicyReachesTheSameServer) {
  loopback_server server;
  temp_dir ws, policy_dir;
  auto r = run_cordon({"--policy", write_policy(policy_dir, "unrestricted")},
                      {"python3", "-c", connect_script(server.port())}, ws.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "connected\n") << r.all();
  EXPECT_EQ(server.accepted(), 1);
  EXPECT_EQ(r.report["controls"]["network_deny"]["level"], "not_applicable");
}

TEST(Environment, HostVariablesAreInvisibleAllowlistPasses) {
  temp_dir ws;
  auto s = run_cordon({}, {"sh", "-c",
                           "echo secret=${CORDON_TEST_SECRET-unset} term=${TERM-unset}; "
                           "cat /proc/1/environ 2>&1; echo; cat /proc/self/environ | tr '\\0' '\\n' | sort"},
                      ws.path(), {"CORDON_TEST_SECRET=hunter2", "TERM=xterm-test"});
  EXPECT_EQ(s.exit_code, 0) << s.err;
  EXPECT_NE(s.out.find("secret=unset term=xterm-test"), std::string::npos) << s.out;
  EXPECT_EQ(s.all().find("hunter2"), std::string::npos) << s.all();  // not even via PID 1
  EXPECT_NE(s.all().find("/proc/1/environ: Permission denied"), std::string::npos) << s.all();
  const auto& names = s.report["environment"]["names"];
  EXPECT_EQ(names.dump().find("CORDON_TEST_SECRET"), std::string::npos);
  EXPECT_NE(names.dump().find("TERM"), std::string::npos);
  EXPECT_EQ(s.report.dump().find("hunter2"), std::string::npos);  // names only, never values
}

TEST(Privilege, NoCapabilitiesNoNewPrivsSeccompOn) {
  temp_dir ws;
  auto r = run_sh(ws.path(), "grep -E '^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs|Seccomp):' /proc/self/status");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const char* line : {"CapInh:\t0000000000000000", "CapPrm:\t0000000000000000", "CapEff:\t0000000000000000",
                           "CapBnd:\t0000000000000000", "CapAmb:\t0000000000000000", "NoNewPrivs:\t1",
                           "Seccomp:\t2"}) {
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
  }
}

TEST(Privilege, NamespaceCreationAndMountAreBlocked) {
  temp_dir ws;
  auto r = run_cordon({}, {"python3", "-c",
                           "import os, ctypes, errno\n"
                           "libc = ctypes.CDLL(None, use_errno=True)\n"
                           "print('unshare', libc.unshare(0x10000000), errno.errorcode[ctypes.get_errno()])\n"
                           "print('mount', libc.mount(b'none', b'/tmp', b'tmpfs', 0, None), "
                           "errno.errorcode[ctypes.get_errno()])\n"
                           "print('ptrace', libc.ptrace(0, 0, 0, 0), errno.errorcode[ctypes.get_errno()])\n"},
                      ws.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("unshare -1 EPERM"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("mount -1 EPERM"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ptrace -1 EPERM"), std::string::npos) << r.out;
}

TEST(Terminal, TiocstiIsBlocked) {
  temp_dir ws;
  auto r = run_cordon({}, {"python3", "-c",
                           "import fcntl, termios, errno, os\n"
                           "fd = os.open('/dev/ptmx', os.O_RDWR)\n"
                           "try:\n  fcntl.ioctl(fd, termios.TIOCSTI, b'x')\n  print('injected')\n"
                           "except OSError as e:\n  print('blocked', errno.errorcode[e.errno])\n"
                           "print('sid', os.getsid(0) == os.getpid())\n"},
                      ws.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("blocked EPERM"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sid True"), std::string::npos) << r.out;  // a session of its own
}

TEST(Descriptors, InheritedDescriptorsAboveStderrAreClosed) {
  temp_dir ws;
  temp_dir secret_dir;
  std::string secret = secret_dir.write("secret.txt", "leaked\n");
  // Open a descriptor without O_CLOEXEC in this process; cordon inherits it, the command must not.
  int fd = ::open(secret.c_str(), O_RDONLY);
  ASSERT_GE(fd, 3);
  int high = ::dup2(fd, 9);
  ASSERT_EQ(high, 9);
  auto r = run_sh(ws.path(), "ls /proc/self/fd | tr '\\n' ' '; cat <&9 2>&1; true");
  ::close(9);
  ::close(fd);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.all().find("leaked"), std::string::npos) << r.all();
  EXPECT_EQ(r.out.find(" 9 "), std::string::npos) << r.out;
  EXPECT_NE(r.all().find("Bad file descriptor"), std::string::npos) << r.all();
}

}  // namespace
}  // namespace cordon::test
