#include "core/tokens.h"

#include <array>
#include <filesystem>
#include <string_view>

#include "cordon/validation.h"

namespace cordon::core {
namespace {

// Directories a workspace-writable profile must never make writable whole,
// per platform.
constexpr std::array<std::string_view, 22> kRefusedLinux = {
    "/",     "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32", "/opt",
    "/proc", "/root", "/run", "/sbin", "/srv", "/sys",  "/tmp", "/usr",   "/var",   "/var/tmp", "/dev/shm"};
constexpr std::array<std::string_view, 25> kRefusedMacos = {
    "/",           "/Applications", "/Library",     "/System",         "/Users",        "/Volumes",
    "/bin",        "/cores",        "/dev",         "/etc",            "/opt",          "/opt/homebrew",
    "/private",    "/private/etc",  "/private/tmp", "/private/var",    "/sbin",         "/tmp",
    "/usr",        "/usr/local",    "/var",         "/private/var/folders", "/Users/Shared", "/Library/Developer",
    "/private/var/tmp"};
// Windows: below any drive letter ("/C:", "/C:/Windows", ...).
constexpr std::array<std::string_view, 7> kRefusedWindowsBelowDrive = {
    "", "/Windows", "/Users", "/Program Files", "/Program Files (x86)", "/ProgramData", "/Users/Public"};

std::string lower_ascii(std::string s) {
  for (auto& c : s) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return s;
}

bool equal_ignoring_case(std::string_view a, std::string_view b) {
  return lower_ascii(std::string(a)) == lower_ascii(std::string(b));
}

// "/C:" or "/c:" at the start of a policy-form Windows path.
bool has_drive(std::string_view p) {
  return p.size() >= 3 && p[0] == '/' && ((p[1] >= 'A' && p[1] <= 'Z') || (p[1] >= 'a' && p[1] <= 'z')) &&
         p[2] == ':' && (p.size() == 3 || p[3] == '/');
}

bool refused_system_directory(std::string_view platform, const std::string& dir) {
  if (platform == "windows") {
    if (!has_drive(dir)) return dir == "/";
    const std::string_view rest = std::string_view(dir).substr(3);
    for (std::string_view r : kRefusedWindowsBelowDrive) {
      if (equal_ignoring_case(rest, r) || (r.empty() && rest == "/")) return true;
    }
    return false;
  }
  if (platform == "macos") {
    for (std::string_view r : kRefusedMacos) {
      if (equal_ignoring_case(dir, r)) return true;
    }
    return false;
  }
  for (std::string_view r : kRefusedLinux) {
    if (dir == r) return true;
  }
  return false;
}

template <class Policy, class F>
void for_each_path_list(Policy& policy, F&& f) {
  f(policy.filesystem.readable, "/filesystem/readable");
  f(policy.filesystem.writable, "/filesystem/writable");
  f(policy.filesystem.protected_read_only, "/filesystem/protected_read_only");
  f(policy.filesystem.denied, "/filesystem/denied");
  f(policy.filesystem.unix_sockets, "/filesystem/unix_sockets");
}

}  // namespace

result<std::string> resolve_token(const std::string& path, const token_roots& roots,
                                  const std::string& location) {
  auto replace = [&](std::string_view token, const std::string& root) -> result<std::string> {
    if (root.empty()) {
      return make_error(error_code::invalid_policy,
                        "path uses " + std::string(token) + " but no such root is known for this run",
                        location);
    }
    std::string rest = path.substr(token.size());
    if (root == "/") return rest.empty() ? std::string("/") : rest;
    return root + rest;
  };
  if (path.rfind(token_workspace, 0) == 0) return replace(token_workspace, roots.workspace);
  if (path.rfind(token_home, 0) == 0) return replace(token_home, roots.home);
  return path;
}

std::vector<policy_error> resolve_policy_tokens(sandbox_policy& policy, const token_roots& roots) {
  std::vector<policy_error> errors;
  for_each_path_list(policy, [&](std::vector<std::string>& list, const std::string& pointer) {
    for (std::size_t i = 0; i < list.size(); ++i) {
      auto resolved = resolve_token(list[i], roots, pointer + "/" + std::to_string(i));
      if (!resolved) {
        errors.push_back({resolved.error_value().location, resolved.error_value().message});
      } else {
        list[i] = normalize_path_lexically(*resolved);
      }
    }
  });
  return errors;
}

bool policy_uses_workspace(const sandbox_policy& policy) {
  bool uses = false;
  for_each_path_list(policy, [&](const std::vector<std::string>& list, const char*) {
    for (const auto& p : list) uses = uses || p.rfind(token_workspace, 0) == 0;
  });
  return uses;
}

std::string workspace_refusal(std::string_view platform, const std::string& dir, const std::string& home) {
  const bool root = dir == "/" || (platform == "windows" && has_drive(dir) && dir.size() <= 4);
  if (root) return platform == "windows" && dir != "/" ? "the root of a drive" : "the root directory";
  if (refused_system_directory(platform, dir)) return "a system or shared directory";
  if (home.empty()) return {};
  if (platform == "linux") return dir == resolve_symlinks(home) ? "your home directory" : std::string();
  // macOS and Windows compare without regard to case; their homes are not
  // resolved against this host's filesystem.
  return equal_ignoring_case(dir, home) ? "your home directory" : std::string();
}

std::string policy_spelling(const std::string& path) {
  if (path.size() < 2 || path[1] != ':' || !((path[0] >= 'A' && path[0] <= 'Z') || (path[0] >= 'a' && path[0] <= 'z'))) {
    return path;
  }
  std::string out = "/" + path;
  for (auto& c : out) c = c == '\\' ? '/' : c;
  while (out.size() > 4 && out.back() == '/') out.pop_back();
  return out;
}

std::string resolve_symlinks(const std::string& absolute) {
  std::error_code ec;
  auto resolved = std::filesystem::weakly_canonical(absolute, ec);
  return ec ? absolute : resolved.string();
}

}  // namespace cordon::core
