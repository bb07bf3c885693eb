// The report's plan half rendered ahead (cordon/report.h, report_plan_half):
// a report assembled from it is the report rendered whole, byte for byte;
// a half of another plan is never used; and a prepared run's report carries
// the same plan members and the same diagnoses as an ordinary run's.
#include <gtest/gtest.h>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cordon/cordon.h"
#include "cordon/prepared.h"
#include "cordon/report.h"
#include "fixture.h"

namespace cordon {
namespace {

using ordered = nlohmann::ordered_json;

// The members every run report takes from the plan alone, and the mount table.
const std::vector<std::string> kPlanMembers = {"backend", "policy", "controls", "limits",
                                               "schema",  "cordon_version", "mounts"};

class ReportHalf : public prepared_fixture {};

// Outcomes that fill every member the outcome half can have.
std::vector<run_outcome> sample_outcomes() {
  std::vector<run_outcome> all;
  run_outcome exited;
  exited.exited = true;
  exited.exit_code = 3;
  exited.wall_ms = 12;
  exited.working_directory = "/w";
  exited.environment_names = {"PATH", "HOME"};
  exited.mounts = {"ro-bind / /", "tmpfs /tmp"};
  exited.warnings = {"created during the run: /w/.gitmodules"};
  exited.prepared_at = "2026-12-01T18:00:00.000Z";
  exited.peak_memory_bytes = 1 << 20;
  exited.tree_cpu_ms = 4;
  all.push_back(exited);
  run_outcome signalled;
  signalled.exited = false;
  signalled.signal = 9;
  signalled.timed_out = true;
  signalled.violations = {{"repository_hook_created", "/w/.git/hooks/pre-commit", 1}};
  deferred_execution_evidence evidence;
  evidence.findings.push_back({"repository_hook_created", "/w/.git/hooks/pre-commit", "", "created during the run"});
  signalled.deferred_execution = evidence;
  all.push_back(signalled);
  run_outcome cancelled;
  cancelled.cancelled = true;
  cancelled.signal = 9;
  network_evidence network;
  network.listeners = {"127.0.0.1:3128"};
  network.total = 1;
  network.denied = 1;
  network_connection c;
  c.protocol = "http";
  c.host = "example.test";
  c.port = 80;
  c.action = "deny";
  c.reason = "no rule allows it";
  network.connections.push_back(c);
  cancelled.network = network;
  all.push_back(cancelled);
  return all;
}

// A report without its two clock readings (to the second: two renderings
// can straddle a second).
ordered without_clock(const std::string& text) {
  ordered j = ordered::parse(text);
  j.erase("started_at");
  j.erase("finished_at");
  return j;
}

TEST_F(ReportHalf, AssembledReportIsTheWholeRendering) {
  auto plan = compile_profile("workspace-write");
  ASSERT_TRUE(plan);
  const report_plan_half ahead(*plan);
  EXPECT_TRUE(ahead.renders(*plan));
  launch_request request;
  request.argv = {"/bin/sh", "-c", "exit 3", "caf\xc3"};  // not UTF-8: replaced, as in the whole rendering
  for (const run_outcome& outcome : sample_outcomes()) {
    const std::string whole = run_report_json(*plan, request, outcome);
    const std::string assembled = run_report_json(*plan, request, outcome, ahead);
    EXPECT_EQ(without_clock(assembled), without_clock(whole));
    // Byte for byte what one dump of the same members writes: the same
    // indentation, separators and member order as a whole-object rendering.
    ordered parsed = ordered::parse(assembled);
    EXPECT_EQ(parsed.dump(2) + "\n", assembled);
    std::vector<std::string> keys_whole, keys_assembled;
    const ordered whole_parsed = ordered::parse(whole);
    for (const auto& [key, value] : whole_parsed.items()) keys_whole.push_back(key);
    for (const auto& [key, value] : parsed.items()) keys_assembled.push_back(key);
    EXPECT_EQ(keys_assembled, keys_whole);
    for (const auto& member : kPlanMembers) EXPECT_TRUE(parsed.contains(member)) << member;
  }
}

TEST_F(ReportHalf, HalfOfAnotherPlanIsNotUsed) {
  auto write = compile_profile("workspace-write");
  auto read = compile_profile("read-only");
  ASSERT_TRUE(write && read);
  const report_plan_half of_write(*write);
  EXPECT_FALSE(of_write.renders(*read));
  launch_request request;
  request.argv = {"/bin/true"};
  run_outcome outcome;
  outcome.exited = true;
  ordered j = ordered::parse(run_report_json(*read, request, outcome, of_write));
  EXPECT_EQ(j["policy"]["name"], read->policy().name);
  EXPECT_EQ(j["policy"]["digest"], policy_digest(read->policy()));
  EXPECT_EQ(without_clock(j.dump()), without_clock(run_report_json(*read, request, outcome)));
}

// One command run cold and prepared under one plan: the plan's members are
// equal, and so is what the run diagnoses from the command line (an
// argument the view hides) and from the environment.
TEST_F(ReportHalf, PreparedReportMatchesAnOrdinaryOne) {
  auto plan = compile_profile("workspace-write");
  ASSERT_TRUE(plan);
  // On the host, outside the sandbox's view (/tmp is private inside).
  const std::filesystem::path hidden = workspace_.string() + "-hidden";
  std::filesystem::create_directories(hidden);
  run_request request;
  request.launch.argv = {"/bin/sh", "-c", "exit 4", hidden.string()};
  request.launch.host_environment = {"PATH=/usr/bin:/bin", "LANG=C.UTF-8"};
  request.launch.working_directory = workspace_.string();

  auto cold = start_run(*plan, request);
  ASSERT_TRUE(cold) << cold.error_value().describe();
  run_report ordinary = cold->wait();
  auto sandbox = prepared_sandbox::prepare(*plan);
  ASSERT_TRUE(sandbox) << sandbox.error_value().describe();
  auto started = sandbox->start(*plan, request);
  ASSERT_TRUE(started) << started.error_value().describe();
  run_report prepared = started->wait();
  std::filesystem::remove_all(hidden);
  ASSERT_TRUE(ordinary.outcome && prepared.outcome);

  ordered a = ordered::parse(ordinary.json), b = ordered::parse(prepared.json);
  for (const auto& member : kPlanMembers) EXPECT_EQ(b[member], a[member]) << member;
  EXPECT_EQ(b["command"], a["command"]);
  EXPECT_EQ(b["environment"], a["environment"]);
  EXPECT_EQ(b["exit"], a["exit"]);
  EXPECT_EQ(b["warnings"], a["warnings"]);
  bool named = false;
  for (const auto& w : b["warnings"]) named = named || w.get<std::string>().find(hidden.string()) != std::string::npos;
  EXPECT_TRUE(named) << "the prepared report does not name the hidden argument: " << b["warnings"].dump();
  EXPECT_EQ(a["prepared"], false);
  EXPECT_EQ(b["prepared"], true);
  // Its text is one whole rendering too.
  EXPECT_EQ(b.dump(2) + "\n", prepared.json);
}

}  // namespace
}  // namespace cordon
