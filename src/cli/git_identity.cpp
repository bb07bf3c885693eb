#include "cli/git_identity.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>

namespace cordon::cli {
namespace {

std::string trim(const std::string& text) {
  auto begin = text.find_first_not_of(" \t\r");
  if (begin == std::string::npos) return {};
  auto end = text.find_last_not_of(" \t\r");
  return text.substr(begin, end - begin + 1);
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// user.name and user.email of one config file (git-config(1), "CONFIGURATION FILE"), the last value winning.
void read_identity(const std::string& file, std::string& name, std::string& email) {
  std::ifstream in(file);
  std::string section;
  for (std::string line; std::getline(in, line);) {
    std::string t = trim(line);
    if (t.empty() || t[0] == '#' || t[0] == ';') continue;
    if (t[0] == '[') {
      section = lower(trim(t.substr(1, t.find(']') == std::string::npos ? std::string::npos : t.find(']') - 1)));
      continue;
    }
    auto eq = t.find('=');
    if (section != "user" || eq == std::string::npos) continue;
    std::string key = lower(trim(t.substr(0, eq)));
    std::string value = trim(t.substr(eq + 1));
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') value = value.substr(1, value.size() - 2);
    // A value with a comment, an escape or a newline is not an identity to pass on.
    if (value.find_first_of("#;\\\n") != std::string::npos) continue;
    if (key == "name") name = value;
    if (key == "email") email = value;
  }
}

}  // namespace

void add_git_identity(sandbox_policy& policy, const std::string& home) {
  auto& env = policy.environment;
  for (const char* variable : {"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"}) {
    if (std::any_of(env.set.begin(), env.set.end(), [&](const auto& e) { return e.first == variable; }) ||
        std::find(env.allow.begin(), env.allow.end(), variable) != env.allow.end()) {
      return;
    }
  }
  if (home.empty() || home.front() != '/') return;
  std::string name, email;
  read_identity(home + "/.gitconfig", name, email);
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  const std::string xdg_file = (xdg != nullptr && xdg[0] == '/' ? std::string(xdg) : home + "/.config") + "/git/config";
  if (name.empty() || email.empty()) {
    std::string xdg_name, xdg_email;
    read_identity(xdg_file, xdg_name, xdg_email);
    if (name.empty()) name = xdg_name;
    if (email.empty()) email = xdg_email;
  }
  if (!name.empty()) {
    env.set.emplace_back("GIT_AUTHOR_NAME", name);
    env.set.emplace_back("GIT_COMMITTER_NAME", name);
  }
  if (!email.empty()) {
    env.set.emplace_back("GIT_AUTHOR_EMAIL", email);
    env.set.emplace_back("GIT_COMMITTER_EMAIL", email);
  }
}

}  // namespace cordon::cli
