#include "cli/workspace.h"

#include <sys/stat.h>

#include <array>
#include <climits>
#include <cstdlib>

#include "cordon/validation.h"

namespace cordon::cli {
namespace {

// Directories that are not a project: as a workspace, `{workspace}` would hand
// whatever access the policy gives the workspace (writable under
// workspace-write, readable under read-only) to all of them.
constexpr std::array<const char*, 17> kSystem = {"/bin",  "/boot", "/dev",  "/etc", "/lib", "/lib32",
                                                 "/lib64", "/libx32", "/opt", "/proc", "/run", "/sbin",
                                                 "/srv",  "/sys",  "/usr",  "/var", "/home"};
constexpr std::array<const char*, 3> kShared = {"/tmp", "/var/tmp", "/dev/shm"};

// Trees whose every subdirectory is refused as well (unless forced): what the
// host runs, trusts or serves lives there (/etc/cron.d, /etc/systemd/system,
// /usr/local/bin, /var/lib, /var/spool/cron, /run/user/UID with its sockets).
constexpr std::array<const char*, 19> kSystemTrees = {
    "/bin",     "/boot",      "/dev",       "/etc",     "/lib",        "/lib32",   "/lib64",
    "/libx32",  "/proc",      "/run",       "/sbin",    "/sys",        "/usr",     "/var/lib",
    "/var/spool", "/var/cache", "/var/log", "/var/mail", "/var/backups"};
// Under a home directory (the caller's, and root's): credentials, and
// folders whose files the host later runs (user units, autostart entries,
// shims on PATH). A workspace there would hand them to the command.
constexpr std::array<const char*, 14> kHomeTrees = {
    ".ssh",          ".gnupg",      ".aws",           ".azure",        ".kube",
    ".docker",       ".password-store", ".pki",       ".config/gcloud", ".config/gh",
    ".local/share/keyrings", ".config/systemd", ".config/autostart", ".local/bin"};

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

// What this directory is, when it must not be a workspace; empty otherwise.
std::string refusal(const std::string& dir, const std::string& home) {
  if (dir == "/") return "the root directory (it holds every file on the host)";
  if (!home.empty() && dir == real(home)) return "your home directory (it holds your credentials and start-up files)";
  if (dir == "/root") return "root's home directory (it holds root's credentials and start-up files)";
  if (dir == "/home") return "the directory of every user's home";
  for (const char* r : kShared) {
    if (dir == r) return "a temporary directory shared by every user and program";
  }
  for (const char* r : kSystem) {
    if (dir == r) return "a system directory";
  }
  return {};
}

// The same for a directory below such a tree; empty otherwise.
std::string subtree_refusal(const std::string& dir, const std::string& home) {
  if (within(dir, "/dev/shm")) return {};  // a shared temporary root: its subdirectories are like /tmp's
  for (const char* r : kSystemTrees) {
    if (within(dir, r)) return std::string("inside the system tree ") + r;
  }
  for (const std::string& h : {home.empty() ? std::string() : real(home), std::string("/root")}) {
    if (h.empty()) continue;
    for (const char* r : kHomeTrees) {
      if (within(dir, h + "/" + r)) return "inside " + h + "/" + r + " (credentials or files the host runs)";
    }
  }
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
                                          const std::string& home, bool force) {
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
    if (!top.empty() && top != cwd && refusal(real(top), home).empty() && subtree_refusal(real(top), home).empty()) {
      choice.workspace = top;
      choice.reason = "git repository root";
    }
  }
  std::string resolved = real(choice.workspace);
  if (std::string why = refusal(resolved, home); !why.empty()) {
    return make_error(error_code::usage_error,
                      "the workspace " + resolved + " is " + why +
                          ", not a project: the policy's workspace access ({workspace}) would extend to all of "
                          "it; run from a project directory or pass --workspace DIR");
  }
  if (std::string why = subtree_refusal(resolved, home); !why.empty() && !force) {
    return make_error(error_code::usage_error,
                      "the workspace " + resolved + " is " + why +
                          ": the policy's workspace access ({workspace}) would extend to it; run from a project "
                          "directory, pass --workspace DIR, or --force-workspace to use it anyway");
  }
  // Inside, the workspace exists only at its real path.
  choice.workspace = resolved;
  choice.working_directory = within(real(cwd), resolved) ? real(cwd) : resolved;
  return choice;
}

}  // namespace cordon::cli
