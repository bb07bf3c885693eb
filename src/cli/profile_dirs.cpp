// Profiles by name from the built-in set, the user's and the system's
// directories: see profile_dirs.h.
#include "cli/profile_dirs.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "cordon/cordon.h"

#ifndef CORDON_SYSTEM_PROFILE_DIR
#define CORDON_SYSTEM_PROFILE_DIR "/etc/cordon/profiles"
#endif

namespace cordon::cli {
namespace {

bool valid_name(const std::string& name) {
  if (name.empty() || name.size() > 128) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(name.front())) return false;
  return std::all_of(name.begin(), name.end(), [&](char c) { return alnum(c) || c == '.' || c == '_' || c == '-'; });
}

bool is_builtin(const std::string& name) {
  const auto names = builtin_profile_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

bool regular_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// The NAME of each NAME.json regular file in `dir` with a valid name, sorted; none when `dir` is absent.
std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> out;
  if (dir.empty()) return out;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return out;
  for (dirent* e; (e = ::readdir(d)) != nullptr;) {
    std::string file = e->d_name;
    if (file.size() <= 5 || file.compare(file.size() - 5, 5, ".json") != 0) continue;
    std::string name = file.substr(0, file.size() - 5);
    if (valid_name(name) && regular_file(dir + "/" + file)) out.push_back(name);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

// The file `name` resolves to outside the built-in set, with its origin; empty when none.
std::pair<std::string, std::string> file_for(const std::string& name) {
  for (const auto& [dir, origin] : {std::pair{user_profile_dir(), "user"}, std::pair{system_profile_dir(), "system"}}) {
    if (dir.empty()) continue;
    const std::string file = dir + "/" + name + ".json";
    if (regular_file(file)) return {file, origin};
  }
  return {};
}

error unknown(const std::string& name) {
  if (!valid_name(name)) {
    return make_error(error_code::unknown_profile,
                      "'" + name + "' is not a profile name (letters a-z, digits, '.', '_', '-'; see cordon profile list)");
  }
  return make_error(error_code::unknown_profile, "no profile '" + name + "': not built in, not in " + user_profile_dir() +
                                                     " or " + system_profile_dir() + " (see cordon profile list)");
}

}  // namespace

std::string user_profile_dir() {
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  if (xdg != nullptr && xdg[0] == '/') return std::string(xdg) + "/cordon/profiles";  // the spec: relative is invalid
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] == '/') return std::string(home) + "/.config/cordon/profiles";
  return {};
}

std::string system_profile_dir() { return CORDON_SYSTEM_PROFILE_DIR; }

std::string user_profile_dir_help() { return "$XDG_CONFIG_HOME/cordon/profiles/"; }

std::vector<profile_entry> list_profiles() {
  std::vector<profile_entry> out;
  for (const auto& name : builtin_profile_names()) out.push_back({name, "built-in", "", ""});
  std::vector<std::string> user_names = names_in(user_profile_dir());
  for (const auto& [dir, origin] : {std::pair{user_profile_dir(), "user"}, std::pair{system_profile_dir(), "system"}}) {
    for (const auto& name : names_in(dir)) {
      profile_entry e{name, origin, dir + "/" + name + ".json", ""};
      if (is_builtin(name)) {
        e.note = "ignored: a built-in name";
      } else if (std::string(origin) == "system" &&
                 std::find(user_names.begin(), user_names.end(), name) != user_names.end()) {
        e.note = "hidden by the user profile";
      }
      out.push_back(e);
    }
  }
  return out;
}

result<named_profile> load_named_profile(const std::string& name) {
  if (is_builtin(name)) {
    auto policy = builtin_profile(name);
    if (!policy) return policy.error_value();
    return named_profile{std::move(*policy), "built-in profile " + name};
  }
  if (!valid_name(name)) return unknown(name);
  const auto [file, origin] = file_for(name);
  if (file.empty()) return unknown(name);
  auto policy = load_sandbox_policy(file);
  if (!policy) return policy.error_value();
  return named_profile{std::move(*policy), origin + " profile " + file};
}

result<named_profile> load_policy_or_profile(const std::string& file, const std::string& profile) {
  if (file.empty()) return load_named_profile(profile.empty() ? std::string(default_profile_name) : profile);
  auto policy = load_sandbox_policy(file);
  if (!policy) return policy.error_value();
  return named_profile{std::move(*policy), file};
}

result<std::string> named_profile_json(const std::string& name) {
  if (is_builtin(name)) return builtin_profile_json(name);
  if (!valid_name(name)) return unknown(name);
  const auto [file, origin] = file_for(name);
  if (file.empty()) return unknown(name);
  std::ifstream in(file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in.good() && !in.eof()) return make_error(error_code::io_error, "cannot read " + file, file);
  return text.str();
}

}  // namespace cordon::cli
