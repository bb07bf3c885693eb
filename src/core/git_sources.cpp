#include "core/git_sources.h"

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <map>

namespace cordon::core {
namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::map<std::string, std::string> environment_map(const std::vector<std::string>& environment) {
  std::map<std::string, std::string> out;
  for (const auto& e : environment) {
    auto eq = e.find('=');
    if (eq != std::string::npos) out.emplace(e.substr(0, eq), e.substr(eq + 1));
  }
  return out;
}

std::string normal(const std::string& path) { return std::filesystem::path(path).lexically_normal().string(); }

// `~/x` under home, an absolute path as it is, else "" (relative to what git
// would start in: unknown here).
std::string absolute_or_home(const std::string& value, const std::string& home) {
  if (value.rfind("~/", 0) == 0) return home.empty() ? std::string() : normal(home + value.substr(1));
  return !value.empty() && value[0] == '/' ? normal(value) : std::string();
}

void merge(git_config_tree& into, git_config_tree&& from) {
  into.files.insert(into.files.end(), from.files.begin(), from.files.end());
  into.unreadable.insert(into.unreadable.end(), from.unreadable.begin(), from.unreadable.end());
  into.bytes += from.bytes;
  for (auto& e : from.entries) {
    if (into.entries.size() >= max_config_variables) {
      into.unreadable.push_back(e.file + " (more than " + std::to_string(max_config_variables) + " variables)");
      return;
    }
    into.entries.push_back(std::move(e));
  }
}

// One variable from the environment; its include is followed like a file's.
void add_environment_entry(git_config_tree& out, const std::string& key, const std::string& value,
                           const std::string& label, const std::string& home) {
  auto entry = config_entry_from_key(key, value, label);
  if (!entry) {
    out.unreadable.push_back(label + " (not a config key: " + key + ")");
    return;
  }
  const bool include = entry->name == "path" && ((entry->section == "include" && entry->subsection.empty()) ||
                                                 (entry->section == "includeif" && !entry->subsection.empty()));
  out.entries.push_back(*entry);
  if (!include) return;
  std::string target = absolute_or_home(value, home);
  if (target.empty()) {
    out.unreadable.push_back(label + " (an include relative to where git starts: " + value + ")");
    return;
  }
  merge(out, read_git_config_tree(target, home));
}

void add_counted_variables(git_config_tree& out, const std::map<std::string, std::string>& env,
                           const std::string& home) {
  auto count = env.find("GIT_CONFIG_COUNT");
  if (count == env.end() || count->second.empty()) return;
  char* end = nullptr;
  const unsigned long n = std::strtoul(count->second.c_str(), &end, 10);
  if (*end != '\0' || count->second[0] == '-' || n > max_config_variables) {
    out.unreadable.push_back("GIT_CONFIG_COUNT (not a count cordon reads: " + count->second + ")");
    return;
  }
  for (unsigned long i = 0; i < n; ++i) {
    const std::string key_name = "GIT_CONFIG_KEY_" + std::to_string(i);
    auto key = env.find(key_name);
    auto value = env.find("GIT_CONFIG_VALUE_" + std::to_string(i));
    if (key == env.end() || value == env.end()) {
      out.unreadable.push_back(key_name + " (missing: git refuses the whole environment's config)");
      continue;
    }
    add_environment_entry(out, key->second, value->second, key_name, home);
  }
}

// The first word of a command as the shell reads it (simple quotes and
// backslashes), enough to see whether it names a path.
std::string first_word(std::string_view command) {
  std::string word;
  std::size_t i = command.find_first_not_of(" \t");
  char quote = 0;
  for (; i != std::string_view::npos && i < command.size(); ++i) {
    char c = command[i];
    if (quote) {
      if (c == quote) quote = 0;
      else word.push_back(c);
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '\\' && i + 1 < command.size()) {
      word.push_back(command[++i]);
    } else if (c == ' ' || c == '\t' || c == ';' || c == '|' || c == '&') {
      break;
    } else {
      word.push_back(c);
    }
  }
  return word;
}

}  // namespace

std::optional<git_config_entry> config_entry_from_key(const std::string& key, std::string value,
                                                      const std::string& file) {
  auto first = key.find('.'), last = key.rfind('.');
  if (first == std::string::npos || first == 0 || last + 1 >= key.size()) return std::nullopt;
  git_config_entry e;
  e.file = file;
  e.section = lower(key.substr(0, first));
  if (last > first) e.subsection = key.substr(first + 1, last - first - 1);
  e.name = lower(key.substr(last + 1));
  e.value = std::move(value);
  return e;
}

std::optional<std::vector<std::pair<std::string, std::string>>> parse_config_parameters(std::string_view text) {
  std::vector<std::pair<std::string, std::string>> out;
  std::size_t i = 0;
  // One single-quoted item from i (at its opening quote), '\'' and '\!' inside.
  auto quoted = [&](std::string& item) {
    item.clear();
    if (i >= text.size() || text[i] != '\'') return false;
    ++i;
    for (;;) {
      if (i >= text.size()) return false;
      char c = text[i++];
      if (c != '\'') {
        item.push_back(c);
        continue;
      }
      if (i + 2 < text.size() && text[i] == '\\' && (text[i + 1] == '\'' || text[i + 1] == '!') &&
          text[i + 2] == '\'') {
        item.push_back(text[i + 1]);
        i += 3;
        continue;
      }
      return true;
    }
  };
  while (true) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n')) ++i;
    if (i >= text.size()) break;
    std::string first, second;
    if (!quoted(first)) return std::nullopt;
    if (i < text.size() && text[i] == '=') {
      ++i;
      if (i < text.size() && text[i] == '\'') {
        if (!quoted(second)) return std::nullopt;
      }
      out.emplace_back(std::move(first), std::move(second));
    } else {
      auto eq = first.find('=');
      if (eq == std::string::npos) {
        out.emplace_back(std::move(first), std::string());  // a bare key: true
      } else {
        out.emplace_back(first.substr(0, eq), first.substr(eq + 1));
      }
    }
    if (i < text.size() && text[i] != ' ' && text[i] != '\t' && text[i] != '\n') return std::nullopt;
  }
  return out;
}

git_config_tree read_host_git_config(const std::string& home, const std::vector<std::string>& environment) {
  const auto env = environment_map(environment);
  auto var = [&](const char* name) {
    auto it = env.find(name);
    return it == env.end() ? std::string() : it->second;
  };
  std::vector<std::string> files = {"/etc/gitconfig"};
  if (!var("GIT_CONFIG_SYSTEM").empty()) files.push_back(var("GIT_CONFIG_SYSTEM"));
  if (!home.empty()) files.push_back(normal(home + "/.gitconfig"));
  const std::string xdg = var("XDG_CONFIG_HOME");
  if (!xdg.empty() && xdg[0] == '/') files.push_back(normal(xdg + "/git/config"));
  if (!home.empty()) files.push_back(normal(home + "/.config/git/config"));
  if (!var("GIT_CONFIG_GLOBAL").empty()) files.push_back(var("GIT_CONFIG_GLOBAL"));
  git_config_tree out;
  for (const auto& file : files) {
    if (file.empty() || file[0] != '/' || file == "/dev/null") continue;
    merge(out, read_git_config_tree(normal(file), home));
  }
  add_counted_variables(out, env, home);
  if (auto parameters = env.find("GIT_CONFIG_PARAMETERS"); parameters != env.end() && !parameters->second.empty()) {
    auto pairs = parse_config_parameters(parameters->second);
    if (!pairs) {
      out.unreadable.push_back("GIT_CONFIG_PARAMETERS (text git would not parse)");
    } else {
      for (const auto& [key, value] : *pairs) add_environment_entry(out, key, value, "GIT_CONFIG_PARAMETERS", home);
    }
  }
  return out;
}

std::vector<std::string> git_entry_paths(const git_config_entry& e, const std::string& work_tree,
                                         const std::string& home) {
  std::string value;
  const bool path_key = e.subsection.empty() && e.section == "core" &&
                        (e.name == "hookspath" || e.name == "attributesfile");
  if (path_key) {
    value = e.value;
  } else if (git_key_runs_code(e) && e.section != "include" && e.section != "includeif" &&
             e.section != "extensions" && !(e.section == "core" && e.name == "worktree")) {
    std::string_view command = e.value;
    if (!command.empty() && command[0] == '!') command.remove_prefix(1);
    value = first_word(command);
    if (value.find('/') == std::string::npos) return {};  // a program found on PATH, or a word such as "true"
  } else {
    return {};
  }
  if (value.empty()) return {};
  if (value.rfind("~/", 0) == 0 || value[0] == '/') {
    std::string path = absolute_or_home(value, home);
    return path.empty() ? std::vector<std::string>{} : std::vector<std::string>{path};
  }
  if (work_tree.empty()) return {};
  return {normal(work_tree + "/" + value)};
}

}  // namespace cordon::core
