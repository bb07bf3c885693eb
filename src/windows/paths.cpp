// src/windows/paths.cpp — see paths.h.
#include "windows/paths.h"

#include <algorithm>
#include <array>

#include "cordon/windows/compile.h"

namespace cordon::windows {
namespace detail {
namespace {

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

}  // namespace

std::string fold_case(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), lower);
  return out;
}

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return lower(x) == lower(y);
         });
}

bool is_within(std::string_view path, std::string_view root) {
  if (path.size() < root.size() || !same_path(path.substr(0, root.size()), root)) return false;
  if (path.size() == root.size()) return true;
  return root.back() == '\\' || path[root.size()] == '\\';
}

std::vector<std::string> ancestors_and_self(const std::string& path) {
  std::vector<std::string> out;
  if (path.size() < 3) return out;
  out.push_back(path.substr(0, 3));  // "C:\"
  for (std::size_t i = 3; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '\\') {
      if (i > 3) out.push_back(path.substr(0, i));
    }
  }
  return out;
}

std::size_t depth(std::string_view path) {
  if (path.size() <= 3) return 0;
  return static_cast<std::size_t>(std::count(path.begin() + 3, path.end(), '\\')) + 1;
}

std::string join(const std::string& base, std::string_view relative) {
  std::string out = base;
  if (relative.empty()) return out;
  if (out.back() != '\\') out += '\\';
  for (char c : relative) out += c == '/' ? '\\' : c;
  return out;
}

std::string normalize(const std::string& path) {
  if (path.size() < 3) return path;
  std::vector<std::string_view> parts;
  std::string_view rest = std::string_view(path).substr(3);
  while (!rest.empty()) {
    const auto sep = rest.find('\\');
    const std::string_view c = rest.substr(0, sep);
    if (c == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!c.empty() && c != ".") {
      parts.push_back(c);
    }
    if (sep == std::string_view::npos) break;
    rest.remove_prefix(sep + 1);
  }
  std::string out = path.substr(0, 3);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i != 0) out += '\\';
    out += parts[i];
  }
  return out;
}

std::optional<std::string> component_problem(std::string_view c) {
  for (char ch : c) {
    const auto u = static_cast<unsigned char>(ch);
    if (u < 0x20 || std::string_view("<>:\"|?*\\").find(ch) != std::string_view::npos) {
      return "component \"" + std::string(c) + "\" contains a character Windows reserves";
    }
  }
  if (!c.empty() && (c.back() == '.' || c.back() == ' ')) {
    return "component \"" + std::string(c) + "\" ends in a dot or space, which Win32 strips";
  }
  static constexpr std::array<std::string_view, 22> devices = {
      "con",  "prn",  "aux",  "nul",  "com1", "com2", "com3", "com4", "com5", "com6", "com7",
      "com8", "com9", "lpt1", "lpt2", "lpt3", "lpt4", "lpt5", "lpt6", "lpt7", "lpt8", "lpt9"};
  const std::string stem = fold_case(c.substr(0, c.find('.')));
  if (std::find(devices.begin(), devices.end(), stem) != devices.end()) {
    return "component \"" + std::string(c) + "\" is a DOS device name";
  }
  return std::nullopt;
}

}  // namespace detail

std::optional<std::string> to_windows_path(const std::string& policy_path) {
  // "/C:" or "/C:/rest": a drive letter as the first component.
  if (policy_path.size() < 3 || policy_path[0] != '/' || policy_path[2] != ':') return std::nullopt;
  const char drive = policy_path[1];
  const bool letter = (drive >= 'A' && drive <= 'Z') || (drive >= 'a' && drive <= 'z');
  if (!letter || (policy_path.size() > 3 && policy_path[3] != '/')) return std::nullopt;
  std::string out;
  out += static_cast<char>(drive >= 'a' ? drive - 'a' + 'A' : drive);
  out += ":\\";
  if (policy_path.size() > 4) out = detail::join(out, std::string_view(policy_path).substr(4));
  return out;
}

}  // namespace cordon::windows
