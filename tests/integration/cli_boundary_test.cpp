// The CLI's one exception boundary (src/cli/main.cpp) and the inputs that
// used to reach it: every refusal is one line on stderr and exit 125, never
// std::terminate (SIGABRT, 134). Each input here is a file a person may hand
// to a command, with a field of the wrong JSON type.
#include <cstdio>
#include <string>

#include "cli_capture.h"
#include "harness.h"
#include "../sanitizer.h"

namespace cordon::test {
namespace {

constexpr int kCordonFailed = 125;

// The number of lines of `text`.
std::size_t line_count(const std::string& text) {
  std::size_t n = 0;
  for (char c : text) n += c == '\n' ? 1 : 0;
  return n;
}

// A schema-1 report with `fields` (a JSON object's members, without braces) added.
std::string report_with(const std::string& fields) {
  return R"({"schema": 1, "outcome": "completed", "exit": {"code": 0}, )" + fields + "}";
}

struct ReportShowRefuses : ::testing::Test {
  // `cordon report show` on a report with `fields`: refused with one
  // "invalid_report" line naming the file and the JSON pointer `where`.
  void expect_refused(const std::string& fields, const std::string& where) {
    const std::string file = dir_.write("r.json", report_with(fields));
    auto shown = run_cli({"report", "show", file}, "/");
    EXPECT_EQ(shown.exit_code, kCordonFailed) << fields << "\n" << shown.err;
    EXPECT_EQ(shown.out, "") << fields;
    EXPECT_EQ(shown.err.rfind("cordon: invalid_report: " + file + ": " + where + ": ", 0), 0U) << fields << "\n"
                                                                                               << shown.err;
    EXPECT_EQ(line_count(shown.err), 1U) << shown.err;
  }
  temp_dir dir_;
};

TEST_F(ReportShowRefuses, AnEnvironmentNameThatIsNotAString) {
  expect_refused(R"("environment": {"names": ["PATH", 7]})", "/environment/names/1");
}

TEST_F(ReportShowRefuses, EnvironmentNamesThatAreNotAList) {
  expect_refused(R"("environment": {"names": {"PATH": 1}})", "/environment/names");
}

TEST_F(ReportShowRefuses, TimingThatIsNotAnObjectOrNotNumbers) {
  expect_refused(R"("timing": [1, 2])", "/timing");
  expect_refused(R"("timing": {"wall_ms": "12"})", "/timing/wall_ms");
}

TEST_F(ReportShowRefuses, ResourcesThatAreNotNumbers) {
  expect_refused(R"("resources": {"max_process_rss_bytes": "big"})", "/resources/max_process_rss_bytes");
  expect_refused(R"("resources": {"peak_memory_bytes": -1})", "/resources/peak_memory_bytes");
  expect_refused(R"("resources": {"tree_cpu_ms": null})", "/resources/tree_cpu_ms");
}

TEST_F(ReportShowRefuses, LimitFlagsThatAreNotBooleans) {
  expect_refused(R"("limits": {"memory_bytes": 1}, "limits_hit": {"memory": "yes"})", "/limits_hit/memory");
  expect_refused(R"("limits": {"timeout_ms": 1}, "timeout_fired": 1)", "/timeout_fired");
}

TEST_F(ReportShowRefuses, ViolationsAndConnectionsThatAreNotObjects) {
  expect_refused(R"("violations": ["write /etc/passwd"])", "/violations/0");
  expect_refused(R"("network": {"total": "3"})", "/network/total");
  expect_refused(R"("network": {"total": 1, "connections": [7]})", "/network/connections/0");
}

TEST(ReportShow, AReportWithEveryCheckedFieldWellTypedStillPrints) {
  temp_dir dir;
  const std::string file = dir.write(
      "r.json", report_with(R"("environment": {"names": ["PATH", "HOME"]}, "timing": {"wall_ms": 12},)"
                            R"( "resources": {"max_process_rss_bytes": 1024, "tree_cpu_ms": 3},)"
                            R"( "limits": {"memory_bytes": 1}, "limits_hit": {"memory": true}, "timeout_fired": false,)"
                            R"( "violations": [{"kind": "filesystem", "target": "/etc", "count": 2}],)"
                            R"( "network": {"total": 1, "allowed": 1, "connections": [{"action": "allow", "port": 443}]})"));
  auto shown = run_cli({"report", "show", file}, "/");
  EXPECT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_EQ(shown.err, "");
  EXPECT_NE(shown.out.find("variables:  PATH HOME\n"), std::string::npos) << shown.out;
  EXPECT_NE(shown.out.find("memory_bytes 1 (hit)"), std::string::npos) << shown.out;
}

// `cordon ARGS` under prlimit(1)'s address-space limit of `mib` MiB: its
// stderr and exit status. Paths in `args` must need no shell quoting.
captured run_cli_in_mib(const std::string& args, int mib) {
  const std::string line =
      "prlimit --as=" + std::to_string(std::uint64_t(mib) << 20) + " -- " + cordon_cli() + " " + args + " 2>&1 >/dev/null";
  captured c;
  FILE* pipe = ::popen(line.c_str(), "r");
  if (pipe == nullptr) return c;
  char buffer[512];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) c.err.append(buffer, n);
  const int status = ::pclose(pipe);
  c.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return c;
}

// An exception no reader refuses (here std::bad_alloc: a 40 MB string in a
// report, read under a 100 MiB address-space limit) reaches main()'s one
// boundary: one "internal_error" line and exit 125, not std::terminate's
// abort (134). The same report without the limit prints.
TEST(ExceptionBoundary, AnExceptionThatReachesMainIsOneLineAndExit125) {
#if CORDON_TEST_UNDER_SANITIZER
  GTEST_SKIP() << "a sanitizer's shadow memory does not fit an address-space limit";
#endif
  temp_dir dir;
  const std::string file = dir.write("big.json", report_with(R"("warnings": [")" + std::string(40'000'000, 'A') + "\"]"));
  auto limited = run_cli_in_mib("report show " + file, 100);
  EXPECT_EQ(limited.exit_code, kCordonFailed) << limited.err;
  EXPECT_EQ(limited.err, "cordon: internal_error: std::bad_alloc\n");
  auto unlimited = run_cli({"report", "show", file}, "/");
  EXPECT_EQ(unlimited.exit_code, 0) << unlimited.err;
  EXPECT_EQ(unlimited.err, "");
}

}  // namespace
}  // namespace cordon::test
