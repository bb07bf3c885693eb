// source_dir.h — where unit tests find files of the source tree (schemas,
// profiles, tests/corpus): $CORDON_SOURCE_DIR, else the tree the build used.
#pragma once

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace cordon::test {

inline std::string source_dir() {
  if (const char* env = std::getenv("CORDON_SOURCE_DIR"); env != nullptr && *env != '\0') return env;
  return CORDON_SOURCE_DIR;
}

// The whole file, or "" when it cannot be read (`ok` says which).
inline std::string read_text(const std::string& path, bool* ok = nullptr) {
  std::ifstream in(path, std::ios::binary);
  if (ok != nullptr) *ok = static_cast<bool>(in);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace cordon::test
