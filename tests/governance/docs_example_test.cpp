// Runs the worked example of docs/governance.md exactly as the page shows it:
// its files are written out, its steps run through the real CLI, and each
// step's exit status must be the one the page states.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

namespace {

namespace fs = std::filesystem;

// The CLI and the source tree: the build's, unless the environment names
// copies (scripts/test.sh runs the tests as an unprivileged user on copies).
std::string from_env(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

struct example {
  std::vector<std::pair<std::string, std::string>> files;  // name, contents
  std::vector<std::pair<std::string, int>> steps;           // command, expected exit status
};

// The fenced block that follows `marker_at` in `page`.
std::string block_after(const std::string& page, std::size_t marker_at) {
  auto open = page.find("```", marker_at);
  auto body = page.find('\n', open) + 1;
  auto close = page.find("\n```", body);
  return page.substr(body, close - body + 1);
}

example read_example() {
  std::ifstream in(from_env("CORDON_SOURCE_DIR", CORDON_SOURCE_DIR) + "/docs/governance.md");
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string page = buffer.str();
  example ex;
  std::regex file_marker("<!-- file: ([A-Za-z0-9_.-]+) -->");
  for (std::sregex_iterator it(page.begin(), page.end(), file_marker), end; it != end; ++it) {
    ex.files.emplace_back((*it)[1].str(), block_after(page, static_cast<std::size_t>(it->position())));
  }
  auto steps_at = page.find("<!-- steps -->");
  if (steps_at != std::string::npos) {
    std::istringstream lines(block_after(page, steps_at));
    std::regex step("^(cordon .*?)\\s*# exit ([0-9]+)$");
    for (std::string line; std::getline(lines, line);) {
      std::smatch m;
      if (std::regex_match(line, m, step)) ex.steps.emplace_back(m[1].str(), std::stoi(m[2].str()));
    }
  }
  return ex;
}

TEST(DocsExample, RunsAsWritten) {
  auto ex = read_example();
  ASSERT_GE(ex.files.size(), 5u);
  ASSERT_GE(ex.steps.size(), 8u);
  char t[] = "/tmp/cordon-docs-XXXXXX";
  std::string dir = ::mkdtemp(t);
  fs::create_directory(dir + "/ws");
  fs::permissions(dir, fs::perms::all);
  for (const auto& [name, text] : ex.files) std::ofstream(dir + "/" + name) << text;
  for (const auto& [command, expected] : ex.steps) {
    std::string line = "cd '" + dir + "' && " + from_env("CORDON_CLI", CORDON_CLI) + command.substr(6) + " >>out.txt 2>&1";
    int status = std::system(line.c_str());
    ASSERT_TRUE(WIFEXITED(status)) << command;
    EXPECT_EQ(WEXITSTATUS(status), expected) << command;
  }
  std::ifstream out(dir + "/out.txt");
  std::string text((std::istreambuf_iterator<char>(out)), {});
  EXPECT_NE(text.find("inspected"), std::string::npos) << text;
  EXPECT_NE(text.find("a session grant covers this request"), std::string::npos) << text;
  EXPECT_TRUE(fs::exists(dir + "/ws/published"));
  fs::remove_all(dir);
}

}  // namespace
