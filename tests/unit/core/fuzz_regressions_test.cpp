// Unit tests: the fuzzers' property checks (fuzz/*_check.h) on their seeds
// and on every regression input. An input that once crashed a fuzzer or
// violated a property goes into fuzz/regressions/<target>/ and is replayed
// here on every build (and by scripts/fuzz.sh with the sanitizers).
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../../../fuzz/host_rules_check.h"
#include "../../../fuzz/policy_check.h"
#include "../../../fuzz/terminal_filter_check.h"
#include "source_dir.h"

namespace cordon {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> files_in(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_regular_file()) out.push_back(entry.path().string());
  }
  return out;
}

TEST(FuzzRegressions, PolicyInputs) {
  const std::string root = test::source_dir();
  std::size_t replayed = 0;
  for (const char* dir : {"/fuzz/regressions/policy", "/tests/corpus/valid", "/tests/corpus/invalid", "/profiles"}) {
    for (const auto& path : files_in(root + dir)) {
      SCOPED_TRACE(path);
      EXPECT_EQ(fuzz::check_policy_input(test::read_text(path)), "");
      ++replayed;
    }
  }
  EXPECT_GE(replayed, 50u);
}

// The host-rule table's cases in the fuzzer's line format (as scripts/fuzz.sh writes its seeds).
std::vector<std::string> host_table_inputs() {
  const auto table = nlohmann::json::parse(test::read_text(test::source_dir() + "/tests/corpus/host_rules.json"));
  std::vector<std::string> out;
  for (const auto& scenario : table.at("scenarios")) {
    const auto& net = scenario.at("network");
    std::string rules;
    if (net.contains("rules")) {
      for (const auto& r : net.at("rules")) {
        rules += std::string("\n") + (r.at("action") == "allow" ? "A" : "D") +
                 (r.contains("port") ? ":" + std::to_string(r.at("port").get<int>()) : std::string()) + " " +
                 r.at("host").get<std::string>();
      }
    }
    const std::string def = net.value("default_action", "deny") == "allow" ? "+" : "";
    for (const auto& c : scenario.at("cases")) {
      out.push_back(c.at("host").get<std::string>() + "\n" + def + std::to_string(c.at("port").get<int>()) + rules);
    }
  }
  return out;
}

TEST(FuzzRegressions, HostRulesInputs) {
  std::size_t replayed = 0;
  for (const auto& input : host_table_inputs()) {
    SCOPED_TRACE(input);
    EXPECT_EQ(fuzz::check_host_rules_input(input), "");
    ++replayed;
  }
  for (const auto& path : files_in(test::source_dir() + "/fuzz/regressions/host_rules")) {
    SCOPED_TRACE(path);
    EXPECT_EQ(fuzz::check_host_rules_input(test::read_text(path)), "");
    ++replayed;
  }
  EXPECT_GE(replayed, 60u);
}

// The terminal filter's seeds (as scripts/fuzz.sh writes them), each under
// both terminals and every cut, and its regression inputs.
TEST(FuzzRegressions, TerminalFilterInputs) {
  std::vector<std::string> inputs;
  for (const std::string& stream : {std::string("ok \x1b[1;31mred\x1b[0m \x1b]0;title\a \x1b]52;c;eA==\a caf\xc3\xa9\n"),
                                   std::string("\x1bPtmux;\x1b\x1b]52;c;eA==\a\x1b\\\x1b[21t\x9d" "52;\x9c")}) {
    for (int control = 0; control < 14; ++control) inputs.push_back(std::string(1, static_cast<char>(control)) + stream);
  }
  for (const auto& path : files_in(test::source_dir() + "/fuzz/regressions/terminal_filter")) {
    inputs.push_back(test::read_text(path));
  }
  for (const auto& input : inputs) {
    SCOPED_TRACE(::testing::PrintToString(input));
    EXPECT_EQ(fuzz::check_terminal_filter_input(input), "");
  }
  EXPECT_GE(inputs.size(), 28u);
}

}  // namespace
}  // namespace cordon
