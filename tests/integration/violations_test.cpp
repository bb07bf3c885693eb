// Attempts that confinement stopped are in the report, counted and capped.
#include "harness.h"

namespace cordon::test {
namespace {

TEST(Violations, BlockedCallsAreRecordedWithTheirTableErrno) {
  temp_dir ws;
  auto r = run_cordon({}, {"python3", "-c",
                           "import ctypes, errno, socket\n"
                           "libc = ctypes.CDLL(None, use_errno=True)\n"
                           "print('unshare', libc.unshare(0x10000000), errno.errorcode[ctypes.get_errno()])\n"
                           "for _ in range(3):\n"
                           "  try:\n    socket.socket(socket.AF_PACKET, socket.SOCK_RAW)\n"
                           "  except OSError as e:\n    print('socket', errno.errorcode[e.errno])\n"
                           "print('getpid ok', libc.getpid() > 0)\n"},
                      ws.path());
  EXPECT_EQ(r.exit_code, 0) << r.all();
  EXPECT_NE(r.out.find("unshare -1 EPERM"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("socket EAFNOSUPPORT\nsocket EAFNOSUPPORT\nsocket EAFNOSUPPORT"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("getpid ok True"), std::string::npos);
  nlohmann::json expected_socket = {{"kind", "network_socket"}, {"target", "socket(AF_PACKET)"}, {"count", 3}};
  nlohmann::json expected_unshare = {{"kind", "seccomp"}, {"target", "unshare"}, {"count", 1}};
  bool saw_socket = false, saw_unshare = false;
  for (const auto& v : r.report["violations"]) {
    saw_socket = saw_socket || v == expected_socket;
    saw_unshare = saw_unshare || v == expected_unshare;
  }
  EXPECT_TRUE(saw_socket) << r.report["violations"].dump();
  EXPECT_TRUE(saw_unshare) << r.report["violations"].dump();
}

TEST(Violations, AHostileLoopCannotGrowTheReportWithoutBound) {
  temp_dir ws;
  auto r = run_cordon({}, {"python3", "-c",
                           "import ctypes, socket\n"
                           "libc = ctypes.CDLL(None, use_errno=True)\n"
                           "for _ in range(20000): libc.ptrace(0, 0, 0, 0)\n"
                           "for family in range(2, 200):\n"
                           "  try: socket.socket(family, socket.SOCK_DGRAM)\n"
                           "  except OSError: pass\n"
                           "print('done')\n"},
                      ws.path());
  EXPECT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(r.out, "done\n");
  const auto& v = r.report["violations"];
  EXPECT_LE(v.size(), 65u);  // 64 distinct entries and one "truncated" count
  bool ptrace_counted = false, truncated = false;
  for (const auto& e : v) {
    ptrace_counted = ptrace_counted || (e["target"] == "ptrace" && e["count"] == 20000);
    truncated = truncated || (e["kind"] == "truncated" && e["count"].get<int>() > 0);
  }
  EXPECT_TRUE(ptrace_counted) << v.dump();
  EXPECT_TRUE(truncated) << v.dump();
  EXPECT_LT(r.report.dump().size(), 64u * 1024);
}

// A run that lasts a while has the supervisor give back its start-up memory
// (memory_trim.h) before the blocked call arrives; it still answers it.
TEST(Violations, AnsweredAfterTheSupervisorReleasedItsStartupMemory) {
  temp_dir ws;
  auto r = run_cordon({}, {"python3", "-c",
                           "import ctypes, errno, time\n"
                           "time.sleep(0.3)\n"
                           "libc = ctypes.CDLL(None, use_errno=True)\n"
                           "print('unshare', libc.unshare(0x10000000), errno.errorcode[ctypes.get_errno()])\n"},
                      ws.path());
  EXPECT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(r.out, "unshare -1 EPERM\n");
  nlohmann::json expected = {{"kind", "seccomp"}, {"target", "unshare"}, {"count", 1}};
  bool seen = false;
  for (const auto& v : r.report["violations"]) seen = seen || v == expected;
  EXPECT_TRUE(seen) << r.report["violations"].dump();
}

}  // namespace
}  // namespace cordon::test
