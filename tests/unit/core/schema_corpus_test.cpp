// Unit tests: the policy corpus against both judges of a policy document,
// schemas/policy.v1.schema.json (checked by python3-jsonschema, draft
// 2020-12) and the C++ reader + validator.
//
//  - tests/corpus/valid/*.json and every built-in profile (profiles/*.json)
//    pass both;
//  - every tests/corpus/invalid/*.json is rejected by the C++ side at the
//    location tests/corpus/invalid/expected.json names, and by the schema at
//    that location or its parent (required, additionalProperties,
//    propertyNames and uniqueItems report at the enclosing object or array),
//    except the few documents marked "schema": "accepts" whose defect JSON
//    Schema cannot express. Those must really be accepted by the schema, so
//    the marks stay true when the schema changes.
// python3 runs once for the whole corpus.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "cordon/policy_json.h"
#include "cordon/validation.h"
#include "source_dir.h"

namespace cordon {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Prints, for each file argument, {"json": parsed?, "errors": [JSON pointer of
// each schema error], "messages": [...]} as one JSON object keyed by path.
constexpr const char* kSchemaScript = R"PY(
import json, sys, jsonschema
schema = json.load(open(sys.argv[1], encoding="utf-8"))
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)
def pointer(path):
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)
out = {}
for name in sys.argv[2:]:
    try:
        with open(name, "rb") as f:
            doc = json.loads(f.read().decode("utf-8"))
    except ValueError as e:
        out[name] = {"json": False, "errors": [], "messages": [str(e)]}
        continue
    errors = list(validator.iter_errors(doc))
    out[name] = {"json": True, "errors": [pointer(e.absolute_path) for e in errors],
                 "messages": [e.message[:300] for e in errors]}
sys.stdout.write(json.dumps(out))
)PY";

// Runs python3 with the script; returns its stdout, or "" with `status` set.
std::string run_python(const std::vector<std::string>& args, int& status) {
  std::vector<std::string> argv_storage = {"python3", "-c", kSchemaScript};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    status = -1;
    return {};
  }
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fds[1], 1);
    ::execvp(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  std::string out;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n > 0) {
      out.append(buf, static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  ::close(fds[0]);
  int wait_status = 0;
  ::waitpid(pid, &wait_status, 0);
  status = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + WTERMSIG(wait_status);
  return out;
}

std::vector<std::string> json_files(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() == ".json" && name != "expected.json") out.push_back(entry.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string file_name(const std::string& path) { return fs::path(path).filename().string(); }

std::string parent_pointer(const std::string& pointer) {
  const auto slash = pointer.rfind('/');
  return slash == std::string::npos ? std::string() : pointer.substr(0, slash);
}

class SchemaCorpus : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string root = test::source_dir();
    schema_path_ = new std::string(root + "/schemas/policy.v1.schema.json");
    valid_ = new std::vector<std::string>(json_files(root + "/tests/corpus/valid"));
    profiles_ = new std::vector<std::string>(json_files(root + "/profiles"));
    invalid_ = new std::vector<std::string>(json_files(root + "/tests/corpus/invalid"));
    bool ok = false;
    const std::string expected = test::read_text(root + "/tests/corpus/invalid/expected.json", &ok);
    expected_ = new json(ok ? json::parse(expected, nullptr, false) : json());

    std::vector<std::string> all = {*schema_path_};
    for (const auto* list : {valid_, profiles_, invalid_}) all.insert(all.end(), list->begin(), list->end());
    int status = 0;
    const std::string out = run_python(all, status);
    python_status_ = status;
    verdicts_ = new json(json::parse(out, nullptr, false));
  }
  static void TearDownTestSuite() {
    delete schema_path_;
    delete valid_;
    delete profiles_;
    delete invalid_;
    delete expected_;
    delete verdicts_;
  }

  static const json& verdict(const std::string& path) { return verdicts_->at(path); }

  static std::string* schema_path_;
  static std::vector<std::string>* valid_;
  static std::vector<std::string>* profiles_;
  static std::vector<std::string>* invalid_;
  static json* expected_;
  static json* verdicts_;
  static int python_status_;
};

std::string* SchemaCorpus::schema_path_ = nullptr;
std::vector<std::string>* SchemaCorpus::valid_ = nullptr;
std::vector<std::string>* SchemaCorpus::profiles_ = nullptr;
std::vector<std::string>* SchemaCorpus::invalid_ = nullptr;
json* SchemaCorpus::expected_ = nullptr;
json* SchemaCorpus::verdicts_ = nullptr;
int SchemaCorpus::python_status_ = 0;

TEST_F(SchemaCorpus, PythonJsonschemaRanOnce) {
  ASSERT_EQ(python_status_, 0) << "python3 with the jsonschema module (Debian: python3-jsonschema) is required";
  ASSERT_TRUE(verdicts_->is_object());
  EXPECT_EQ(verdicts_->size(), valid_->size() + profiles_->size() + invalid_->size());
}

TEST_F(SchemaCorpus, ValidExamplesAndProfilesPassBothJudges) {
  ASSERT_EQ(python_status_, 0);
  EXPECT_GE(valid_->size(), 8u);
  EXPECT_GE(profiles_->size(), 3u);
  std::vector<std::string> files = *valid_;
  files.insert(files.end(), profiles_->begin(), profiles_->end());
  for (const auto& path : files) {
    SCOPED_TRACE(path);
    auto parsed = load_sandbox_policy(path);
    ASSERT_TRUE(parsed) << parsed.error_value().describe();
    const validation_result validated = validate_sandbox_policy(*parsed);
    EXPECT_TRUE(validated.ok()) << validated.errors.at(0).location << ": " << validated.errors.at(0).reason;
    EXPECT_EQ(sandbox_policy_from_json(sandbox_policy_to_json(*parsed)).value(), *parsed);
    const json& v = verdict(path);
    EXPECT_TRUE(v.at("json").get<bool>());
    EXPECT_TRUE(v.at("errors").empty()) << v.at("messages").dump(1);
  }
}

TEST_F(SchemaCorpus, InvalidDocumentsAreRejectedAtTheExpectedLocation) {
  ASSERT_EQ(python_status_, 0);
  ASSERT_TRUE(expected_->is_object()) << "tests/corpus/invalid/expected.json is missing or not JSON";
  std::set<std::string> listed;
  for (const auto& [name, unused] : expected_->items()) {
    if (name != "about") listed.insert(name);
  }
  std::set<std::string> present;
  for (const auto& path : *invalid_) present.insert(file_name(path));
  EXPECT_EQ(listed, present) << "every invalid document needs an entry in expected.json, and only those";

  std::size_t schema_accepts = 0;
  for (const auto& path : *invalid_) {
    const std::string name = file_name(path);
    SCOPED_TRACE(name);
    if (!expected_->contains(name)) continue;
    const json& want = expected_->at(name);
    const std::string location = want.at("location");
    const std::string stage = want.at("stage");

    // The C++ side: reader errors carry the first problem's location;
    // validation lists every problem in document order.
    auto parsed = load_sandbox_policy(path);
    if (stage == "syntax" || stage == "structure") {
      ASSERT_FALSE(parsed) << "the reader accepted it";
      EXPECT_EQ(parsed.error_value().code, stage == "syntax" ? error_code::parse_error : error_code::invalid_policy);
      EXPECT_EQ(parsed.error_value().location, location) << parsed.error_value().describe();
    } else {
      ASSERT_EQ(stage, "validation");
      ASSERT_TRUE(parsed) << parsed.error_value().describe();
      const validation_result validated = validate_sandbox_policy(*parsed);
      ASSERT_FALSE(validated.ok()) << "the validator accepted it";
      EXPECT_EQ(validated.errors.front().location, location) << validated.errors.front().reason;
    }

    // The schema side.
    const json& v = verdict(path);
    const bool is_json = v.at("json").get<bool>();
    const auto& errors = v.at("errors");
    EXPECT_EQ(is_json, stage != "syntax") << v.at("messages").dump();
    if (want.value("schema", "rejects") == "accepts") {
      ++schema_accepts;
      EXPECT_FALSE(want.value("reason", "").empty()) << "say why the schema cannot reject it";
      EXPECT_TRUE(errors.empty()) << "marked \"schema\": \"accepts\" but the schema rejects it: "
                                  << v.at("messages").dump() << "; remove the mark";
      continue;
    }
    EXPECT_EQ(want.value("schema", "rejects"), "rejects");
    if (!is_json) continue;
    EXPECT_FALSE(errors.empty()) << "the schema accepts it";
    bool at_location = false;
    for (const auto& e : errors) {
      at_location = at_location || e == location || e == parent_pointer(location);
    }
    EXPECT_TRUE(at_location) << "schema errors at " << errors.dump() << ": " << v.at("messages").dump();
  }
  EXPECT_GE(invalid_->size(), 40u);
  EXPECT_LT(schema_accepts * 4, invalid_->size()) << "defects the schema cannot express must stay a small minority";
}

}  // namespace
}  // namespace cordon
