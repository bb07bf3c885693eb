// core/vcs_metadata.h — the repository files `filesystem.protect_vcs_metadata`
// protects by name (docs/policy.md; docs/deferred-execution.md): relative to a
// directory holding a `.git` entry, the files git reads configuration or runs
// code from. Backends that protect them by name (the Windows backend's ACL
// lease, src/windows/vcs_protection.h) take the list from here.
#pragma once

#include <array>
#include <string_view>

namespace cordon::core {

// Relative to the repository's top, '/'-separated: hooks run by git, the
// config it reads (and config.worktree when extensions.worktreeConfig is on),
// commondir (which sends git to another directory's config and hooks) and
// .gitmodules (submodule URLs and update commands).
inline constexpr std::array<std::string_view, 5> protected_vcs_files = {
    ".git/hooks", ".git/config", ".git/config.worktree", ".git/commondir", ".gitmodules"};

}  // namespace cordon::core
