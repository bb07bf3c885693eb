// The CLI's exit statuses are named in one place (src/cli/exit_codes.h) and
// documented in one table (docs/errors.md, "Exit status of the CLI"): the
// two list the same names with the same values.
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "cli/exit_codes.h"
#include "harness.h"

namespace cordon::test {
namespace {

// NAME -> VALUE of every match of `pattern` (groups: NAME, VALUE) in the source file `relative`.
std::map<std::string, int> codes_in(const std::string& relative, const std::string& pattern) {
  std::ifstream in(source_dir() + "/" + relative);
  std::stringstream read;
  read << in.rdbuf();
  const std::string text = read.str();
  const std::regex match(pattern);
  std::map<std::string, int> codes;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), match); it != std::sregex_iterator(); ++it) {
    codes[(*it)[1]] = std::stoi((*it)[2]);
  }
  return codes;
}

// Every `inline constexpr int exit_NAME = VALUE;` of the header.
std::map<std::string, int> header_codes() {
  return codes_in("src/cli/exit_codes.h", R"(inline constexpr int (exit_\w+) = (\d+);)");
}

// Every "| `exit_NAME` | VALUE |" row of docs/errors.md.
std::map<std::string, int> documented_codes() { return codes_in("docs/errors.md", R"(\| `(exit_\w+)` \| (\d+) \|)"); }

TEST(ExitCodes, TheHeaderAndDocsErrorsMdListTheSameNamesAndValues) {
  const auto in_header = header_codes();
  EXPECT_GE(in_header.size(), 9U);
  EXPECT_EQ(in_header, documented_codes());
}

TEST(ExitCodes, TheHeaderIsWhatTheCliIsBuiltWith) {
  const auto in_header = header_codes();
  EXPECT_EQ(in_header.at("exit_cordon_failed"), cli::exit_cordon_failed);
  EXPECT_EQ(in_header.at("exit_timeout"), cli::exit_timeout);
  EXPECT_EQ(in_header.at("exit_denied"), cli::exit_denied);
  EXPECT_EQ(in_header.at("exit_check_failed"), cli::exit_check_failed);
}

}  // namespace
}  // namespace cordon::test
