// fs_worker_support.cpp — fixtures of the worker's tests (fs_worker_support.h).
#include "fs_worker_support.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

namespace cordon::fsworker_test {

fixture_dirs make_dirs() {
  char tmpl[] = "/var/tmp/cordon-fsw-XXXXXX";
  const char* made = ::mkdtemp(tmpl);
  EXPECT_NE(made, nullptr);
  fixture_dirs d;
  d.base = made != nullptr ? made : "/nonexistent";
  ::chmod(d.base.c_str(), 0755);
  d.ws = d.base + "/ws";
  d.outside = d.base + "/outside";
  std::filesystem::create_directories(d.ws);
  std::filesystem::create_directories(d.outside);
  return d;
}

void remove_tree(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
}

void write_text(const std::string& path, const std::string& text, unsigned mode) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  ::chmod(path.c_str(), mode);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::shared_ptr<const sandbox_plan> compile_plan(const std::string& ws) {
  auto policy = builtin_profile("workspace-write");
  EXPECT_TRUE(policy);
  policy->filesystem.denied.push_back("{workspace}/secret");
  const std::string worker = find_fs_worker("");
  EXPECT_FALSE(worker.empty()) << "no cordon-fs-worker";
  auto backend = make_host_backend();
  compile_options options;
  options.workspace = ws;
  auto compiled = backend->compile(with_fs_worker_readable(*policy, worker), options);
  EXPECT_TRUE(compiled) << (compiled ? "" : compiled.failure().describe());
  if (!compiled) return nullptr;
  // The backend keeps the plan's pointer to itself: keep the backend alive.
  static std::vector<std::unique_ptr<sandbox_backend>> keep;
  keep.push_back(std::move(backend));
  return compiled.plan();
}

std::string json_string(const std::string& s) {
  // nlohmann refuses to dump bytes that are not UTF-8; those are spliced in
  // raw, as a hostile client would send them.
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out + "\"";
}

nlohmann::json call(fs_worker& w, const std::string& line) {
  auto answer = w.call(line);
  EXPECT_TRUE(answer) << (answer ? "" : answer.error_value().describe());
  if (!answer) return nlohmann::json{{"ok", false}, {"error", {{"code", "channel"}}}};
  return nlohmann::json::parse(*answer, nullptr, true);
}

}  // namespace cordon::fsworker_test
