#include "cli/workspace.h"

#include <sys/stat.h>

#include <array>
#include <climits>
#include <cstdlib>

#include "cordon/validation.h"

namespace cordon::cli {
namespace {

constexpr std::array<const char*, 21> kRefused = {
    "/",      "/bin",  "/boot",   "/dev",  "/etc",  "/home", "/lib",  "/lib32", "/lib64", "/libx32", "/opt",
    "/proc",  "/root", "/run",    "/sbin", "/srv",  "/sys",  "/tmp",  "/usr",   "/var",   "/var/tmp"};

bool is_directory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool within(const std::string& path, const std::string& root) {
  return path == root || root == "/" || path.rfind(root + "/", 0) == 0;
}

std::string real(const std::string& path) {
  char buffer[PATH_MAX];
  return ::realpath(path.c_str(), buffer) != nullptr ? std::string(buffer) : path;
}

// Why this directory must not be a workspace, or empty.
std::string refusal(const std::string& dir, const std::string& home) {
  for (const char* r : kRefused) {
    if (dir == r) return dir == "/" ? "the root directory" : "a system or shared directory";
  }
  if (dir == "/dev/shm") return "a shared directory";
  if (!home.empty() && dir == real(home)) return "your home directory";
  return {};
}

std::string git_top(const std::string& start) {
  std::string dir = start;
  while (true) {
    struct stat st {};
    if (::lstat((dir + "/.git").c_str(), &st) == 0) return dir;
    if (dir == "/") return {};
    auto slash = dir.find_last_of('/');
    dir = slash == 0 ? "/" : dir.substr(0, slash);
  }
}

}  // namespace

result<workspace_choice> choose_workspace(const std::string& requested, const std::string& cwd,
                                          const std::string& home) {
  workspace_choice choice;
  if (!requested.empty()) {
    std::string absolute = requested[0] == '/' ? requested : cwd + "/" + requested;
    choice.workspace = normalize_path_lexically(absolute);
    choice.reason = "--workspace";
    if (!is_directory(choice.workspace)) {
      return make_error(error_code::usage_error, "--workspace " + requested + ": not an existing directory");
    }
  } else {
    choice.workspace = cwd;
    choice.reason = "current directory";
    std::string top = git_top(cwd);
    if (!top.empty() && top != cwd && refusal(real(top), home).empty()) {
      choice.workspace = top;
      choice.reason = "git repository root";
    }
  }
  std::string resolved = real(choice.workspace);
  if (std::string why = refusal(resolved, home); !why.empty()) {
    return make_error(error_code::usage_error,
                      "the workspace " + resolved + " is " + why +
                          ", which the profile would make writable as a whole; run from a project directory "
                          "or pass --workspace DIR");
  }
  // Inside, the workspace exists only at its real path.
  choice.workspace = resolved;
  choice.working_directory = within(real(cwd), resolved) ? real(cwd) : resolved;
  return choice;
}

}  // namespace cordon::cli
