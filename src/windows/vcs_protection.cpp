// src/windows/vcs_protection.cpp — see vcs_protection.h.
#include "windows/vcs_protection.h"

#include <algorithm>

#include "core/vcs_metadata.h"
#include "windows/paths.h"

namespace cordon::windows::detail {

std::string vcs_file_path(const std::string& top, std::string_view relative) {
  std::string path = top;
  if (path.empty() || path.back() != '\\') path += '\\';
  for (char c : relative) path += c == '/' ? '\\' : c;
  return path;
}

vcs_protection vcs_entries(const std::vector<acl_entry>& entries, const host_facts& facts) {
  vcs_protection out;
  std::vector<std::string> seen;
  for (const auto& root : entries) {
    if (root.role != acl_role::writable || root.created_at_launch) continue;
    // A reference shape takes every path to exist: each writable root is a repository's top.
    const auto root_facts = find_path(facts, root.path);
    const std::vector<std::string> tops =
        facts.reference_shape ? std::vector<std::string>{root.path}
                              : (root_facts ? root_facts->repositories : std::vector<std::string>{});
    for (const auto& top : tops) {
      if (!is_within(top, root.path)) continue;
      if (std::any_of(seen.begin(), seen.end(), [&](const std::string& s) { return same_path(s, top); })) continue;
      seen.push_back(top);
      ++out.repositories;
      const auto exists = [&](const std::string& path) {
        if (facts.reference_shape) return true;
        const auto f = find_path(facts, path);
        return f && f->exists;
      };
      const auto dot_git = find_path(facts, vcs_file_path(top, ".git"));
      const bool git_file = dot_git && dot_git->exists && !dot_git->directory;
      if (git_file) {
        // A worktree's or submodule's link: protect the link itself.
        out.entries.push_back({vcs_file_path(top, ".git"), acl_role::protected_read_only,
                               "/filesystem/protect_vcs_metadata", false});
      }
      for (const auto relative : core::protected_vcs_files) {
        if (git_file && relative.starts_with(".git/")) continue;
        const std::string path = vcs_file_path(top, relative);
        if (exists(path)) {
          out.entries.push_back({path, acl_role::protected_read_only, "/filesystem/protect_vcs_metadata", false});
        } else {
          out.absent.push_back(path);
        }
      }
    }
  }
  return out;
}

}  // namespace cordon::windows::detail
