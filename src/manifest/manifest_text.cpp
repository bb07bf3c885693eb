// manifest_text.cpp — reading a manifest file, and its names and paths (manifest_text.h).
#include "manifest/manifest_text.h"

#include <cerrno>
#include <fstream>
#include <sstream>
#include <system_error>

namespace cordon::manifest {

bool valid_name(std::string_view name) {
  if (name.empty() || name.size() > 100 || name == "." || name == "..") return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
              c == '-';
    if (!ok) return false;
  }
  return true;
}

// A relative path that stays under its base: no leading '/', no "..".
bool stays_inside(std::string_view path) {
  if (path.empty() || path.front() == '/') return false;
  std::size_t start = 0;
  while (start <= path.size()) {
    auto end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    if (path.substr(start, end - start) == "..") return false;
    start = end + 1;
  }
  return true;
}

std::optional<std::string> read_manifest_text(const std::string& path, std::string& failure) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    int err = errno;
    failure = path + ": cannot read: " + std::error_code(err, std::generic_category()).message();
    return std::nullopt;
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace cordon::manifest
