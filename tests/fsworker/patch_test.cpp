// patch_test.cpp — the worker's pure parts in-process: both patch formats,
// hunk placement, the dry run's diff, glob matching, path normalization, the
// worker's own limits.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "fsworker/commit.h"
#include "fsworker/patch.h"
#include "fsworker/resolver.h"
#include "fsworker/walk.h"
#include "fsworker/worker.h"
#include "../sanitizer.h"

namespace cordon::fsworker {
namespace {

TEST(fs_patch, unified_diff_hunks_apply_at_an_offset) {
  auto files = parse_patch("diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -2,2 +2,2 @@\n b\n-c\n+C\n");
  ASSERT_TRUE(files);
  ASSERT_EQ(files->size(), 1u);
  EXPECT_EQ((*files)[0].path, "f");
  // Two lines were inserted above since the diff was made: found at offset 2.
  auto out = apply_hunks("x\ny\na\nb\nc\nd\n", (*files)[0].hunks, "f");
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, "x\ny\na\nb\nC\nd\n");
}

TEST(fs_patch, unified_diff_add_remove_and_no_newline_marker) {
  auto files = parse_patch("--- /dev/null\n+++ b/n\n@@ -0,0 +1,2 @@\n+1\n+2\n\\ No newline at end of file\n"
                           "--- a/old\n+++ /dev/null\n@@ -1 +0,0 @@\n-gone\n");
  ASSERT_TRUE(files);
  ASSERT_EQ(files->size(), 2u);
  EXPECT_EQ((*files)[0].what, patch_file::kind::add);
  EXPECT_EQ((*files)[0].content, "1\n2");
  EXPECT_EQ((*files)[1].what, patch_file::kind::remove);
}

TEST(fs_patch, agent_format_with_headers_move_and_end_of_file) {
  auto files = parse_patch(
      "*** Begin Patch\n*** Update File: a.py\n*** Move to: b.py\n@@ def f():\n-    return 1\n+    return 2\n"
      "@@\n-x = 1\n+x = 2\n*** End of File\n*** End Patch\n");
  ASSERT_TRUE(files) << files.error().message;
  const auto& f = (*files)[0];
  EXPECT_EQ(f.move_to, "b.py");
  ASSERT_EQ(f.hunks.size(), 2u);
  auto out = apply_hunks("def g():\n    return 1\ndef f():\n    return 1\nx = 1\ny = 0\nx = 1\n", f.hunks, "a.py");
  ASSERT_TRUE(out) << out.error().message;
  // The header picks the second "return 1"; End of File the last "x = 1".
  EXPECT_EQ(*out, "def g():\n    return 1\ndef f():\n    return 2\nx = 1\ny = 0\nx = 2\n");
}

TEST(fs_patch, a_hunk_that_does_not_apply_is_a_conflict_naming_it) {
  auto files = parse_patch("*** Begin Patch\n*** Update File: a\n@@\n-nope\n+yes\n*** End Patch\n");
  ASSERT_TRUE(files);
  auto out = apply_hunks("a\nb\n", (*files)[0].hunks, "a");
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().code, "patch_conflict");
  EXPECT_NE(out.error().message.find("hunk 1"), std::string::npos);
}

TEST(fs_patch, malformed_patches_are_refused) {
  for (const char* bad : {"", "hello\n", "*** Begin Patch\n*** Update File: a\n@@\n-x\n",
                          "*** Begin Patch\n*** Add File: a\nno plus\n*** End Patch\n",
                          "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n",
                          // Line numbers beyond any file (start + 1 overflowed a long) or negative.
                          "--- a/f\n+++ b/f\n@@ -9223372036854775807,0 +1 @@\n+x\n",
                          "--- a/f\n+++ b/f\n@@ -99999999999999999999 +1 @@\n-a\n+x\n",
                          "--- a/f\n+++ b/f\n@@ --5,1 +1 @@\n-a\n+x\n"}) {
    SCOPED_TRACE(bad);
    auto files = parse_patch(bad);
    ASSERT_FALSE(files);
    EXPECT_EQ(files.error().code, "patch_invalid");
  }
}

TEST(fs_patch, unified_diff_of_a_change_round_trips) {
  const std::string a = "1\n2\n3\n4\n5\n6\n7\n8\n", b = "1\n2\n3\n4\nfive\n6\n7\n8\n";
  const std::string diff = unified_diff("/w/f", a, "/w/f", b, true, true);
  EXPECT_EQ(diff, "--- a/w/f\n+++ b/w/f\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n");
  auto files = parse_patch(diff);
  ASSERT_TRUE(files);
  auto out = apply_hunks(a, (*files)[0].hunks, "f");
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, b);
}

TEST(fs_patch, a_hunk_that_appends_to_a_last_line_without_newline_ends_the_file_with_one) {
  // "a" has no final newline; the patch replaces that line with "a\n" and adds
  // "b\n" (no "\ No newline" marker on the new side): the result ends in "\n",
  // as patch(1) and git apply make it.
  auto files = parse_patch("--- a/f\n+++ b/f\n@@ -1 +1,2 @@\n-a\n\\ No newline at end of file\n+a\n+b\n");
  ASSERT_TRUE(files);
  auto out = apply_hunks("a", (*files)[0].hunks, "f");
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, "a\nb\n");
  // The dry run's own diff of that change round-trips too.
  const std::string diff = unified_diff("/w/f", "a", "/w/f", "a\nb\n", true, true);
  files = parse_patch(diff);
  ASSERT_TRUE(files) << diff;
  out = apply_hunks("a", (*files)[0].hunks, "f");
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, "a\nb\n") << diff;
}

TEST(fs_glob, components_stars_classes_and_braces) {
  EXPECT_TRUE(glob_matches("*.txt", "a.txt"));
  EXPECT_FALSE(glob_matches("*.txt", "d/a.txt"));
  EXPECT_TRUE(glob_matches("**/*.txt", "a.txt"));
  EXPECT_TRUE(glob_matches("**/*.txt", "d/e/a.txt"));
  EXPECT_TRUE(glob_matches("src/**", "src/a/b"));
  EXPECT_TRUE(glob_matches("[a-c]?.md", "bx.md"));
  EXPECT_FALSE(glob_matches("[!a-c]?.md", "bx.md"));
  EXPECT_EQ(expand_braces("*.{ts,tsx}"), (std::vector<std::string>{"*.ts", "*.tsx"}));
  // A long run of stars against a long name stays quick (one backtracking point).
  EXPECT_FALSE(glob_matches(std::string(100, '*') + "b", std::string(200, 'a')));
}

TEST(fs_paths, normalization_refuses_dot_dot_nul_and_non_utf8) {
  EXPECT_EQ(normalize_path("a//./b/", "/w").value(), "/w/a/b");
  EXPECT_EQ(normalize_path("a/../b", "/w").error().code, "path_escape");
  EXPECT_EQ(normalize_path(std::string("a\0b", 3), "/w").error().code, "path_invalid");
  EXPECT_EQ(normalize_path("\xff", "/w").error().code, "non_utf8");
  EXPECT_EQ(normalize_path("\xc0\xaf", "/w").error().code, "non_utf8");  // overlong "/"
  EXPECT_TRUE(path_within("/w/a", "/w"));
  EXPECT_FALSE(path_within("/wx", "/w"));
}

// A file read after its fstat may hold more than the fstat said (something
// in the sandbox appends to it): read_all stops past the limit instead of
// reading it all (before, a file growing while read had no bound).
TEST(ReadAll, AFileThatGrewPastTheLimitIsRefused) {
  char path[] = "/tmp/cordon-read-all-XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  const std::string content(100000, 'x');
  ASSERT_EQ(::write(fd, content.data(), content.size()), static_cast<ssize_t>(content.size()));
  ::lseek(fd, 0, SEEK_SET);
  auto grown = read_all(fd, 10, 50000, path);  // the fstat said 10 bytes
  ASSERT_FALSE(grown);
  EXPECT_EQ(grown.error().code, "file_too_large");
  ::lseek(fd, 0, SEEK_SET);
  auto whole = read_all(fd, 10, content.size(), path);  // exactly at the limit: read
  ASSERT_TRUE(whole) << whole.error().message;
  EXPECT_EQ(*whole, content);
  ::close(fd);
  ::unlink(path);
}

}  // namespace
}  // namespace cordon::fsworker

namespace cordon::fsworker {
namespace {

TEST(fs_worker_limits, a_request_above_the_cap_and_a_passed_deadline_are_refused_with_their_codes) {
  // The worker's own limits, in-process (the sandboxed runs are in
  // acceptance_test.cpp and behaviour_test.cpp).
  char tmpl[] = "/var/tmp/cordon-fsw-limits-XXXXXX";
  const std::string dir = ::mkdtemp(tmpl);
  std::filesystem::create_directories(dir + "/a/b");
  worker_config config;
  config.workspace = dir;
  config.mounts = {{"rw-bind", dir, "writable"}};
  config.limits.max_request_bytes = 100;
  config.limits.deadline = std::chrono::milliseconds(0);
  auto paths = resolver::open(config);
  ASSERT_TRUE(paths);
  worker w(std::move(*paths), config.limits);
  const auto walk = nlohmann::json::parse(w.handle_line(R"({"id":1,"op":"glob","pattern":"**/*"})"));
  EXPECT_EQ(walk["error"]["code"], "deadline_exceeded");
  EXPECT_EQ(nlohmann::json::parse(w.too_large())["error"]["code"], "request_too_large");
  EXPECT_EQ(nlohmann::json::parse(w.handle_line(R"({"op":"nope"})"))["error"]["code"], "unknown_op");
  EXPECT_EQ(nlohmann::json::parse(w.handle_line("{\"op\":\"read\",\"path\":\"\xff\"}"))["error"]["code"], "non_utf8");
  const auto report = nlohmann::json::parse(w.final_report());
  EXPECT_EQ(report["report"]["failed"], 4);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace cordon::fsworker

namespace cordon::fsworker {
namespace {

// The worker in-process over a scratch workspace (one writable root).
class fs_worker_in_process : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/var/tmp/cordon-fsw-inproc-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
    config_.workspace = dir_;
    config_.mounts = {{"rw-bind", dir_, "writable"}};
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  worker make() {
    auto paths = resolver::open(config_);
    EXPECT_TRUE(paths);
    return worker(std::move(*paths), config_.limits);
  }
  void put(const std::string& name, const std::string& text) {
    std::ofstream(dir_ + "/" + name, std::ios::binary) << text;
  }
  std::string get(const std::string& name) {
    std::ifstream in(dir_ + "/" + name, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  static nlohmann::json ask(worker& w, const std::string& line) { return nlohmann::json::parse(w.handle_line(line)); }
  // Caps the data segment (RLIMIT_DATA): in a death test's child only.
  // Under a sanitizer the data segment holds its shadow and quarantine, so no
  // such limit can be set: the refusal is still checked there, and the g++
  // tree proves that it comes before the result is built.
  static void limit_memory(std::uint64_t bytes) {
    if (CORDON_TEST_UNDER_SANITIZER) return;
    const rlimit r{bytes, bytes};
    ASSERT_EQ(::setrlimit(RLIMIT_DATA, &r), 0);
  }

  std::string dir_;
  worker_config config_;
};

TEST_F(fs_worker_in_process, a_read_range_ending_after_a_whole_multibyte_character_returns_it) {
  // docs/fs-worker.md: "a range that ends inside a UTF-8 sequence stops
  // before it". A range that ends right after a complete "é" or "€" does not
  // end inside one: the character is returned.
  put("u.txt", "\xc3\xa9" "abc");
  put("e.txt", "\xe2\x82\xac" "x");
  worker w = make();
  auto r = ask(w, R"({"op":"read","path":"u.txt","length":2})");
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  EXPECT_EQ(r["result"]["content"], "\xc3\xa9");
  EXPECT_EQ(r["result"]["bytes"], 2);
  r = ask(w, R"({"op":"read","path":"e.txt","length":3})");
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  EXPECT_EQ(r["result"]["content"], "\xe2\x82\xac");
  EXPECT_EQ(r["result"]["bytes"], 3);
  // A range that does end inside a sequence still stops before it.
  r = ask(w, R"({"op":"read","path":"e.txt","length":2})");
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  EXPECT_EQ(r["result"]["bytes"], 0);
}

TEST_F(fs_worker_in_process, a_deeply_nested_request_id_is_answered_not_a_crash) {
  // The id is echoed; nested a million levels deep, echoing it (a recursive
  // dump and copy) overflowed the worker's stack.
  const std::string id = std::string(1000000, '[') + std::string(1000000, ']');
  const std::string line = R"({"op":"stat","path":".","id":)" + id + "}";
  EXPECT_EXIT(
      {
        worker w = make();
        const auto r = nlohmann::json::parse(w.handle_line(line));
        std::_Exit(r.contains("ok") ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(fs_worker_in_process, format_json_of_a_deeply_nested_document_is_refused_not_a_crash) {
  put("deep.json", std::string(1000000, '[') + std::string(1000000, ']'));
  EXPECT_EXIT(
      {
        worker w = make();
        const auto r = nlohmann::json::parse(w.handle_line(R"({"op":"format_json","path":"deep.json","indent":0})"));
        std::_Exit(r["ok"].get<bool>() ? 1 : 0);
      },
      ::testing::ExitedWithCode(0), "");
  EXPECT_EQ(get("deep.json").size(), 2000000u);
}

TEST_F(fs_worker_in_process, an_edit_whose_result_exceeds_the_file_limit_is_refused_before_it_is_built) {
  // 1 MiB of "a", each replaced by 1 KiB: a 1 GiB result, far above the 64 MiB
  // file limit. It is file_too_large, decided without building the result
  // (here the worker has 256 MiB of data segment).
  put("a.txt", std::string(1 << 20, 'a'));
  const std::string line =
      R"({"op":"edit","path":"a.txt","old_string":"a","expected_occurrences":1048576,"new_string":")" +
      std::string(1024, 'b') + "\"}";
  EXPECT_EXIT(
      {
        limit_memory(256u << 20);
        worker w = make();
        const std::string out = w.handle_line(line);
        const auto r = nlohmann::json::parse(out);
        const bool refused = !r["ok"].get<bool>() && r["error"]["code"] == "file_too_large";
        if (!refused) std::fprintf(stderr, "%s\n", out.substr(0, 300).c_str());
        std::_Exit(refused ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
  EXPECT_EQ(get("a.txt"), std::string(1 << 20, 'a'));
}

TEST_F(fs_worker_in_process, format_json_whose_output_exceeds_the_file_limit_is_refused_before_it_is_built) {
  // 200 KB of arrays nested 100 deep, indented by 16: about 165 MB pretty-printed,
  // above the 64 MiB file limit: file_too_large, without building it (256 MiB of data segment).
  std::string chain = std::string(100, '[') + std::string(100, ']');
  std::string doc = "[";
  for (int i = 0; i < 1000; ++i) doc += (i ? "," : "") + chain;
  doc += "]";
  put("wide.json", doc);
  EXPECT_EXIT(
      {
        limit_memory(256u << 20);
        worker w = make();
        const std::string out = w.handle_line(R"({"op":"format_json","path":"wide.json","indent":16})");
        const auto r = nlohmann::json::parse(out);
        const bool refused = !r["ok"].get<bool>() && r["error"]["code"] == "file_too_large";
        if (!refused) std::fprintf(stderr, "%s\n", out.substr(0, 300).c_str());
        std::_Exit(refused ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
  EXPECT_EQ(get("wide.json"), doc);
}

}  // namespace
}  // namespace cordon::fsworker
