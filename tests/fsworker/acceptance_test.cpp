// acceptance_test.cpp — every operation of the filesystem worker, run in a
// real sandbox (the workspace-write profile), against each hostile path
// shape: a symlink out, a hard link to a file outside, "..", a denied path,
// a protected .git/hooks file, a path outside every root, a case variant and
// a name that is not UTF-8. Each is refused with its code; the same
// operation on an allowed path works (docs/fs-worker.md, "Error codes").
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <map>

#include "fs_worker_support.h"

namespace cordon::fsworker_test {
namespace {

enum class shape { allowed, symlink, hard_link, dot_dot, denied, protected_hook, outside, case_variant, non_utf8 };

const char* shape_name(shape s) {
  switch (s) {
    case shape::allowed: return "allowed";
    case shape::symlink: return "symlink";
    case shape::hard_link: return "hard_link";
    case shape::dot_dot: return "dot_dot";
    case shape::denied: return "denied";
    case shape::protected_hook: return "protected_hook";
    case shape::outside: return "outside";
    case shape::case_variant: return "case_variant";
    case shape::non_utf8: return "non_utf8";
  }
  return "?";
}

constexpr shape all_shapes[] = {shape::allowed, shape::symlink,  shape::hard_link,    shape::dot_dot, shape::denied,
                                shape::protected_hook, shape::outside, shape::case_variant, shape::non_utf8};

const std::string kJson = "{\"a\": 1}\n";

struct op_case {
  std::string op;
  bool writes;     // a write operation (protected paths are refused)
  bool directory;  // takes a directory (list, glob)
};

const op_case all_ops[] = {
    {"read", false, false},  {"stat", false, false},         {"grep", false, false},
    {"list", false, true},   {"glob", false, true},          {"write", true, false},
    {"edit", true, false},   {"format_json", true, false},   {"apply_patch", true, false},
};

class worker_acceptance : public ::testing::TestWithParam<op_case> {
 protected:
  void SetUp() override {
    dirs_ = make_dirs();
    const std::string& ws = dirs_.ws;
    write_text(ws + "/allowed/t.json", kJson);
    write_text(dirs_.outside + "/target.json", kJson);
    write_text(dirs_.outside + "/dir/x.json", kJson);
    std::filesystem::create_symlink(dirs_.outside + "/target.json", ws + "/link_out");
    std::filesystem::create_directory_symlink(dirs_.outside + "/dir", ws + "/link_dir");
    write_text(dirs_.outside + "/hard.json", kJson);
    ASSERT_EQ(::link((dirs_.outside + "/hard.json").c_str(), (ws + "/hard.json").c_str()), 0);
    write_text(dirs_.outside + "/h2.json", kJson);
    std::filesystem::create_directories(ws + "/hardlinks");
    ASSERT_EQ(::link((dirs_.outside + "/h2.json").c_str(), (ws + "/hardlinks/h.json").c_str()), 0);
    write_text(ws + "/secret/key.json", kJson);
    write_text(ws + "/.git/hooks/pre-commit", kJson, 0755);
    write_text(ws + "/.git/config", "[core]\n\tbare = false\n");
    write_text(ws + "/.git/HEAD", "ref: refs/heads/main\n");
    write_text(ws + "/\xff.json", kJson);
    std::filesystem::create_directories(ws + "/\xff");
    plan_ = compile_plan(ws);
    ASSERT_NE(plan_, nullptr);
    fs_worker_options options;
    options.request_deadline = std::chrono::milliseconds(5000);
    auto started = fs_worker::start(*plan_, options);
    ASSERT_TRUE(started) << started.error_value().describe();
    worker_ = std::make_unique<fs_worker>(std::move(*started));
  }
  void TearDown() override {
    if (worker_) {
      auto report = worker_->finish();
      EXPECT_FALSE(report.report_json.empty());
      EXPECT_FALSE(report.run.failure) << (report.run.failure ? report.run.failure->describe() : "");
    }
    remove_tree(dirs_.base);
  }

  std::string target(shape s, bool directory, bool writes) const {
    const std::string& ws = dirs_.ws;
    switch (s) {
      case shape::allowed: return directory ? ws + "/allowed" : "allowed/t.json";
      case shape::symlink: return directory ? "link_dir" : "link_out";
      case shape::hard_link: return directory ? "hardlinks" : "hard.json";
      case shape::dot_dot: return directory ? "allowed/../.." : "allowed/../../outside/target.json";
      case shape::denied: return directory ? "secret" : ws + "/secret/key.json";
      case shape::protected_hook: return directory ? ".git/hooks" : ".git/hooks/pre-commit";
      case shape::outside: return directory ? dirs_.outside + "/dir" : dirs_.outside + "/target.json";
      case shape::case_variant:
        if (writes) return ".GIT/hooks/pre-commit";
        return directory ? "SECRET" : "SECRET/key.json";
      case shape::non_utf8: return directory ? "\xff" : "\xff.json";
    }
    return {};
  }

  static std::string request(const std::string& op, const std::string& path) {
    const std::string p = json_string(path);
    if (op == "read" || op == "stat" || op == "list") return R"({"op":")" + op + R"(","path":)" + p + "}";
    if (op == "grep") return R"({"op":"grep","pattern":"a","path":)" + p + "}";
    if (op == "glob") return R"({"op":"glob","pattern":"*","path":)" + p + "}";
    if (op == "write") return R"({"op":"write","content":"{\"w\": 2}\n","path":)" + p + "}";
    if (op == "edit") return R"({"op":"edit","old_string":"\"a\"","new_string":"\"b\"","path":)" + p + "}";
    if (op == "format_json") return R"({"op":"format_json","path":)" + p + "}";
    const std::string patch = "*** Begin Patch\n*** Update File: " + path + "\n@@\n-{\"a\": 1}\n+{\"c\": 1}\n*** End Patch\n";
    return R"({"op":"apply_patch","patch":)" + json_string(patch) + "}";
  }

  // The code the table expects; "ok" for success.
  static std::string expected(shape s, const op_case& op) {
    switch (s) {
      case shape::allowed: return "ok";
      case shape::symlink: return "symlink";
      case shape::hard_link: return op.directory ? "ok" : "hard_link";
      case shape::dot_dot: return "path_escape";
      case shape::denied: return "denied";
      case shape::protected_hook: return op.writes ? "protected" : "ok";  // readable, as for commands
      case shape::outside: return "outside_roots";
      case shape::case_variant: return "case_variant";
      case shape::non_utf8: return "non_utf8";
    }
    return {};
  }

  fixture_dirs dirs_;
  std::shared_ptr<const sandbox_plan> plan_;
  std::unique_ptr<fs_worker> worker_;
};

TEST_P(worker_acceptance, each_hostile_path_is_refused_with_its_code_and_the_allowed_one_works) {
  const op_case& op = GetParam();
  // What must not change whatever the worker is asked.
  const std::map<std::string, std::string> guarded = {
      {dirs_.outside + "/target.json", kJson}, {dirs_.outside + "/hard.json", kJson},
      {dirs_.ws + "/secret/key.json", kJson},  {dirs_.ws + "/.git/hooks/pre-commit", kJson}};
  for (shape s : all_shapes) {
    SCOPED_TRACE(std::string(op.op) + " / " + shape_name(s));
    const std::string path = target(s, op.directory, op.writes);
    const nlohmann::json r = call(*worker_, request(op.op, path));
    const std::string want = expected(s, op);
    if (want == "ok") {
      ASSERT_TRUE(r.value("ok", false)) << r.dump();
    } else {
      ASSERT_FALSE(r.value("ok", true)) << r.dump();
      EXPECT_EQ(r["error"]["code"], want) << r.dump();
      // A refusal by a rule names it.
      if (want == "denied" || want == "protected" || want == "case_variant" || want == "symlink" ||
          want == "hard_link" || want == "path_escape") {
        EXPECT_FALSE(r["error"].value("rule", "").empty()) << r.dump();
      }
    }
    // The allowed operation did its work, with evidence.
    if (s == shape::allowed && op.writes) {
      ASSERT_EQ(r["touched"].size(), 1u) << r.dump();
      EXPECT_EQ(r["touched"][0]["path"], dirs_.ws + "/allowed/t.json");
      EXPECT_NE(r["touched"][0]["sha256_before"], r["touched"][0]["sha256_after"]);
      EXPECT_NE(read_text(dirs_.ws + "/allowed/t.json"), kJson);
    }
    if (s == shape::allowed && op.op == "read") {
      EXPECT_EQ(r["result"]["content"], kJson);
    }
    if (s == shape::allowed && op.op == "glob") {
      EXPECT_EQ(r["result"]["matches"][0], dirs_.ws + "/allowed/t.json");
    }
    if (s == shape::allowed && op.op == "grep") {
      EXPECT_EQ(r["result"]["matches"].size(), 1u) << r.dump();
    }
    // Through a directory: a hard-linked file is flagged (list) or left out (glob), never read.
    if (s == shape::hard_link && op.op == "list") {
      EXPECT_EQ(r["result"]["entries"][0]["hard_link"], true) << r.dump();
    }
    if (s == shape::hard_link && op.op == "glob") {
      EXPECT_TRUE(r["result"]["matches"].empty()) << r.dump();
      EXPECT_EQ(r["result"]["skipped"]["hard_link"], 1) << r.dump();
    }
  }
  for (const auto& [file, content] : guarded) EXPECT_EQ(read_text(file), content) << file;
}

INSTANTIATE_TEST_SUITE_P(every_operation, worker_acceptance, ::testing::ValuesIn(all_ops),
                         [](const ::testing::TestParamInfo<op_case>& param) { return param.param.op; });

}  // namespace
}  // namespace cordon::fsworker_test
