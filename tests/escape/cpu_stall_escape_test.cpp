// The CPU-time ceiling against a command that keeps the supervisor busy
// (docs/linux-backend.md, "Stopping cordon"; docs/doors.md, "how late the
// kill comes"). The supervisor performs every unix connect(2) itself and
// waits up to 2 s for one whose listener's backlog is full: a command that
// issues such connects back to back, while other processes spin, would have
// the cgroup's CPU counter read only between them, and use seconds of CPU
// past its ceiling.
#include <unistd.h>

#include <string>

#include "escape_support.h"

namespace cordon::test::escape {
namespace {

// Four processes connecting to a listener of the run's private /tmp that
// never accepts (backlog 0), holding each socket; then two spinners for up
// to 20 s.
constexpr const char* stall_script = R"(import os, socket, time
path = "/tmp/stall.sock"
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); srv.bind(path); srv.listen(0)
stallers = []
for _ in range(4):
    pid = os.fork()
    if pid == 0:
        kept = []
        t = time.time()
        while time.time() - t < 20:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try: s.connect(path)
            except OSError: pass
            kept.append(s)
        os._exit(0)
    stallers.append(pid)
def stalled(pid):  # sleeping (proc(5) state S): in a connect the full backlog holds
    s = open("/proc/%d/stat" % pid).read()
    return s[s.rindex(chr(41)) + 2] == "S"  # after the name's closing parenthesis
while not all(stalled(p) for p in stallers): time.sleep(0.01)  # polled; --timeout bounds it
for _ in range(2):
    if os.fork() == 0:
        t = time.time()
        while time.time() - t < 20: pass
        os._exit(0)
time.sleep(25)
)";

TEST(EscapeResources, StalledUnixConnectsDoNotDelayTheCpuCeiling) {
  if (::access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/python3";
  temp_dir ws, policy_dir;
  ws.write("stall.py", stall_script);
  const std::string policy = write_policy(policy_dir,
                                          R"({"readable": ["{workspace}"], "writable": ["{workspace}", "{run_tmp}"]})",
                                          R"({"mode": "denied"})", R"({"cpu_seconds": 1})", R"({"cpu": "partial"})");
  auto r = run_cordon({"--policy", policy, "--timeout", "30"}, {"/usr/bin/python3", "stall.py"}, ws.path());
  ASSERT_TRUE(r.report.is_object()) << r.all();
  const std::string level = r.report["controls"]["cpu"]["level"];
  if (level != "enforced") {
    GTEST_SKIP() << "the CPU ceiling is RLIMIT_CPU per process here (" << level
                 << "): the kernel holds it, the supervisor's poll is not involved";
  }
  EXPECT_EQ(r.report["limits_hit"]["cpu"], true) << r.all();
  EXPECT_EQ(r.report["timeout_fired"], false);
  // The tree is killed at its second of CPU, give or take the 50 ms poll
  // of both spinners and a loaded host: well under the 2 s one stalled
  // connect would add per spinning core.
  ASSERT_TRUE(r.report["resources"].contains("tree_cpu_ms")) << r.report["resources"].dump();
  EXPECT_LT(r.report["resources"]["tree_cpu_ms"].get<double>(), 1300) << r.report["resources"].dump();
  EXPECT_LT(r.wall_seconds, 5.0);
}

}  // namespace
}  // namespace cordon::test::escape
