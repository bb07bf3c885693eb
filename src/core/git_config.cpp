#include "core/git_config.h"

#include <cctype>
#include <fstream>
#include <string_view>

namespace cordon::core {
namespace {

std::string trim(std::string_view s) {
  auto begin = s.find_first_not_of(" \t\r");
  if (begin == std::string_view::npos) return {};
  auto end = s.find_last_not_of(" \t\r");
  return std::string(s.substr(begin, end - begin + 1));
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

std::vector<git_config_line> read_git_config(const std::string& file) {
  std::vector<git_config_line> lines;
  std::ifstream in(file);
  std::string section;
  for (std::string raw; std::getline(in, raw);) {
    std::string t = trim(raw);
    if (t.empty() || t[0] == '#' || t[0] == ';') continue;
    if (t[0] == '[') {
      section = lower(trim(t.substr(1, t.find(']') == std::string::npos ? std::string::npos : t.find(']') - 1)));
      lines.push_back({true, section, {}, {}});
      continue;
    }
    auto eq = t.find('=');
    if (eq == std::string::npos) continue;
    std::string value = trim(t.substr(eq + 1));
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') value = value.substr(1, value.size() - 2);
    lines.push_back({false, section, lower(trim(t.substr(0, eq))), std::move(value)});
  }
  return lines;
}

}  // namespace cordon::core
