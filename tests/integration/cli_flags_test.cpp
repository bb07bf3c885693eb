// The shortcut flags of `cordon run` (--ro, --rw, --deny, --net, --env,
// --setenv, --memory, --max-procs, --cpu, --accept): each edits the chosen
// policy before its one compile, and the real confined command sees the
// difference. Limits are checked against what `cordon probe` says this host
// can enforce for this user, so the same test holds as root and unprivileged.
#include <filesystem>
#include <fstream>

#include "cli_capture.h"
#include "harness.h"

namespace cordon::test {
namespace {

namespace fs = std::filesystem;

std::string file_contents(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool has_line_starting(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

std::string connect_script(int port) {
  return "import socket, errno\ntry:\n  s = socket.create_connection(('127.0.0.1', " + std::to_string(port) +
         "), 3)\n  print('connected')\nexcept OSError as e:\n  print('refused', errno.errorcode.get(e.errno, e.errno))\n";
}

TEST(CliFlags, RwMakesASecondDirectoryWritable) {
  temp_dir ws, other;
  const std::string target = other.path() + "/made-inside";
  auto without = run_sh(ws.path(), "echo hi > " + target);
  EXPECT_NE(without.exit_code, 0) << without.all();
  EXPECT_FALSE(fs::exists(target));

  auto with = run_sh(ws.path(), "echo hi > " + target + " && cat " + target, {"--rw", other.path()});
  EXPECT_EQ(with.exit_code, 0) << with.all();
  EXPECT_EQ(with.out, "hi\n");
  EXPECT_EQ(file_contents(target), "hi\n");  // written through to the host
  EXPECT_EQ(with.report["controls"]["filesystem_write"]["level"], "enforced");
}

TEST(CliFlags, RoMakesADirectoryReadableButNotWritable) {
  temp_dir ws, other;
  other.write("data.txt", "payload\n");
  auto without = run_sh(ws.path(), "cat " + other.path() + "/data.txt");
  EXPECT_NE(without.exit_code, 0);
  EXPECT_NE(without.err.find("No such file or directory"), std::string::npos) << without.all();

  auto with = run_sh(ws.path(), "cat " + other.path() + "/data.txt; echo x > " + other.path() + "/new",
                     {"--ro", other.path()});
  EXPECT_EQ(with.out, "payload\n") << with.all();
  EXPECT_NE(with.err.find("Read-only file system"), std::string::npos) << with.all();
  EXPECT_FALSE(fs::exists(other.path() + "/new"));
}

TEST(CliFlags, DenyHidesAFileGivenRelativeToTheCurrentDirectory) {
  temp_dir ws;
  ws.write("secret.txt", "hunter2\n");
  ws.write("public.txt", "fine\n");
  auto plain = run_sh(ws.path(), "cat secret.txt");
  EXPECT_EQ(plain.out, "hunter2\n") << plain.all();

  auto denied = run_sh(ws.path(), "cat public.txt; cat secret.txt; echo x > secret.txt", {"--deny", "secret.txt"});
  EXPECT_EQ(denied.out, "fine\n") << denied.all();
  EXPECT_NE(denied.err.find("cat: secret.txt: Permission denied"), std::string::npos) << denied.all();
  EXPECT_EQ(denied.all().find("hunter2"), std::string::npos);
  EXPECT_EQ(file_contents(ws.path() + "/secret.txt"), "hunter2\n");
  EXPECT_EQ(denied.report["controls"]["filesystem_deny"]["level"], "enforced");
}

TEST(CliFlags, NetAnyReachesALoopbackServerAndNetNoneDoesNot) {
  loopback_server server;
  temp_dir ws;
  auto denied = run_cordon({}, {"python3", "-c", connect_script(server.port())}, ws.path());
  // The sandbox's own loopback, where nobody listens (no IPv4 socket at all without a namespace).
  const bool no_namespace = denied.report["backend"].value("name", "") == "linux-os-sandbox";
  const std::string refused = no_namespace ? "refused EAFNOSUPPORT\n" : "refused ECONNREFUSED\n";
  EXPECT_EQ(denied.out, refused) << denied.all();
  EXPECT_EQ(server.accepted(), 0);

  auto any = run_cordon({"--net", "any"}, {"python3", "-c", connect_script(server.port())}, ws.path());
  EXPECT_EQ(any.exit_code, 0) << any.all();
  EXPECT_EQ(any.out, "connected\n") << any.all();
  EXPECT_EQ(server.accepted(), 1);
  EXPECT_EQ(any.report["controls"]["network_deny"]["level"], "not_applicable");

  // --net none closes a policy that was unrestricted, and drops its filter block.
  temp_dir dir;
  const std::string policy = dir.write("p.json", R"({"schema_version": 1, "name": "open",
    "filesystem": {"readable": ["{workspace}"], "writable": ["{workspace}"]},
    "network": {"mode": "filtered", "rules": [{"host": "*", "action": "allow"}], "default_action": "allow"},
    "enforcement": {"network_filter": "planned"},
    "environment": {"set": {"PATH": "/usr/bin:/bin"}}})");
  auto none = run_cordon({"--policy", policy, "--net", "none"}, {"python3", "-c", connect_script(server.port())},
                         ws.path());
  EXPECT_EQ(none.exit_code, 0) << none.all();
  EXPECT_EQ(none.out, refused) << none.all();
  EXPECT_EQ(server.accepted(), 1);
  EXPECT_EQ(none.report["controls"]["network_deny"]["level"], "enforced");
}

TEST(CliFlags, SetenvAndEnvShapeTheEnvironment) {
  temp_dir ws;
  const std::string script = "echo \"set=$CORDON_SET passed=${CORDON_PASSED-unset} path=$PATH\"";
  auto plain = run_cordon({}, {"sh", "-c", script}, ws.path(), {"CORDON_PASSED=from-host"});
  EXPECT_EQ(plain.out.find("passed=unset"), plain.out.find("passed=")) << plain.out;

  auto with = run_cordon({"--setenv", "CORDON_SET=a=b c", "--env", "CORDON_PASSED", "--setenv", "PATH=/bin"},
                         {"sh", "-c", script}, ws.path(), {"CORDON_PASSED=from-host"});
  EXPECT_EQ(with.exit_code, 0) << with.all();
  EXPECT_EQ(with.out, "set=a=b c passed=from-host path=/bin\n");
  const std::string names = with.report["environment"]["names"].dump();
  EXPECT_NE(names.find("CORDON_SET"), std::string::npos) << names;
  EXPECT_NE(names.find("CORDON_PASSED"), std::string::npos) << names;
}

// A limit flag: enforced here -> the run carries the limit; weaker -> refused
// with a blocker for that control, and accepted only with --accept.
void check_limit_flag(const std::string& flag, const std::string& value, const std::string& control,
                      const std::string& limit_key, std::uint64_t limit_value) {
  SCOPED_TRACE(flag + " " + value);
  const nlohmann::json probe = probe_json();
  ASSERT_TRUE(probe.is_object());
  const std::string best = probe["best"][control]["level"];
  temp_dir ws;
  auto r = run_sh(ws.path(), "echo ran", {flag, value});
  if (best == "enforced") {
    EXPECT_EQ(r.exit_code, 0) << r.all();
    EXPECT_EQ(r.out, "ran\n");
    EXPECT_EQ(r.report["limits"][limit_key], limit_value);
    EXPECT_EQ(r.report["controls"][control]["level"], "enforced");
    return;
  }
  EXPECT_EQ(r.exit_code, 125) << r.all();
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(has_line_starting(r.err, "cordon: blocker: " + control + ": required enforced, available " + best))
      << r.err;
  EXPECT_EQ(r.report["outcome"], "refused");
  if (best != "partial") return;
  auto accepted = run_sh(ws.path(), "echo ran", {flag, value, "--accept", control + "=partial"});
  EXPECT_EQ(accepted.exit_code, 0) << accepted.all();
  EXPECT_EQ(accepted.report["limits"][limit_key], limit_value);
  EXPECT_EQ(accepted.report["controls"][control]["level"], "partial");
  EXPECT_NE(accepted.report["warnings"].dump().find(control + ": policy accepts partial"), std::string::npos)
      << accepted.report["warnings"].dump();
}

TEST(CliFlags, MemoryAcceptsSuffixesAndIsEnforcedOrRefusedWithABlocker) {
  check_limit_flag("--memory", "512M", "memory", "memory_bytes", 512ULL << 20);
  check_limit_flag("--memory", "2g", "memory", "memory_bytes", 2ULL << 30);
  check_limit_flag("--memory", "268435456", "memory", "memory_bytes", 268435456);  // bytes: 256M
}

TEST(CliFlags, MemoryWithoutAcceptingPartialIsRefusedWhereOnlyPartialExists) {
  // Wherever this host can only give `partial` (rlimits), the policy must say
  // so; cordon never runs with less than the policy requires.
  const nlohmann::json probe = probe_json();
  if (probe["best"]["memory"]["level"] == "enforced") {
    GTEST_SKIP() << "this host enforces memory limits fully (" << probe["best"]["memory"]["mechanism"] << ")";
  }
  temp_dir ws;
  auto r = run_sh(ws.path(), "echo ran", {"--memory", "256M"});
  EXPECT_EQ(r.exit_code, 125);
  EXPECT_TRUE(has_line_starting(r.err, "cordon: blocker: memory:")) << r.err;
  EXPECT_EQ(r.report["outcome"], "refused");
}

TEST(CliFlags, MaxProcsAndCpu) {
  check_limit_flag("--max-procs", "64", "process_count", "max_processes", 64);
  check_limit_flag("--cpu", "30", "cpu", "cpu_seconds", 30);
}

TEST(CliFlags, FlagsEditAPolicyFileToo) {
  temp_dir ws, other, dir;
  const std::string policy = dir.write("p.json", R"({"schema_version": 1, "name": "mine",
    "filesystem": {"readable": ["{workspace}"], "writable": ["{workspace}"]},
    "environment": {"set": {"PATH": "/usr/bin:/bin", "GREETING": "policy"}}})");
  auto r = run_cordon({"--policy", policy, "--rw", other.path(), "--setenv", "GREETING=flag"},
                      {"sh", "-c", "echo $GREETING > " + other.path() + "/g"}, ws.path());
  EXPECT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(file_contents(other.path() + "/g"), "flag\n");
  EXPECT_EQ(r.report["policy"]["name"], "mine");
}

TEST(CliFlags, MalformedValuesAreUsageErrorsAndNothingRuns) {
  temp_dir ws;
  const std::vector<std::vector<std::string>> bad = {
      {"--net", "some"},     {"--memory", "12X"},         {"--memory", "0"},  {"--memory", "99999999999T"},
      {"--max-procs", "0"},  {"--max-procs", "-3"},       {"--cpu", "1.5"},   {"--setenv", "NOEQUALS"},
      {"--max-procs", "99999999999999999999"},
      {"--setenv", "=v"},    {"--env", "A=B"},            {"--rw", ""},       {"--accept", "memroy=partial"},
      {"--accept", "memory=weak"}, {"--rw", "--"},  // the separator taken for the path
  };
  for (const auto& flags : bad) {
    SCOPED_TRACE(flags[0] + " " + flags[1]);
    auto r = run_sh(ws.path(), "touch ran", flags);
    EXPECT_EQ(r.exit_code, 125) << r.all();
    EXPECT_EQ(r.err.rfind("cordon: usage_error: ", 0), 0u) << r.err;
    EXPECT_FALSE(fs::exists(ws.path() + "/ran"));
  }
}

TEST(CliFlags, TheCommandKeepsItsOwnOptionsWithoutASeparator) {
  temp_dir ws;
  captured r = run_cli({"run", "--net", "none", "--setenv", "X=1", "sh", "-c", "echo \"$0 $X $*\"", "a", "-b", "--c"},
                       ws.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "a 1 -b --c\n");
  captured dashes = run_cli({"run", "--", "sh", "-c", "echo \"$*\"", "x", "--", "--rw", "/"}, ws.path());
  EXPECT_EQ(dashes.out, "-- --rw /\n") << dashes.err;
}

TEST(CliFlags, AMisspeltFlagIsRefusedNeverIgnored) {
  temp_dir ws;
  ws.write("secret.txt", "hunter2\n");
  // "--dny=..." would otherwise be set aside by the parser and the command run without the denial.
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"run", "--dny=secret.txt", "cat", "secret.txt"},
           {"run", "--bogus", "cat", "secret.txt"},
           {"run", "-x", "--", "cat", "secret.txt"}}) {
    SCOPED_TRACE(args[1]);
    captured r = run_cli(args, ws.path());
    EXPECT_EQ(r.exit_code, 125);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err.rfind("cordon: usage_error: ", 0), 0u) << r.err;
  }
}

TEST(CliFlags, AMisspeltFlagGetsCordonsOwnLineWithANameThatExists) {
  temp_dir ws;
  // -v/-q/--color are accepted after the subcommand; an unknown run flag must
  // still get cordon's one line, not CLI11's "arguments were not expected".
  captured typo = run_cli({"run", "--dny=secret.txt", "cat", "secret.txt"}, ws.path());
  EXPECT_EQ(typo.exit_code, 125);
  EXPECT_EQ(typo.err, "cordon: usage_error: unknown option '--dny' for cordon run (did you mean --deny?); see cordon run --help\n");
  captured after_own = run_cli({"run", "-q", "--net", "none", "--tiemout", "5", "--", "true"}, ws.path());
  EXPECT_EQ(after_own.exit_code, 125);
  EXPECT_EQ(after_own.err,
            "cordon: usage_error: unknown option '--tiemout' for cordon run (did you mean --timeout?); see cordon run --help\n");
  captured far = run_cli({"run", "--frobnicate", "--", "true"}, ws.path());
  EXPECT_EQ(far.exit_code, 125);
  EXPECT_EQ(far.err, "cordon: usage_error: unknown option '--frobnicate' for cordon run; see cordon run --help\n");
  captured nested = run_cli({"policy", "explain", "--profle", "read-only"}, ws.path());
  EXPECT_EQ(nested.exit_code, 125);
  EXPECT_EQ(nested.err.rfind("cordon: usage_error: unknown option '--profle' for cordon policy explain (did you mean --profile?)", 0), 0u)
      << nested.err;
  EXPECT_EQ(typo.out + after_own.out + far.out, "");
}

TEST(CliFlags, HelpDocumentsTheShortcuts) {
  captured help = run_cli({"run", "--help"}, "/");
  EXPECT_EQ(help.exit_code, 0);
  for (const char* flag : {"--ro", "--rw", "--deny", "--net", "--env", "--setenv", "--memory", "--max-procs", "--cpu",
                           "--timeout", "--accept"}) {
    EXPECT_NE(help.out.find(flag), std::string::npos) << flag;
  }
}

}  // namespace
}  // namespace cordon::test
