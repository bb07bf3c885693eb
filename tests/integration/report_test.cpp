// Every kind of report validates against schemas/report.v1.schema.json
// (checked with python3-jsonschema, draft 2020-12).
#include <filesystem>
#include <fstream>

#include "harness.h"

namespace cordon::test {
namespace {


TEST(Report, CompletedTimedOutRefusedAndLaunchFailedReportsMatchTheSchema) {
  temp_dir ws, dir;
  auto completed = run_sh(ws.path(), "echo hi");
  auto signalled = run_sh(ws.path(), "kill -KILL $$");
  auto timed_out = run_sh(ws.path(), "sleep 10", {"--timeout", "0.2"});
  auto refused = run_cordon({"--policy", dir.write("p.json", R"({"schema_version": 1, "network": {"mode": "unrestricted"}, "enforcement": {"unix_sockets": "enforced"}})")},
                            {"true"}, ws.path());
  auto invalid = run_cordon({"--policy", dir.write("q.json", R"({"schema_version": 1, "nme": "x"})")}, {"true"},
                            ws.path());
  auto missing = run_cordon({}, {"no-such-command-here"}, ws.path());
  ASSERT_EQ(completed.report["outcome"], "completed");
  ASSERT_EQ(signalled.report["exit"]["signal_name"], "SIGKILL");
  ASSERT_EQ(timed_out.report["outcome"], "timed_out");
  ASSERT_EQ(refused.report["outcome"], "refused");
  ASSERT_EQ(invalid.report["outcome"], "refused");
  ASSERT_EQ(missing.report["outcome"], "launch_failed");
  for (const auto* r : {&completed, &signalled, &timed_out, &refused, &invalid, &missing}) {
    EXPECT_EQ(report_schema_verdict(r->report), "valid") << r->report.dump(2);
  }
}

TEST(Report, IsWrittenAtomicallyAndNamesTheRun) {
  temp_dir ws;
  auto r = run_sh(ws.path(), "true");
  EXPECT_EQ(r.report["schema"], 1);
  EXPECT_EQ(r.report["backend"]["name"], "linux-namespaces");
  EXPECT_EQ(r.report["policy"]["name"], "workspace-write");
  EXPECT_EQ(r.report["command"]["argv"], nlohmann::json({"sh", "-c", "true"}));
  EXPECT_EQ(r.report["command"]["working_directory"], ws.path());
  EXPECT_EQ(r.report["policy"]["digest"].get<std::string>().size(), 7u + 64u);
  EXPECT_NE(r.report["controls"]["filesystem_write"]["mechanism"].get<std::string>().find("landlock abi"),
            std::string::npos);
  EXPECT_EQ(r.report.contains("secure"), false);
}

TEST(Report, UnwritableReportDirectoryIsRefusedBeforeAnythingRuns) {
  temp_dir ws;
  // Run cordon directly: the harness always adds a --report of its own.
  temp_dir out_dir;
  std::string out = out_dir.path() + "/out";
  EXPECT_EQ(host_command({"sh", "-c", "'" + cordon_cli() + "' run --report /proc/no-such-dir/r.json -- touch ran 2>" + out +
                                          "; test $? -eq 125"},
                         ws.path()),
            0);
  EXPECT_FALSE(std::filesystem::exists(ws.path() + "/ran"));  // checked before anything runs
  std::ifstream in(out);
  std::string err((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(err, "cordon: io_error: cannot open directory /proc/no-such-dir: No such file or directory\n");
}

}  // namespace
}  // namespace cordon::test
