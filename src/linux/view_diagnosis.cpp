#include "linux/view_diagnosis.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string_view>

#include "cordon/validation.h"
#include "linux/paths.h"

namespace cordon::linux_impl {
namespace {

constexpr int kMaxHops = 16;
constexpr int kMaxInterpreterDepth = 4;

std::string parent_of(const std::string& path) {
  auto slash = path.find_last_of('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

std::string leaf_of(const std::string& path) { return path.substr(path.find_last_of('/') + 1); }

// The host path of the entry `path` names, its directories resolved but not the entry itself.
std::string entry_on_host(const std::string& path) {
  std::string dir = resolve_on_host(parent_of(path)).path;
  return (dir == "/" ? "" : dir) + "/" + leaf_of(path);
}

bool is_executable_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// The toolchain's top for a --ro suggestion: <prefix> for <prefix>/bin/<name>, else the directory.
std::string suggestion_for(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return path;
  std::string dir = parent_of(path);
  return leaf_of(dir) == "bin" && dir != "/bin" && dir != "/usr/bin" ? parent_of(dir) : dir;
}

std::string missing_sentence(const std::string& path, const std::string& role) {
  return path + " (" + role + ") is outside the sandbox's view; add it with --ro " + suggestion_for(path);
}

// First line of `file` when it starts with "#!": the interpreter and its first argument.
bool read_shebang(const std::string& file, std::string& interpreter, std::string& argument) {
  std::ifstream in(file, std::ios::binary);
  std::string line;
  if (!std::getline(in, line) || line.size() < 3 || line.compare(0, 2, "#!") != 0) return false;
  std::istringstream words(line.substr(2));
  words >> interpreter;
  words >> argument;
  return !interpreter.empty();
}

// `name` in `path_variable`, on the host: the first executable file; "".
std::string search_path(const std::string& name, const std::string& path_variable) {
  std::istringstream entries(path_variable);
  for (std::string dir; std::getline(entries, dir, ':');) {
    if (dir.empty() || dir.front() != '/') continue;
    if (is_executable_file(dir + "/" + name)) return dir + "/" + name;
  }
  return {};
}

// "home = <dir>" of the pyvenv.cfg of the venv that `command` (a path inside <venv>/bin) belongs to.
std::string venv_home(const std::string& command, std::string& venv) {
  venv = parent_of(parent_of(command));
  std::ifstream in(venv + "/pyvenv.cfg");
  for (std::string line; std::getline(in, line);) {
    auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string key = line.substr(0, eq);
    while (!key.empty() && key.back() == ' ') key.pop_back();
    if (key != "home") continue;
    std::string value = line.substr(eq + 1);
    value.erase(0, value.find_first_not_of(' '));
    while (!value.empty() && (value.back() == ' ' || value.back() == '\r')) value.pop_back();
    return value;
  }
  return {};
}

// Follows `path` (an executable as the sandbox would run it) hop by hop;
// returns the first reason it cannot run inside, or "".
std::string check_executable(const mount_table& table, const std::string& path, const std::string& path_variable,
                             const std::string& role, int depth) {
  if (depth > kMaxInterpreterDepth) return {};
  std::string current = path;
  std::string current_role = role;
  std::string venv;
  const std::string home = venv_home(path, venv);
  for (int hop = 0; hop < kMaxHops; ++hop) {
    const std::string on_host = entry_on_host(current);
    if (!visible_in_view(table, on_host)) return missing_sentence(on_host, current_role);
    struct stat st {};
    if (::lstat(on_host.c_str(), &st) != 0) return {};
    if (!S_ISLNK(st.st_mode)) break;
    char buffer[4096];
    ssize_t n = ::readlink(on_host.c_str(), buffer, sizeof buffer - 1);
    if (n <= 0) return {};
    std::string target(buffer, static_cast<std::size_t>(n));
    if (target.front() != '/') target = parent_of(on_host) + "/" + target;
    current = normalize_path_lexically(target);
    current_role = "the file that the symlink " + on_host + " points to";
  }
  if (!home.empty() && home.front() == '/') {
    const std::string base = resolve_on_host(home).path;
    if (!visible_in_view(table, base)) {
      return missing_sentence(base, "the base interpreter's directory that " + venv + "/pyvenv.cfg names");
    }
  }
  std::string interpreter, argument;
  const std::string real = resolve_on_host(path).path;
  if (!read_shebang(real, interpreter, argument)) return {};
  if (leaf_of(interpreter) == "env" && !argument.empty() && argument.front() != '-') {
    std::string found = search_path(argument, path_variable);
    if (found.empty()) return {};
    return check_executable(table, found, path_variable, "the interpreter '" + argument + "' that the #! line of " +
                                                             real + " looks up in PATH", depth + 1);
  }
  return check_executable(table, interpreter, path_variable, "the interpreter on the #! line of " + real, depth + 1);
}

}  // namespace

bool visible_in_view(const mount_table& table, const std::string& path) {
  bool visible = table.full_root;
  for (const auto& op : table.ops) {
    if (!path_is_within(path, op.path)) continue;
    switch (op.kind) {
      case mount_kind::bind_read_only:
      case mount_kind::bind_writable:
      case mount_kind::symlink:
        visible = true;
        break;
      case mount_kind::mask:
      case mount_kind::private_tmpfs:
        visible = false;
        break;
      case mount_kind::seal_read_only:
        break;
    }
  }
  return visible;
}

std::string explain_missing_command(const mount_table& table, const std::string& argv0,
                                    const std::string& path_variable, const std::string& working_directory) {
  if (argv0.empty()) return {};
  if (argv0.find('/') != std::string::npos) {
    const std::string path = argv0.front() == '/' ? argv0 : normalize_path_lexically(working_directory + "/" + argv0);
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) return {};
    return check_executable(table, path, path_variable, "the command", 0);
  }
  std::istringstream entries(path_variable);
  std::vector<std::string> hidden;
  for (std::string dir; std::getline(entries, dir, ':');) {
    if (dir.empty() || dir.front() != '/') continue;
    const std::string candidate = dir + "/" + argv0;
    if (!is_executable_file(candidate)) continue;
    const std::string dir_on_host = resolve_on_host(dir).path;
    if (!visible_in_view(table, dir_on_host)) {
      hidden.push_back(dir);
      continue;
    }
    // Found in a visible PATH entry: what it needs is missing.
    std::string why = check_executable(table, candidate, path_variable, "the command", 0);
    if (!why.empty()) return why;
  }
  if (hidden.empty()) return {};
  std::string list;
  for (const auto& dir : hidden) list += (list.empty() ? "" : ", ") + dir;
  return "'" + argv0 + "' is on the host in PATH " + (hidden.size() == 1 ? "entry " : "entries ") + list +
         ", outside the sandbox's view; add it with --ro " + suggestion_for(hidden.front() + "/" + argv0);
}

namespace {

// The arguments to look at: argv after argv[0] and, for a shell given a
// script with -c (a tool call's "sh -c COMMAND"), the script's words split at
// blanks, quotes and shell operators, without expansion (at most 64): the
// paths the command line names, as the model wrote them.
std::vector<std::string> candidate_arguments(const std::vector<std::string>& argv) {
  std::vector<std::string> out(argv.begin() + 1, argv.end());
  const std::string name = argv.front().substr(argv.front().rfind('/') + 1);
  if (name != "sh" && name != "bash" && name != "dash" && name != "zsh") return out;
  for (std::size_t i = 1; i + 1 < argv.size(); ++i) {
    if (argv[i] != "-c") continue;
    std::string word;
    std::size_t words = 0;
    for (const char c : argv[i + 1] + " ") {
      if (std::string_view(" \t\n;|&<>()'\"`").find(c) == std::string_view::npos) {
        word += c;
      } else if (!word.empty()) {
        if (++words > 64) break;
        out.push_back(std::move(word));
        word.clear();
      }
    }
    break;
  }
  return out;
}

}  // namespace

std::vector<std::string> arguments_outside_view(const mount_table& table, const std::vector<std::string>& argv) {
  std::vector<std::string> out;
  if (argv.empty()) return out;
  const std::vector<std::string> candidates = candidate_arguments(argv);
  for (std::size_t i = 0; i < candidates.size() && out.size() < 8; ++i) {
    std::string arg = candidates[i];
    if (arg.empty()) continue;
    if (arg.front() != '/') {
      auto eq = arg.find("=/");
      if (eq == std::string::npos || arg.front() != '-') continue;
      arg = arg.substr(eq + 1);
    }
    if (arg.size() > 4096) continue;
    resolved_path r = resolve_on_host(normalize_path_lexically(arg));
    // /dev and /proc are the sandbox's own (its devices, its processes), not host paths a --ro could add.
    if (path_is_within(r.path, "/dev") || path_is_within(r.path, "/proc")) continue;
    if (!r.exists || visible_in_view(table, r.path)) continue;
    const bool denied = std::any_of(table.ops.begin(), table.ops.end(), [&](const mount_op& op) {
      return op.kind == mount_kind::mask && path_is_within(r.path, op.path);
    });
    if (denied) {
      out.push_back("argument " + arg + " is denied by the policy (filesystem.denied): the command cannot see it");
      continue;
    }
    out.push_back("argument " + arg + " exists on the host but is not visible inside the sandbox; add it with --ro " +
                  arg + " (or --rw)");
  }
  return out;
}

}  // namespace cordon::linux_impl
