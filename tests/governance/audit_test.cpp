// Audit: the in-memory sink, the tamper-evident file, its verifier, and a
// writer killed with SIGKILL at random points.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "cordon/governance/audit.h"

namespace cordon::governance {
namespace {

namespace fs = std::filesystem;

struct temp_dir {
  std::string path;
  temp_dir() {
    char t[] = "/tmp/cordon-audit-XXXXXX";
    path = ::mkdtemp(t);
  }
  ~temp_dir() { fs::remove_all(path); }
};

audit_event numbered(int i, std::string name = "test.event") {
  auto e = make_audit_event("test", std::move(name), "ok");
  e.ids["n"] = std::to_string(i);
  e.attributes["text"] = "event " + std::to_string(i) + " \"quoted\" ünïcode";
  return e;
}

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

void write_lines(const std::string& path, const std::vector<std::string>& lines, bool last_newline = true) {
  std::ofstream out(path, std::ios::trunc);
  for (std::size_t i = 0; i < lines.size(); ++i) out << lines[i] << (i + 1 < lines.size() || last_newline ? "\n" : "");
}

std::string write_log(const std::string& dir, int count, jsonl_sink_options options = {}) {
  std::string path = dir + "/audit.jsonl";
  auto sink = jsonl_audit_sink::open(path, options);
  EXPECT_TRUE(sink) << sink.error_value().describe();
  for (int i = 1; i <= count; ++i) EXPECT_TRUE((*sink)->append(numbered(i)));
  return path;
}

TEST(Audit, MemorySink) {
  in_memory_audit_sink sink;
  ASSERT_TRUE(sink.append(numbered(1, "a")));
  ASSERT_TRUE(sink.append(numbered(2, "b")));
  EXPECT_EQ(sink.events().size(), 2u);
  EXPECT_EQ(sink.named("b").at(0).ids.at("n"), "2");
}

TEST(Audit, EventJsonEmbedsDocuments) {
  auto e = numbered(1);
  e.documents["report"] = R"({"schema":1,"backend":"x"})";
  e.documents["broken"] = "not json";
  auto text = audit_event_json(e);
  EXPECT_NE(text.find(R"("report":{"backend":"x","schema":1})"), std::string::npos) << text;
  EXPECT_NE(text.find(R"("broken":"not json")"), std::string::npos);
  EXPECT_EQ(e.timestamp.size(), 24u);  // 2026-12-01T08:00:00.123Z
  EXPECT_EQ(e.timestamp.back(), 'Z');
}

TEST(Audit, FileVerifiesAndContinuesItsChain) {
  temp_dir dir;
  auto path = write_log(dir.path, 5);
  auto v = verify_audit_log(path);
  ASSERT_TRUE(v);
  EXPECT_TRUE(v->ok) << v->problem;
  EXPECT_EQ(v->events, 5u);
  EXPECT_EQ(v->records[2].event.attributes.at("text"), "event 3 \"quoted\" ünïcode");
  {
    auto sink = jsonl_audit_sink::open(path);
    ASSERT_TRUE(sink);
    EXPECT_EQ((*sink)->last_sequence(), 5u);
    ASSERT_TRUE((*sink)->append(numbered(6)));
  }
  v = verify_audit_log(path);
  EXPECT_TRUE(v->ok) << v->problem;
  EXPECT_EQ(v->events, 6u);
  EXPECT_EQ(lines_of(path).size(), 6u);
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST(Audit, TamperingIsFoundAtTheRightLine) {
  temp_dir dir;
  auto path = write_log(dir.path, 5);
  const auto original = lines_of(path);
  auto edited = [&](std::size_t i, const std::string& from, const std::string& to) {
    auto l = original;
    auto at = l[i].find(from);
    EXPECT_NE(at, std::string::npos);
    l[i].replace(at, from.size(), to);
    return l;
  };
  struct row {
    const char* what;
    std::vector<std::string> lines;
    bool last_newline;
    std::size_t bad_line;
    const char* problem;
  };
  auto removed = original;
  removed.erase(removed.begin() + 2);
  auto swapped = original;
  std::swap(swapped[1], swapped[2]);
  auto duplicated = original;
  duplicated.insert(duplicated.begin() + 3, original[2]);
  auto truncated = original;
  truncated.back().resize(truncated.back().size() / 2);
  auto cut = original;
  cut.pop_back();
  std::vector<row> rows = {
      {"edited outcome", edited(2, "\"outcome\":\"ok\"", "\"outcome\":\"no\""), true, 3, "hash mismatch"},
      {"edited attribute", edited(3, "event 4", "event 9"), true, 4, "hash mismatch"},
      {"removed", removed, true, 3, "sequence"},
      {"reordered", swapped, true, 2, "sequence"},
      {"inserted", duplicated, true, 4, "sequence"},
      {"truncated mid-line", truncated, false, 5, "incomplete"},
      {"last record removed", cut, true, 5, "missing"},
      {"garbage line", edited(0, "{", "x{"), true, 1, "not an audit record"},
  };
  for (const auto& r : rows) {
    write_lines(path, r.lines, r.last_newline);
    auto v = verify_audit_log(path);
    ASSERT_TRUE(v);
    EXPECT_FALSE(v->ok) << r.what;
    EXPECT_EQ(v->bad_line, r.bad_line) << r.what << ": " << v->problem;
    EXPECT_NE(v->problem.find(r.problem), std::string::npos) << r.what << ": " << v->problem;
    // A sink refuses to append to such a log.
    auto sink = jsonl_audit_sink::open(path);
    EXPECT_FALSE(sink) << r.what;
  }
  write_lines(path, original);
  EXPECT_TRUE(verify_audit_log(path)->ok);
}

// A log with records and no head file: the chain alone cannot show that
// records were cut from its end, so a verifier that requires a head fails;
// one that does not is told there was none.
TEST(Audit, AHeadlessLogFailsWhenAHeadIsRequired) {
  temp_dir dir;
  auto path = write_log(dir.path, 3);
  ASSERT_TRUE(fs::remove(path + ".head"));
  audit_verify_options required;
  required.require_head = true;
  auto v = verify_audit_log(path, required);
  ASSERT_TRUE(v);
  EXPECT_FALSE(v->ok);
  EXPECT_EQ(v->bad_line, 4u);
  EXPECT_NE(v->problem.find("no head file"), std::string::npos) << v->problem;
  v = verify_audit_log(path);
  ASSERT_TRUE(v);
  EXPECT_TRUE(v->ok) << v->problem;
  EXPECT_FALSE(v->head_present);
  // An empty log needs no head.
  write_lines(path, {});
  EXPECT_TRUE(verify_audit_log(path, required)->ok);
}

// A keyed head (HMAC-SHA256 over its sequence number and hash): a writer
// without the key can rewrite and re-chain every record, but not make a head
// that verifies with the key.
TEST(Audit, AKeyedHeadStopsARechainWithoutTheKey) {
  temp_dir dir;
  jsonl_sink_options keyed;
  keyed.head_key = std::string(32, 'k');
  auto path = write_log(dir.path, 3, keyed);
  audit_verify_options with_key;
  with_key.head_key = keyed.head_key;
  auto v = verify_audit_log(path, with_key);
  ASSERT_TRUE(v);
  EXPECT_TRUE(v->ok) << v->problem;
  EXPECT_TRUE(v->head_keyed);
  // The wrong key.
  audit_verify_options wrong;
  wrong.head_key = std::string(32, 'x');
  v = verify_audit_log(path, wrong);
  EXPECT_FALSE(v->ok);
  EXPECT_NE(v->problem.find("MAC"), std::string::npos) << v->problem;
  // Re-chained by a writer without the key: a new, valid chain and an unkeyed head.
  ASSERT_TRUE(fs::remove(path));
  ASSERT_TRUE(fs::remove(path + ".head"));
  write_log(dir.path, 2);
  EXPECT_TRUE(verify_audit_log(path)->ok);
  v = verify_audit_log(path, with_key);
  EXPECT_FALSE(v->ok);
  EXPECT_NE(v->problem.find("not keyed"), std::string::npos) << v->problem;
  // The same writer signing with a key of its own.
  ASSERT_TRUE(fs::remove(path));
  ASSERT_TRUE(fs::remove(path + ".head"));
  jsonl_sink_options other;
  other.head_key = std::string(32, 'o');
  write_log(dir.path, 2, other);
  v = verify_audit_log(path, with_key);
  EXPECT_FALSE(v->ok);
  EXPECT_NE(v->problem.find("MAC"), std::string::npos) << v->problem;
  // Records appended after the keyed head are not vouched for by it.
  ASSERT_TRUE(fs::remove(path));
  ASSERT_TRUE(fs::remove(path + ".head"));
  write_log(dir.path, 2, keyed);
  auto head = fs::path(path + ".head");
  std::string saved;
  {
    std::ifstream in(head);
    std::getline(in, saved);
  }
  {
    auto sink = jsonl_audit_sink::open(path);
    ASSERT_TRUE(sink);
    ASSERT_TRUE((*sink)->append(numbered(3)));
  }
  std::ofstream(head, std::ios::trunc) << saved << "\n";
  v = verify_audit_log(path, with_key);
  EXPECT_FALSE(v->ok);
  EXPECT_EQ(v->bad_line, 3u);
  EXPECT_NE(v->problem.find("after the keyed head"), std::string::npos) << v->problem;
  // A key shorter than 16 bytes is refused by the sink.
  jsonl_sink_options short_key;
  short_key.head_key = "short";
  EXPECT_FALSE(jsonl_audit_sink::open(dir.path + "/other.jsonl", short_key));
}

TEST(Audit, InterruptedRunsAreListed) {
  temp_dir dir;
  std::string path = dir.path + "/audit.jsonl";
  auto sink = jsonl_audit_sink::open(path);
  ASSERT_TRUE(sink);
  for (auto [event, run] : {std::pair{"run.started", "r1"}, std::pair{"run.started", "r2"},
                            std::pair{"run.completed", "r2"}, std::pair{"run.started", "r3"},
                            std::pair{"run.timeout", "r3"}, std::pair{"run.started", "r4"}}) {
    auto e = make_audit_event("execution", event, "x");
    e.ids["run_id"] = run;
    ASSERT_TRUE((*sink)->append(e));
  }
  auto v = verify_audit_log(path);
  ASSERT_TRUE(v->ok);
  EXPECT_EQ(v->interrupted_runs, (std::vector<std::string>{"r1", "r4"}));
}

TEST(Audit, FailureIsStickyAndSaysWhy) {
  temp_dir dir;
  std::string path = dir.path + "/audit.jsonl";
  auto sink = jsonl_audit_sink::open(path);
  ASSERT_TRUE(sink);
  ASSERT_TRUE((*sink)->append(numbered(1)));
  fs::remove(path + ".head");
  fs::create_directory(path + ".head");  // the head can no longer be replaced
  auto first = (*sink)->append(numbered(2));
  ASSERT_FALSE(first);
  EXPECT_EQ(first.error_value().code, error_code::io_error);
  EXPECT_NE(first.error_value().message.find("head"), std::string::npos) << first.error_value().describe();
  fs::remove(path + ".head");
  auto second = (*sink)->append(numbered(3));  // even though the cause is gone
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error_value().message, first.error_value().message);
}

TEST(Audit, BatchedFsyncFlushes) {
  temp_dir dir;
  jsonl_sink_options options;
  options.fsync = fsync_policy::batched;
  options.batch_events = 1000;
  options.batch_interval = std::chrono::hours(1);
  std::string path = dir.path + "/audit.jsonl";
  auto sink = jsonl_audit_sink::open(path, options);
  ASSERT_TRUE(sink);
  for (int i = 1; i <= 10; ++i) ASSERT_TRUE((*sink)->append(numbered(i)));
  EXPECT_FALSE(fs::exists(path + ".head"));  // nothing synced yet
  EXPECT_EQ(verify_audit_log(path)->events, 10u);  // but every record is in the file
  ASSERT_TRUE((*sink)->flush());
  std::ifstream head(path + ".head");
  std::string text((std::istreambuf_iterator<char>(head)), {});
  EXPECT_NE(text.find("\"seq\":10"), std::string::npos) << text;
}

// A forked writer appends events and reports each acknowledged sequence
// number on a pipe; the parent kills it with SIGKILL at a random moment.
// Every acknowledged event must be in a log that still verifies, and the next
// writer continues the same file.
TEST(Audit, SurvivesKill9OfTheWriter) {
  temp_dir dir;
  std::string path = dir.path + "/audit.jsonl";
  std::mt19937 random(12345);
  std::uint64_t acknowledged = 0;
  for (int iteration = 0; iteration < 24; ++iteration) {
    jsonl_sink_options options;
    options.fsync = iteration % 2 == 0 ? fsync_policy::every_event : fsync_policy::batched;
    options.batch_events = 7;
    int acks[2];
    ASSERT_EQ(::pipe(acks), 0);
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(acks[0]);
      auto sink = jsonl_audit_sink::open(path, options);
      if (!sink) ::_exit(3);
      for (int i = 0;; ++i) {
        if (!(*sink)->append(numbered(i))) ::_exit(4);
        std::uint64_t seq = (*sink)->last_sequence();
        if (::write(acks[1], &seq, sizeof seq) != static_cast<ssize_t>(sizeof seq)) ::_exit(5);
      }
    }
    ::close(acks[1]);
    // The kill lands at a random point of the appending, once it goes on (the
    // first acknowledgement read): the random pause picks the point, the
    // assertions below hold wherever it falls.
    std::uint64_t seq = 0;
    ASSERT_EQ(::read(acks[0], &seq, sizeof seq), static_cast<ssize_t>(sizeof seq)) << "the writer never appended";
    acknowledged = std::max(acknowledged, seq);
    ::usleep(static_cast<useconds_t>(std::uniform_int_distribution<int>(2000, 40000)(random)));
    ::kill(pid, SIGKILL);
    while (::read(acks[0], &seq, sizeof seq) == static_cast<ssize_t>(sizeof seq)) acknowledged = std::max(acknowledged, seq);
    ::close(acks[0]);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the writer stopped by itself: status " << status;
    auto v = verify_audit_log(path);
    ASSERT_TRUE(v);
    ASSERT_TRUE(v->ok) << "iteration " << iteration << ": line " << v->bad_line << ": " << v->problem;
    ASSERT_GE(v->events, acknowledged) << "iteration " << iteration << ": an acknowledged event was lost";
  }
  EXPECT_GT(acknowledged, 0u);
}

// Two writers on one log (two `cordon exec --audit` at once): each sink must
// continue the chain the file holds, not the one it read at open, or the
// second must be refused. A forked chain is a log that no longer verifies.
TEST(Audit, TwoWritersDoNotForkTheChain) {
  temp_dir dir;
  std::string path = dir.path + "/audit.jsonl";
  auto first = jsonl_audit_sink::open(path);
  ASSERT_TRUE(first) << first.error_value().describe();
  ASSERT_TRUE((*first)->append(numbered(1)));
  auto second = jsonl_audit_sink::open(path);
  ASSERT_TRUE((*first)->append(numbered(2)));
  if (second) (void)(*second)->append(numbered(3));
  ASSERT_TRUE((*first)->append(numbered(4)));
  auto v = verify_audit_log(path);
  ASSERT_TRUE(v);
  EXPECT_TRUE(v->ok) << "line " << v->bad_line << ": " << v->problem;
  // And the log stays usable: a later writer can open it.
  EXPECT_TRUE(jsonl_audit_sink::open(path));
}

}  // namespace
}  // namespace cordon::governance
