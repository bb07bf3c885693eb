#include "core/tokens.h"

#include <array>
#include <filesystem>
#include <string_view>

#include "cordon/validation.h"

namespace cordon::core {
namespace {

// Directories a workspace-writable profile must never make writable whole.
constexpr std::array<std::string_view, 22> kRefused = {
    "/",     "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32", "/opt",
    "/proc", "/root", "/run", "/sbin", "/srv", "/sys",  "/tmp", "/usr",   "/var",   "/var/tmp", "/dev/shm"};

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

std::string workspace_refusal(const std::string& dir, const std::string& home) {
  for (std::string_view r : kRefused) {
    if (dir == r) return dir == "/" ? "the root directory" : "a system or shared directory";
  }
  if (!home.empty() && dir == resolve_symlinks(home)) return "your home directory";
  return {};
}

std::string resolve_symlinks(const std::string& absolute) {
  std::error_code ec;
  auto resolved = std::filesystem::weakly_canonical(absolute, ec);
  return ec ? absolute : resolved.string();
}

}  // namespace cordon::core
