// Tree cleanup, the timeout, and exit statuses.
#include <chrono>
#include <random>

#include "harness.h"

namespace cordon::test {
namespace {

// A sleep duration no other process on the host uses, so its command line marks our daemons.
std::string unique_sleep() {
  std::random_device rd;
  return "3" + std::to_string(rd() % 100000 + 100000) + ".5";
}

TEST(ProcessTree, SetsidAndDoubleForkedDaemonsDoNotSurviveTheRun) {
  temp_dir ws;
  std::string a = unique_sleep(), b = unique_sleep();
  auto r = run_sh(ws.path(),
                  "setsid sleep " + a + " </dev/null >/dev/null 2>&1 & "
                  "(sh -c 'sleep " + b + " </dev/null >/dev/null 2>&1 &') ; "
                  // Counted once both run (polled within 10 s), not after a fixed pause.
                  "i=0; while [ $(ps -e -o args 2>/dev/null | grep -c '^sleep 3') -lt 2 ] && [ $i -lt 200 ]; do "
                  "sleep 0.05; i=$((i+1)); done; ps -e -o args 2>/dev/null | grep -c '^sleep 3' ; echo launched");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("launched"), std::string::npos);
  // Both daemons existed inside the sandbox...
  EXPECT_EQ(r.out.substr(0, 2), "2\n") << r.out;
  // ...and none is alive once cordon has returned.
  EXPECT_FALSE(process_with_marker_alive("sleep " + a));
  EXPECT_FALSE(process_with_marker_alive("sleep " + b));
}

TEST(ProcessTree, TimeoutKillsTheWholeTreePromptlyAndIsReported) {
  temp_dir ws;
  std::string a = unique_sleep(), b = unique_sleep();
  auto r = run_sh(ws.path(), "setsid sleep " + a + " & sleep " + b + " & echo started; wait", {"--timeout", "1"});
  EXPECT_EQ(r.exit_code, 124) << r.all();
  EXPECT_NE(r.out.find("started"), std::string::npos);
  EXPECT_LT(r.wall_seconds, 3.0);
  EXPECT_GE(r.wall_seconds, 0.9);
  EXPECT_FALSE(process_with_marker_alive("sleep " + a));
  EXPECT_FALSE(process_with_marker_alive("sleep " + b));
  EXPECT_EQ(r.report["outcome"], "timed_out");
  EXPECT_EQ(r.report["timeout_fired"], true);
  EXPECT_EQ(r.report["exit"]["signal_name"], "SIGKILL");
  EXPECT_EQ(r.report["controls"]["timeout"]["level"], "enforced");
  EXPECT_EQ(r.report["limits"]["timeout_ms"], 1000);
  EXPECT_NE(r.err.find("cordon: timeout:"), std::string::npos) << r.err;
}

TEST(ProcessTree, CommandFinishingBeforeTheTimeoutIsNotKilled) {
  temp_dir ws;
  auto r = run_sh(ws.path(), "sleep 0.1; echo done", {"--timeout", "5"});
  EXPECT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(r.out, "done\n");
  EXPECT_EQ(r.report["timeout_fired"], false);
  EXPECT_EQ(r.report["outcome"], "completed");
}

TEST(ExitStatus, CommandsOwnCodeIsReturned) {
  temp_dir ws;
  auto r = run_sh(ws.path(), "exit 7");
  EXPECT_EQ(r.exit_code, 7);
  EXPECT_EQ(r.report["exit"]["code"], 7);
}

TEST(ExitStatus, SignalNBecomes128PlusN) {
  temp_dir ws;
  auto r = run_sh(ws.path(), "kill -TERM $$");
  EXPECT_EQ(r.exit_code, 143);
  EXPECT_EQ(r.report["exit"]["signal"], 15);
  EXPECT_EQ(r.report["exit"]["signal_name"], "SIGTERM");
}

TEST(ExitStatus, MissingCommandIs127AndNotExecutableIs126) {
  temp_dir ws;
  ws.write("not-executable.sh", "#!/bin/sh\necho hi\n");
  auto missing = run_cordon({}, {"cordon-no-such-command"}, ws.path());
  EXPECT_EQ(missing.exit_code, 127);
  EXPECT_NE(missing.err.find("cordon: command_not_found:"), std::string::npos) << missing.err;
  EXPECT_EQ(missing.report["outcome"], "launch_failed");
  EXPECT_EQ(missing.report["error"]["code"], "command_not_found");
  auto denied = run_cordon({}, {"./not-executable.sh"}, ws.path());
  EXPECT_EQ(denied.exit_code, 126);
  EXPECT_NE(denied.err.find("cordon: command_not_executable:"), std::string::npos) << denied.err;
}

TEST(ExitStatus, StdinStdoutStderrPassThrough) {
  temp_dir ws;
  auto r = run_cordon({}, {"sh", "-c", "read line; echo \"got $line\"; echo to-stderr >&2"}, ws.path(), {},
                      "hello\n");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "got hello\n");
  EXPECT_EQ(r.err, "to-stderr\n");
}

}  // namespace
}  // namespace cordon::test
