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

path_style host_path_style() noexcept {
#if defined(_WIN32)
  return path_style::windows;
#else
  return path_style::posix;
#endif
}

namespace {
bool is_separator(char c) { return c == '/' || c == '\\'; }
bool is_drive_letter(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
}  // namespace

// Windows' rules are those of RtlDetermineDosPathNameType_U: two leading
// separators begin a UNC or device path; one, the current drive's root; a
// drive letter and ':' without a separator, that drive's current directory.
path_kind classify_path(std::string_view path, path_style style) noexcept {
  if (style == path_style::posix) return !path.empty() && path.front() == '/' ? path_kind::absolute : path_kind::relative;
  if (path.size() >= 2 && is_separator(path[0]) && is_separator(path[1])) return path_kind::absolute;
  if (!path.empty() && is_separator(path[0])) return path_kind::per_process;
  if (path.size() >= 2 && is_drive_letter(path[0]) && path[1] == ':') {
    return path.size() >= 3 && is_separator(path[2]) ? path_kind::absolute : path_kind::per_process;
  }
  return path_kind::relative;
}

bool is_absolute_path(std::string_view path, path_style style) noexcept {
  return classify_path(path, style) == path_kind::absolute;
}

std::optional<std::string> resolve_manifest_path(std::string_view directory, std::string_view ref, path_style style) {
  switch (classify_path(ref, style)) {
    case path_kind::absolute: return std::string(ref);
    case path_kind::relative: return std::string(directory) + "/" + std::string(ref);
    case path_kind::per_process: return std::nullopt;
  }
  return std::nullopt;
}

bool stays_inside(std::string_view path) {
  if (path.empty()) return false;
  for (path_style style : {path_style::posix, path_style::windows}) {
    if (classify_path(path, style) != path_kind::relative) return false;
  }
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = start;
    while (end < path.size() && !is_separator(path[end])) ++end;
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
