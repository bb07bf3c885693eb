// facts_files.h — the recorded host facts files of tests/facts/ (docs/host-facts.md), for the tests that load them.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace cordon::test {

inline const std::filesystem::path kFactsDir = std::filesystem::path(CORDON_SOURCE_DIR) / "tests/facts";

// The text of the recorded facts file `name` in kFactsDir ("" when it cannot be read: the load then fails).
inline std::string facts_file_text(const std::string& name) {
  std::ifstream in(kFactsDir / name, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace cordon::test
