// The CLI's one exception boundary (src/cli/main.cpp) and the inputs that
// used to reach it: every refusal is one line on stderr and exit 125, never
// std::terminate (SIGABRT, 134). Each input here is a file a person may hand
// to a command, with a field of the wrong JSON type.
#include <string>

#include "cli_capture.h"
#include "harness.h"

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

}  // namespace
}  // namespace cordon::test
