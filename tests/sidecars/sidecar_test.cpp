// Tests of `cordon sidecar` through the real CLI: a Python JSON-RPC sidecar
// confined by a real plan, exchanging requests with this test as its host;
// junk on stdout, an unanswered initialize, a sidecar that ignores SIGTERM,
// refusals, extension manifests.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "fake_sidecar_script.h"
#include "harness.h"
#include "sidecar_process.h"

namespace cordon::test {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

// The fake sidecar's progress frames (tests/sidecars/fake_sidecar.py): 1 KB of
// padding and their JSON, under 1,100 bytes each.
constexpr std::size_t kFrameBytes = 1100;

json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) return nullptr;
  std::stringstream text;
  text << in.rdbuf();
  return json::parse(text.str(), nullptr, false);
}

std::string request(int id, const std::string& method, const json& params) {
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}}.dump() + "\n";
}

class SidecarTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ::chmod(dir.path().c_str(), 0755);
    script = dir.write("fake_sidecar.py", kFakeSidecarScript);
    report = dir.path() + "/report.json";
    marker = "sidecar-marker-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name();
  }
  // `cordon sidecar` with the read-only profile, the test's directory as the workspace.
  std::vector<std::string> args(const std::string& mode, std::vector<std::string> extra = {}) {
    std::vector<std::string> a = {"sidecar", "--policy", "read-only", "--workspace", dir.path(), "--report", report};
    a.insert(a.end(), extra.begin(), extra.end());
    a.insert(a.end(), {"--", "python3", script, mode, marker});
    return a;
  }
  // Sends initialize and checks its answer.
  void handshake(sidecar_process& p) {
    ASSERT_TRUE(p.send(request(0, "initialize", {{"protocolVersion", "2025-06-18"}, {"capabilities", json::object()}})));
    auto line = p.read_line(20s);
    ASSERT_TRUE(line) << p.stderr_text();
    json answer = json::parse(*line);
    EXPECT_EQ(answer["id"], 0);
    EXPECT_EQ(answer["result"]["serverInfo"]["name"], "fake");
  }

  temp_dir dir;
  std::string script, report, marker;
};

TEST_F(SidecarTest, ThousandRequestsRoundTripThroughTheSandbox) {
  sidecar_process p(args("echo"));
  handshake(p);
  for (int id = 1; id <= 1000; ++id) {
    ASSERT_TRUE(p.send(request(id, "echo", {{"n", id}, {"text", "hello"}})));
    auto line = p.read_line(20s);
    ASSERT_TRUE(line) << "no answer to request " << id << ": " << p.stderr_text();
    json answer = json::parse(*line);
    ASSERT_EQ(answer["id"], id);
    ASSERT_EQ(answer["result"]["n"], id);
  }
  p.close_stdin();
  EXPECT_EQ(p.wait(), 0) << p.stderr_text();
  EXPECT_EQ(p.rest_of_stdout(), "");
  json r = read_json(report);
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(r["kind"], "cordon-sidecar");
  EXPECT_EQ(r["state"], "ended");
  EXPECT_EQ(r["ending"]["reason"], "host_closed");
  EXPECT_EQ(r["ending"]["stage"], "exited_after_stdin_closed");
  EXPECT_EQ(r["ending"]["exit_code"], 0);
  EXPECT_EQ(r["handshake"]["completed"], true);
  EXPECT_EQ(r["traffic"]["frames_to_sidecar"], 1001);
  EXPECT_EQ(r["traffic"]["frames_from_sidecar"], 1001);
  EXPECT_EQ(r["traffic"]["bytes_undelivered"], 0);
  EXPECT_EQ(r["discarded"]["count"], 0);
  // The sandbox's own report is inside, and says what was enforced.
  EXPECT_EQ(r["sandbox"]["outcome"], "completed") << r["sandbox"].dump();
  EXPECT_EQ(r["controls"]["filesystem_write"]["level"], "enforced");
  EXPECT_FALSE(process_with_marker_alive(marker));
}

TEST_F(SidecarTest, LaunchReportIsWrittenBeforeTheFirstFrameIsForwarded) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  sidecar_process p(args("echo", {"--report-fd", "3"}), fds[1]);
  ::close(fds[1]);
  handshake(p);
  // The first answer has reached the host: the launch report is already kept, in both places.
  json launched = read_json(report);
  ASSERT_TRUE(launched.is_object());
  EXPECT_EQ(launched["state"], "launched");
  EXPECT_GT(launched["pid"].get<int>(), 0);
  EXPECT_TRUE(launched["started_at"].is_string());
  EXPECT_EQ(launched["controls"]["filesystem_write"]["level"], "enforced");
  EXPECT_EQ(launched["controls"]["unix_sockets"]["level"], "enforced");
  EXPECT_TRUE(launched["policy"]["digest"].get<std::string>().starts_with("sha256:"));
  ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
  char buffer[65536];
  ssize_t n = ::read(fds[0], buffer, sizeof buffer);
  ASSERT_GT(n, 0) << "no launch report on the descriptor before the first frame";
  std::string first(buffer, static_cast<std::size_t>(n));
  EXPECT_EQ(json::parse(first.substr(0, first.find('\n')))["state"], "launched");
  p.close_stdin();
  EXPECT_EQ(p.wait(), 0) << p.stderr_text();
  ::fcntl(fds[0], F_SETFL, 0);
  n = ::read(fds[0], buffer, sizeof buffer);
  ASSERT_GT(n, 0);
  EXPECT_EQ(json::parse(std::string(buffer, static_cast<std::size_t>(n)))["state"], "ended");
  ::close(fds[0]);
}

TEST_F(SidecarTest, JunkOnStdoutIsNotForwardedAndIsRecorded) {
  sidecar_process p(args("junk"));
  handshake(p);  // the banner before it was not forwarded: the first line is the answer
  for (int id = 1; id <= 30; ++id) {
    ASSERT_TRUE(p.send(request(id, "echo", {{"n", id}})));
    auto line = p.read_line(20s);
    ASSERT_TRUE(line);
    json answer = json::parse(*line, nullptr, false);
    ASSERT_FALSE(answer.is_discarded()) << "junk reached the host: " << *line;
    ASSERT_EQ(answer["id"], id);
  }
  p.close_stdin();
  EXPECT_EQ(p.wait(), 0) << p.stderr_text();
  EXPECT_EQ(p.rest_of_stdout(), "");
  json r = read_json(report);
  EXPECT_EQ(r["discarded"]["count"], 4);  // the banner and three debug lines
  EXPECT_EQ(r["discarded"]["samples"][0]["reason"], "not JSON");
  EXPECT_NE(r["discarded"]["samples"][0]["text"].get<std::string>().find("banner"), std::string::npos);
  EXPECT_EQ(r["traffic"]["frames_from_sidecar"], 31);
  EXPECT_NE(p.stderr_text().find("were discarded"), std::string::npos) << p.stderr_text();
}

TEST_F(SidecarTest, UnansweredInitializeEndsWithHandshakeTimeout) {
  sidecar_process p(args("noinit", {"--handshake-timeout", "1"}));
  ASSERT_TRUE(p.send(request(0, "initialize", json::object())));
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(p.wait(), 124) << p.stderr_text();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 8s);
  EXPECT_NE(p.stderr_text().find("handshake_timeout: the sidecar did not answer initialize"), std::string::npos)
      << p.stderr_text();
  json r = read_json(report);
  EXPECT_EQ(r["ending"]["reason"], "handshake_timeout");
  EXPECT_EQ(r["handshake"]["completed"], false);
  // The sidecar exits at the end of its stdin, which cordon closed first.
  EXPECT_EQ(r["ending"]["stage"], "exited_after_stdin_closed");
  EXPECT_EQ(r["ending"]["exit_status"], 124);
  EXPECT_FALSE(process_with_marker_alive(marker));
}

TEST_F(SidecarTest, SidecarIgnoringSigtermIsKilledWithItsTree) {
  sidecar_process p(args("ignoreterm", {"--stdin-grace", "0.3", "--term-grace", "0.5"}));
  handshake(p);
  ASSERT_TRUE(process_with_marker_alive(marker));
  p.close_stdin();
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(p.wait(), 128 + 9) << p.stderr_text();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 8s);
  json r = read_json(report);
  EXPECT_EQ(r["ending"]["reason"], "host_closed");
  EXPECT_EQ(r["ending"]["stage"], "killed");
  EXPECT_EQ(r["ending"]["signal"], 9);
  EXPECT_FALSE(process_with_marker_alive(marker));
}

TEST_F(SidecarTest, SigtermToCordonIsAnInterruptedEnding) {
  sidecar_process p(args("echo"));
  handshake(p);
  ::kill(p.pid(), SIGTERM);
  EXPECT_EQ(p.wait(), 0) << p.stderr_text();  // the sidecar exits 0 at the end of its stdin
  json r = read_json(report);
  EXPECT_EQ(r["ending"]["reason"], "interrupted");
  EXPECT_EQ(r["ending"]["cordon_signal"], SIGTERM);
  EXPECT_EQ(r["ending"]["stage"], "exited_after_stdin_closed");
}

TEST_F(SidecarTest, SigtermToCordonEndsTheSessionWhileTheHostIsNotReading) {
  // A host that hangs (stops reading its end but keeps it open) while the
  // sidecar writes: cordon must still obey SIGTERM (docs/sidecars.md,
  // "Shutdown": "cordon got SIGINT, SIGTERM or SIGHUP (interrupted) — the
  // same steps follow"), not stay blocked writing to the host for ever.
  sidecar_process p(args("flood", {"--stdin-grace", "0.3", "--term-grace", "0.5"}));
  handshake(p);
  ASSERT_TRUE(p.wait_until_stdout_full(kFrameBytes)) << "the flood never filled the pipe to the host";  // nothing reads it
  ::kill(p.pid(), SIGTERM);
  bool exited = false;
  for (auto until = std::chrono::steady_clock::now() + 8s; !exited && std::chrono::steady_clock::now() < until;) {
    siginfo_t info{};  // WNOWAIT: p.wait() reaps it below
    exited = ::waitid(P_PID, static_cast<id_t>(p.pid()), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == p.pid();
    if (!exited) std::this_thread::sleep_for(50ms);
  }
  EXPECT_TRUE(exited) << "cordon ignored SIGTERM while blocked writing to the host";
  p.wait();  // (drains the host's pipe, which unblocks a cordon that was stuck)
  if (!exited) return;
  json r = read_json(report);
  EXPECT_EQ(r["ending"]["reason"], "interrupted");
  EXPECT_EQ(r["ending"]["cordon_signal"], SIGTERM);
  EXPECT_GT(r["traffic"]["bytes_undelivered"], 0) << "the frames the host never took are counted";
  EXPECT_FALSE(process_with_marker_alive(marker));
}

// A host that sends its last request, closes its input and reads the
// answer only later: the 3 MB the sidecar wrote meanwhile (over the 1 MiB
// backlog, so the sidecar had to wait) all arrive, in order.
TEST_F(SidecarTest, ASlowHostGetsEveryFrameAfterClosingItsInput) {
  sidecar_process p(args("burst"));
  handshake(p);
  ASSERT_TRUE(p.send(request(1, "burst", {{"n", 1}})));
  p.close_stdin();
  // Not reading until the sidecar is held up by this host: the pipe is full.
  ASSERT_TRUE(p.wait_until_stdout_full(kFrameBytes)) << "the burst never filled the pipe to the host";
  EXPECT_EQ(p.wait(), 0) << p.stderr_text();
  std::istringstream out(p.rest_of_stdout());
  int notifications = 0;
  json last;
  for (std::string line; std::getline(out, line);) {
    last = json::parse(line);
    if (last.value("method", "") == "progress") {
      ASSERT_EQ(last["params"]["n"], notifications++);
    }
  }
  EXPECT_EQ(notifications, 3000);
  EXPECT_EQ(last["id"], 1) << "the answer comes last";
  json r = read_json(report);
  EXPECT_EQ(r["ending"]["reason"], "host_closed");
  EXPECT_EQ(r["traffic"]["bytes_undelivered"], 0);
}

TEST_F(SidecarTest, LspFramesAreForwardedAndTheRestIsDiscarded) {
  sidecar_process p(args("lsp-echo", {"--protocol", "lsp"}));
  for (int id = 0; id < 5; ++id) {
    std::string body = json{{"jsonrpc", "2.0"}, {"id", id}, {"method", id == 0 ? "initialize" : "echo"},
                            {"params", {{"n", id}}}}
                           .dump();
    ASSERT_TRUE(p.send("Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body));
    auto header = p.read_line(20s);
    ASSERT_TRUE(header) << p.stderr_text();
    ASSERT_TRUE(header->starts_with("Content-Length: ")) << *header;
    std::size_t length = std::stoul(header->substr(16));
    ASSERT_EQ(p.read_line(), "\r");
    auto reply = p.read_bytes(length);
    ASSERT_TRUE(reply);
    EXPECT_EQ(json::parse(*reply)["id"], id);
  }
  p.close_stdin();
  EXPECT_EQ(p.wait(), 0) << p.stderr_text();
  json r = read_json(report);
  EXPECT_EQ(r["handshake"]["completed"], true);
  EXPECT_EQ(r["traffic"]["frames_from_sidecar"], 5);
  EXPECT_EQ(r["discarded"]["count"], 6);  // the banner and one stray line after each answer
  EXPECT_EQ(r["discarded"]["samples"][0]["reason"], "bytes outside a Content-Length frame");
}

TEST_F(SidecarTest, UnmetRequireRefusesBeforeAnythingStarts) {
  // With the host's network, named unix sockets under readable roots stay connectable: unix_sockets is partial.
  const std::string policy = dir.path() + "/host-network.json";
  std::ofstream(policy) << R"({"schema_version": 1, "network": {"mode": "unrestricted"}})";
  std::vector<std::string> a = args("echo", {"--require", "unix_sockets=enforced", "--require", "filesystem_write=enforced"});
  a[2] = policy;  // in place of the read-only profile
  sidecar_process p(a);
  EXPECT_EQ(p.wait(), 125);
  EXPECT_NE(p.stderr_text().find("enforcement_unavailable: the plan does not meet --require"), std::string::npos)
      << p.stderr_text();
  json r = read_json(report);
  EXPECT_EQ(r["state"], "refused");
  ASSERT_EQ(r["refusal"]["unmet"].size(), 1u) << r.dump();
  EXPECT_EQ(r["refusal"]["unmet"][0], "unix_sockets=partial (required enforced)");
  EXPECT_FALSE(r.contains("pid"));
}

TEST_F(SidecarTest, BadRequireIsAUsageError) {
  sidecar_process p(args("echo", {"--require", "network_deny=strong"}));
  EXPECT_EQ(p.wait(), 125);
  EXPECT_NE(p.stderr_text().find("usage_error: --require takes CONTROL=LEVEL"), std::string::npos) << p.stderr_text();
}

// Extension manifests: files verified before launch, grants judged by the host's rules.
class ExtensionTest : public SidecarTest {
 protected:
  std::string manifest(const std::string& digest, const std::string& extra = "") {
    return dir.write("ext.toml", "[extension]\nname = \"fake-ext\"\nversion = \"1.0\"\n"
                                 "command = [\"python3\", \"fake_sidecar.py\", \"echo\", \"" + marker + "\"]\n"
                                 "protocol = \"mcp\"\nsandbox_policy = \"read-only\"\n"
                                 "handshake_timeout_sec = 20\n\n"
                                 "[[file]]\npath = \"fake_sidecar.py\"\nsha256 = \"" + digest + "\"\n" + extra);
  }
  std::string script_digest() {
    // sha256sum on the host: the test must not trust cordon's own hashing.
    std::string out = dir.path() + "/digest";
    EXPECT_EQ(host_command({"/bin/sh", "-c", "sha256sum fake_sidecar.py | cut -c1-64 > digest"}, dir.path()), 0);
    std::ifstream in(out);
    std::string d;
    in >> d;
    return d;
  }
  std::vector<std::string> ext_args(const std::string& path, std::vector<std::string> extra = {}) {
    std::vector<std::string> a = {"sidecar", "--manifest", path, "--report", report, "--workspace", dir.path()};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }
};

TEST_F(ExtensionTest, VerifiedPackageRunsAndIsRecordedUntrusted) {
  sidecar_process p(ext_args(manifest(script_digest())));
  handshake(p);
  p.close_stdin();
  EXPECT_EQ(p.wait(), 0) << p.stderr_text();
  json r = read_json(report);
  EXPECT_EQ(r["extension"]["name"], "fake-ext");
  EXPECT_EQ(r["extension"]["integrity"], "verified");
  EXPECT_EQ(r["extension"]["trust"], "untrusted");
  EXPECT_EQ(r["command"][1], "fake_sidecar.py");
}

TEST_F(ExtensionTest, DigestMismatchRefusesTheLaunch) {
  std::string wrong(64, '0');
  sidecar_process p(ext_args(manifest(wrong)));
  EXPECT_EQ(p.wait(), 125);
  EXPECT_NE(p.stderr_text().find("fake_sidecar.py: sha256 is "), std::string::npos) << p.stderr_text();
  json r = read_json(report);
  EXPECT_EQ(r["state"], "refused");
  EXPECT_EQ(r["extension"]["integrity"], "mismatch");
  EXPECT_FALSE(process_with_marker_alive(marker));
}

TEST_F(ExtensionTest, GrantsNeedTheHostsRulesAndAreJudgedByThem) {
  const std::string grant = "\n[[grant]]\naction = \"filesystem_read\"\npaths = [\"/srv/notes\"]\ntool = \"notes.search\"\n";
  std::string path = manifest(script_digest(), grant);
  {
    sidecar_process p(ext_args(path));
    EXPECT_EQ(p.wait(), 125);
    EXPECT_NE(p.stderr_text().find("name the host's capability rules with --capability-rules"), std::string::npos)
        << p.stderr_text();
  }
  auto rules = [&](const std::string& decision) {
    return dir.write("rules-" + decision + ".json",
                     json{{"schema_version", 1},
                          {"name", "host-rules"},
                          {"rules", {{{"id", "notes"},
                                      {"decision", decision},
                                      {"reason", "notes are " + decision},
                                      {"actions", {"filesystem_read"}},
                                      {"paths", {"/srv/notes"}}}}}}
                         .dump());
  };
  {
    sidecar_process p(ext_args(path, {"--capability-rules", rules("deny")}));
    EXPECT_EQ(p.wait(), 125);
    EXPECT_NE(p.stderr_text().find("grant 1 (filesystem_read /srv/notes, tool notes.search): deny: notes are deny"),
              std::string::npos)
        << p.stderr_text();
    EXPECT_EQ(read_json(report)["extension"]["grants"][0]["decision"], "deny");
  }
  {
    sidecar_process p(ext_args(path, {"--capability-rules", rules("allow")}));
    handshake(p);
    p.close_stdin();
    EXPECT_EQ(p.wait(), 0) << p.stderr_text();
    json r = read_json(report);
    EXPECT_EQ(r["extension"]["grants"][0]["decision"], "allow");
    EXPECT_EQ(r["extension"]["capability_rules"]["name"], "host-rules");
  }
}

}  // namespace
}  // namespace cordon::test
