// behaviour_test.cpp — the worker's guarantees beyond path refusals, in a
// real sandbox: apply_patch is all-or-nothing across files, a hostile
// regular expression returns within the deadline, edits are refused when
// stale or ambiguous, a write keeps the file's mode, the final report lists
// every write (docs/fs-worker.md).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "fs_worker_support.h"

namespace cordon::fsworker_test {
namespace {

class worker_behaviour : public ::testing::Test {
 protected:
  void SetUp() override {
    dirs_ = make_dirs();
    write_text(dirs_.ws + "/one.txt", "alpha\nbeta\ngamma\n");
    write_text(dirs_.ws + "/two.txt", "red\ngreen\nblue\n");
    write_text(dirs_.ws + "/three.txt", "north\nsouth\n");
    write_text(dirs_.ws + "/.git/hooks/pre-commit", "#!/bin/sh\n", 0755);
    write_text(dirs_.ws + "/.git/config", "[core]\n");
    write_text(dirs_.ws + "/.git/HEAD", "ref: refs/heads/main\n");
    write_text(dirs_.ws + "/secret/key", "k\n");  // the plan denies {workspace}/secret
    plan_ = compile_plan(dirs_.ws);
    ASSERT_NE(plan_, nullptr);
    fs_worker_options options;
    options.request_deadline = std::chrono::milliseconds(2000);
    options.max_request_bytes = 1 << 20;
    auto started = fs_worker::start(*plan_, options);
    ASSERT_TRUE(started) << started.error_value().describe();
    worker_ = std::make_unique<fs_worker>(std::move(*started));
  }
  void TearDown() override {
    if (worker_) worker_->finish();
    remove_tree(dirs_.base);
  }
  std::string snapshot() const {
    return read_text(dirs_.ws + "/one.txt") + "|" + read_text(dirs_.ws + "/two.txt") + "|" +
           read_text(dirs_.ws + "/three.txt");
  }
  nlohmann::json patch(const std::string& text, bool dry_run = false) {
    return call(*worker_, R"({"op":"apply_patch","dry_run":)" + std::string(dry_run ? "true" : "false") +
                              R"(,"patch":)" + json_string(text) + "}");
  }

  fixture_dirs dirs_;
  std::shared_ptr<const sandbox_plan> plan_;
  std::unique_ptr<fs_worker> worker_;
};

TEST_F(worker_behaviour, apply_patch_failing_in_the_third_of_three_files_changes_none) {
  const std::string before = snapshot();
  // Agent format: the third hunk's context is not in three.txt.
  auto r = patch(
      "*** Begin Patch\n*** Update File: one.txt\n@@\n-beta\n+BETA\n*** Update File: two.txt\n@@\n-green\n+GREEN\n"
      "*** Update File: three.txt\n@@\n-east\n+EAST\n*** End Patch\n");
  ASSERT_FALSE(r["ok"].get<bool>()) << r.dump();
  EXPECT_EQ(r["error"]["code"], "patch_conflict");
  EXPECT_EQ(snapshot(), before);
  // Unified diff: the third file is protected (.git/hooks), refused at commit.
  r = patch(
      "--- a/one.txt\n+++ b/one.txt\n@@ -1,3 +1,3 @@\n alpha\n-beta\n+BETA\n gamma\n"
      "--- a/two.txt\n+++ b/two.txt\n@@ -1,3 +1,3 @@\n red\n-green\n+GREEN\n blue\n"
      "--- a/.git/hooks/pre-commit\n+++ b/.git/hooks/pre-commit\n@@ -1 +1 @@\n-#!/bin/sh\n+#!/bin/sh -x\n");
  ASSERT_FALSE(r["ok"].get<bool>()) << r.dump();
  EXPECT_EQ(r["error"]["code"], "protected");
  EXPECT_EQ(snapshot(), before);
  EXPECT_EQ(read_text(dirs_.ws + "/.git/hooks/pre-commit"), "#!/bin/sh\n");
  // No temporary file is left behind either.
  for (const auto& e : std::filesystem::directory_iterator(dirs_.ws)) {
    EXPECT_EQ(e.path().filename().string().rfind(".cordon-fs-", 0), std::string::npos) << e.path();
  }
  // The same patch without the failing file applies to both.
  r = patch(
      "--- a/one.txt\n+++ b/one.txt\n@@ -1,3 +1,3 @@\n alpha\n-beta\n+BETA\n gamma\n"
      "--- a/two.txt\n+++ b/two.txt\n@@ -1,3 +1,3 @@\n red\n-green\n+GREEN\n blue\n");
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  EXPECT_EQ(read_text(dirs_.ws + "/one.txt"), "alpha\nBETA\ngamma\n");
  EXPECT_EQ(read_text(dirs_.ws + "/two.txt"), "red\nGREEN\nblue\n");
}

TEST_F(worker_behaviour, apply_patch_dry_run_returns_the_diff_and_writes_nothing) {
  const std::string before = snapshot();
  auto r = patch("*** Begin Patch\n*** Update File: one.txt\n@@\n alpha\n-beta\n+BETA\n*** Add File: new/n.txt\n+hi\n"
                 "*** Delete File: three.txt\n*** End Patch\n",
                 true);
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  const std::string diff = r["result"]["diff"];
  EXPECT_NE(diff.find("-beta\n+BETA\n"), std::string::npos) << diff;
  EXPECT_NE(diff.find("+++ b" + dirs_.ws + "/new/n.txt"), std::string::npos) << diff;
  EXPECT_NE(diff.find("+++ /dev/null"), std::string::npos) << diff;
  EXPECT_EQ(r["touched"].size(), 3u);
  EXPECT_EQ(snapshot(), before);
  EXPECT_FALSE(std::filesystem::exists(dirs_.ws + "/new"));
  // The real run: a move, an add, a delete.
  r = patch("*** Begin Patch\n*** Update File: one.txt\n*** Move to: moved/one.txt\n@@\n-beta\n+BETA\n"
            "*** Delete File: three.txt\n*** End Patch\n");
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  EXPECT_FALSE(std::filesystem::exists(dirs_.ws + "/one.txt"));
  EXPECT_FALSE(std::filesystem::exists(dirs_.ws + "/three.txt"));
  EXPECT_EQ(read_text(dirs_.ws + "/moved/one.txt"), "alpha\nBETA\ngamma\n");
}

TEST_F(worker_behaviour, a_hostile_regular_expression_returns_within_the_deadline) {
  // Catastrophic for a backtracking engine: (a+)+$ against "aaaa...!".
  write_text(dirs_.ws + "/hostile.txt", std::string(200000, 'a') + "!\n");
  for (const char* pattern : {"(a+)+$", "(a|aa)+$", "(a*)*b", "^(a|a?)+$"}) {
    SCOPED_TRACE(pattern);
    const auto start = std::chrono::steady_clock::now();
    auto r = call(*worker_, R"({"op":"grep","path":"hostile.txt","pattern":)" + json_string(pattern) + "}");
    const auto took = std::chrono::steady_clock::now() - start;
    EXPECT_TRUE(r["ok"].get<bool>()) << r.dump();
    EXPECT_LT(took, std::chrono::milliseconds(2000));
  }
  // A pattern too large for RE2's memory bound is refused, not run.
  auto r = call(*worker_, R"({"op":"grep","path":".","pattern":"((a{100}){100}){100}"})");
  ASSERT_FALSE(r["ok"].get<bool>());
  EXPECT_EQ(r["error"]["code"], "invalid_pattern");
}

TEST_F(worker_behaviour, a_grep_glob_filter_is_bounded_like_a_glob_pattern) {
  // Braces nested 200,000 deep: expanding them recursed once per level and
  // overflowed the worker's stack (found by the attack pass, unconfirmed then).
  const std::string nested = std::string(200000, '{') + "a" + std::string(200000, '}');
  auto r = call(*worker_, R"({"op":"grep","path":".","pattern":"alpha","glob":)" + json_string(nested) + "}");
  ASSERT_FALSE(r["ok"].get<bool>()) << r.dump().substr(0, 300);
  EXPECT_EQ(r["error"]["code"], "invalid_pattern");
  // The worker is still there, and a filter of ordinary size works.
  r = call(*worker_, R"({"op":"grep","path":".","pattern":"alpha","glob":"*.{txt,md}"})");
  EXPECT_TRUE(r["ok"].get<bool>()) << r.dump();
}

TEST_F(worker_behaviour, edit_refuses_stale_content_and_a_wrong_occurrence_count) {
  auto r = call(*worker_, R"({"op":"edit","path":"one.txt","old_string":"a","new_string":"A"})");
  ASSERT_FALSE(r["ok"].get<bool>());
  EXPECT_EQ(r["error"]["code"], "occurrence_mismatch");
  r = call(*worker_, R"({"op":"edit","path":"one.txt","old_string":"beta","new_string":"B","expected_sha256":"00"})");
  ASSERT_FALSE(r["ok"].get<bool>());
  EXPECT_EQ(r["error"]["code"], "stale_content");
  r = call(*worker_, R"({"op":"edit","path":"one.txt","old_string":"a","new_string":"A","expected_occurrences":5})");
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  EXPECT_EQ(read_text(dirs_.ws + "/one.txt"), "AlphA\nbetA\ngAmmA\n");
  // A misspelt field is an error, not ignored.
  r = call(*worker_, R"({"op":"edit","path":"one.txt","old_string":"A","new_string":"a","expected_occurences":5})");
  ASSERT_FALSE(r["ok"].get<bool>());
  EXPECT_EQ(r["error"]["code"], "invalid_request");
}

TEST_F(worker_behaviour, write_is_atomic_keeps_the_mode_and_the_report_lists_every_write) {
  write_text(dirs_.ws + "/script.sh", "echo 1\n", 0750);
  auto r = call(*worker_, R"({"op":"write","path":"script.sh","content":"echo 2\n"})");
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  struct stat st {};
  ASSERT_EQ(::stat((dirs_.ws + "/script.sh").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0750u);
  EXPECT_EQ(read_text(dirs_.ws + "/script.sh"), "echo 2\n");
  r = call(*worker_, R"({"op":"write","path":"fresh.txt","content":"x","mode":"0600","create_only":true})");
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  r = call(*worker_, R"({"op":"write","path":"fresh.txt","content":"y","create_only":true})");
  EXPECT_EQ(r["error"]["code"], "already_exists");
  // A request above the size cap is refused; the worker goes on.
  auto big = worker_->call(R"({"op":"write","path":"big.txt","content":")" + std::string(2 << 20, 'x') + "\"}");
  EXPECT_FALSE(big);
  r = call(*worker_, R"({"op":"read","path":"fresh.txt"})");
  EXPECT_EQ(r["result"]["content"], "x");
  auto report = worker_->finish();
  worker_.reset();
  const auto j = nlohmann::json::parse(report.report_json);
  ASSERT_EQ(j["report"]["writes"].size(), 2u) << report.report_json;
  EXPECT_EQ(j["report"]["writes"][0]["path"], dirs_.ws + "/script.sh");
  EXPECT_EQ(j["report"]["writes"][0]["action"], "replaced");
  EXPECT_EQ(j["report"]["writes"][1]["action"], "created");
  EXPECT_FALSE(report.run.failure);
}

TEST_F(worker_behaviour, the_worker_gets_no_host_environment) {
  // The client passes no host variable, not even those the policy would let
  // through (LANG, TERM): the worker's environment is the policy's `set` only.
  ::setenv("LANG", "C.UTF-8", 1);
  ::setenv("CORDON_FSW_SECRET", "hunter2", 1);
  auto report = worker_->finish();
  worker_.reset();
  ASSERT_TRUE(report.run.outcome) << report.run.json;
  std::vector<std::string> names = report.run.outcome->environment_names;
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"HOME", "PATH", "TMPDIR"}));
  ::unsetenv("CORDON_FSW_SECRET");
}

TEST_F(worker_behaviour, glob_honours_gitignore_and_its_cap) {
  write_text(dirs_.ws + "/.gitignore", "build/\n*.log\n!keep.log\n");
  write_text(dirs_.ws + "/build/out.txt", "x");
  write_text(dirs_.ws + "/a.log", "x");
  write_text(dirs_.ws + "/keep.log", "x");
  write_text(dirs_.ws + "/src/m.cpp", "x");
  auto r = call(*worker_, R"({"op":"glob","pattern":"**/*.{txt,log,cpp}","gitignore":true})");
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  std::vector<std::string> got = r["result"]["matches"];
  std::vector<std::string> want = {dirs_.ws + "/keep.log", dirs_.ws + "/one.txt", dirs_.ws + "/src/m.cpp",
                                   dirs_.ws + "/three.txt", dirs_.ws + "/two.txt"};
  EXPECT_EQ(got, want) << r.dump();
  r = call(*worker_, R"({"op":"glob","pattern":"**/*","max_results":2})");
  EXPECT_EQ(r["result"]["matches"].size(), 2u);
  EXPECT_TRUE(r["result"]["truncated"].get<bool>());
}

TEST_F(worker_behaviour, a_fifo_is_not_a_file_and_does_not_stall_the_worker) {
  // A command in the sandbox can make a FIFO in the workspace. Opening it
  // for reading blocks until a writer comes: read, edit and grep of it must
  // refuse it (not_a_file, or skip it) instead of hanging the worker until
  // the client kills it.
  ASSERT_EQ(::mkfifo((dirs_.ws + "/pipe").c_str(), 0644), 0);
  for (const char* request : {R"({"op":"read","path":"pipe"})", R"({"op":"grep","pattern":"x","path":"pipe"})",
                              R"({"op":"edit","path":"pipe","old_string":"a","new_string":"b"})",
                              R"({"op":"format_json","path":"pipe"})"}) {
    SCOPED_TRACE(request);
    auto r = call(*worker_, request);
    ASSERT_FALSE(r["ok"].get<bool>()) << r.dump();
    EXPECT_EQ(r["error"]["code"], "not_a_file") << r.dump();
  }
  auto r = call(*worker_, R"({"op":"read","path":"one.txt"})");
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  EXPECT_EQ(r["result"]["content"], "alpha\nbeta\ngamma\n");
}

}  // namespace
}  // namespace cordon::fsworker_test

namespace cordon::fsworker_test {
namespace {

TEST(cordon_fs_cli, relays_requests_and_ends_with_the_report) {
  // `cordon fs` for hosts in any language: JSON lines in and out.
  const char* cli_env = std::getenv("CORDON_CLI");
  const std::string cli = cli_env != nullptr ? cli_env : CORDON_CLI;
  const std::string worker = find_fs_worker("");
  ASSERT_FALSE(worker.empty());
  auto dirs = make_dirs();
  write_text(dirs.ws + "/a.txt", "one\n");
  write_text(dirs.base + "/in.jsonl",
             "{\"id\":1,\"op\":\"read\",\"path\":\"a.txt\"}\n"
             "{\"id\":2,\"op\":\"write\",\"path\":\"b.txt\",\"content\":\"two\\n\"}\n"
             "{\"id\":3,\"op\":\"read\",\"path\":\"" + dirs.outside + "/x\"}\n");
  const std::string command = "'" + cli + "' fs --workspace '" + dirs.ws + "' --worker '" + worker + "' < '" +
                              dirs.base + "/in.jsonl' > '" + dirs.base + "/out.jsonl' 2> '" + dirs.base + "/err.txt'";
  ASSERT_EQ(std::system(command.c_str()), 0) << read_text(dirs.base + "/err.txt");
  std::vector<nlohmann::json> lines;
  std::istringstream out(read_text(dirs.base + "/out.jsonl"));
  for (std::string line; std::getline(out, line);) lines.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0]["result"]["content"], "one\n");
  EXPECT_TRUE(lines[1]["ok"].get<bool>());
  EXPECT_EQ(lines[2]["error"]["code"], "outside_roots");
  EXPECT_EQ(lines[3]["report"]["writes"][0]["path"], dirs.ws + "/b.txt");
  EXPECT_EQ(read_text(dirs.ws + "/b.txt"), "two\n");
  remove_tree(dirs.base);
}

}  // namespace
}  // namespace cordon::fsworker_test
