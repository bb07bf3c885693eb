#include "core/git_identity.h"

#include <algorithm>
#include <cstdlib>

#include "core/git_config.h"

namespace cordon::core {
namespace {

// user.name and user.email of one config file, the last value winning.
void read_identity(const std::string& file, std::string& name, std::string& email) {
  for (const auto& line : core::read_git_config(file)) {
    if (line.header || line.section != "user") continue;
    // A value with a comment, an escape or a newline is not an identity to pass on.
    if (line.value.find_first_of("#;\\\n") != std::string::npos) continue;
    if (line.key == "name") name = line.value;
    if (line.key == "email") email = line.value;
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

}  // namespace cordon::core
