// CPU time of processes killed at the end of a run, without a cgroup
// (docs/doors.md, "CPU time of a killed tree"): a background process the
// command leaves behind, or one cut by the timeout, is killed and reaped by
// PID 1, so its CPU time is in the report's timing. The background process
// writes the CPU time it used (its own clock) to a file and then sleeps until
// it is killed; the report must count at least that much.
#include <filesystem>
#include <fstream>
#include <string>

#include "escape_support.h"

namespace cordon::test::escape {
namespace {

namespace fs = std::filesystem;

// Spins until it has used `ms` of CPU, writes its CPU time in ms to `file`,
// then sleeps (it never ends by itself).
std::string spinner(int ms, const std::string& file) {
  return "python3 -c 'import time\n"
         "while time.process_time() < " + std::to_string(ms / 1000.0) + ": pass\n"
         "open(\"" + file + ".tmp\", \"w\").write(str(int(time.process_time() * 1000)))\n"
         "import os; os.rename(\"" + file + ".tmp\", \"" + file + "\")\n"
         "time.sleep(600)' &";
}

long long read_ms(const std::string& file) {
  std::ifstream in(file);
  long long v = -1;
  in >> v;
  return v;
}

long long report_cpu_ms(const run_result& r) {
  if (r.report.is_null() || !r.report.contains("timing")) return -1;
  return r.report["timing"].value("user_cpu_ms", 0LL) + r.report["timing"].value("system_cpu_ms", 0LL);
}

// No cgroup for these runs (no tree limit): the report has no tree_cpu_ms.
void expect_no_cgroup(const run_result& r) {
  EXPECT_FALSE(!r.report.is_null() && r.report.contains("resources") && r.report["resources"].contains("tree_cpu_ms"))
      << "the run had a cgroup; this test is about runs without one";
}

// The command ends normally as soon as its background process has spun;
// the background process is killed at the end of the run.
TEST(EscapeKilledTreeCpu, ABackgroundProcessLeftBehindIsCounted) {
  temp_dir ws;
  const std::string file = ws.path() + "/spun";
  auto r = run_cordon({}, {"/bin/sh", "-c", spinner(300, file) + " while [ ! -e " + file + " ]; do sleep 0.05; done"},
                      ws.path());
  ASSERT_EQ(r.exit_code, 0) << r.all();
  expect_no_cgroup(r);
  long long spun = read_ms(file);
  ASSERT_GE(spun, 300) << r.all();
  EXPECT_GE(report_cpu_ms(r), spun - 5) << "the report's CPU time misses the killed background process: "
                                         << r.report.dump();
}

// The timeout cuts the whole tree; what the background process used is counted.
TEST(EscapeKilledTreeCpu, ATreeCutByTheTimeoutIsCounted) {
  temp_dir ws;
  const std::string file = ws.path() + "/spun";
  auto r = run_cordon({"--timeout", "6"}, {"/bin/sh", "-c", spinner(300, file) + " sleep 600"}, ws.path());
  EXPECT_EQ(r.exit_code, 124) << r.all();
  ASSERT_FALSE(r.report.is_null()) << r.all();
  EXPECT_EQ(r.report.value("outcome", ""), "timed_out") << r.report.dump();
  expect_no_cgroup(r);
  long long spun = read_ms(file);
  ASSERT_GE(spun, 300) << "the spinner did not get 300 ms of CPU in 6 s: " << r.all();
  EXPECT_GE(report_cpu_ms(r), spun - 5) << "the report's CPU time misses the tree cut by the timeout: "
                                         << r.report.dump();
}

}  // namespace
}  // namespace cordon::test::escape
