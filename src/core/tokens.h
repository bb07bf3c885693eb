// tokens.h — root tokens and the workspace rule: gate 1's host-independent
// half of path handling (docs/architecture.md, "The pipeline").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cordon/policy.h"
#include "cordon/result.h"

namespace cordon::core {

struct token_roots {
  std::string workspace;  // absolute, symlinks resolved; empty when none was given
  std::string home;       // absolute; empty when unknown
};

// Replaces a leading "{workspace}" or "{home}" token. Errors (invalid_policy,
// at `location`) when the token's root is unknown. "{run_tmp}" is returned
// unchanged (the launcher makes that directory).
result<std::string> resolve_token(const std::string& path, const token_roots& roots,
                                  const std::string& location);

// Resolves the tokens in every path list of a normalized policy and
// normalizes the results lexically; returns every failure with its JSON
// pointer (empty: all resolved).
std::vector<policy_error> resolve_policy_tokens(sandbox_policy& policy, const token_roots& roots);

// True when any path list of the policy starts with "{workspace}".
bool policy_uses_workspace(const sandbox_policy& policy);

// Why `resolved_workspace` must not be a workspace a policy makes writable as
// a whole ("the root directory", "a system or shared directory", "your home
// directory"), or empty when it may be. `home` is the resolved home. The
// system directories are those of `platform` ("linux", "macos", "windows");
// Windows paths are in policy form ("/C:/Users") and compared without regard
// to ASCII case, as are macOS paths (APFS is case-insensitive by default).
std::string workspace_refusal(std::string_view platform, const std::string& resolved_workspace,
                              const std::string& home);

// A Windows path ("C:\work") in the policy's spelling ("/C:/work"); other
// paths unchanged.
std::string policy_spelling(const std::string& path);

// The path with the symlinks of its longest existing prefix resolved, the
// rest appended unchanged (std::filesystem::weakly_canonical); the input when
// that fails.
std::string resolve_symlinks(const std::string& absolute);

}  // namespace cordon::core
