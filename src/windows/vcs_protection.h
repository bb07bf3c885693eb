// src/windows/vcs_protection.h — filesystem.protect_vcs_metadata on Windows:
// the metadata of every repository the host facts found below a writable root
// (path_facts::repositories) becomes a protected_read_only entry of the ACL
// decision, leased and restored like the policy's own (docs/windows-backend.md,
// "protect_vcs_metadata").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cordon/windows/host_facts.h"
#include "windows/acl_plan.h"

namespace cordon::windows::detail {

// "C:\w" and ".git/hooks" -> "C:\w\.git\hooks".
std::string vcs_file_path(const std::string& top, std::string_view relative);

struct vcs_protection {
  std::vector<acl_entry> entries;   // protected_read_only, source "/filesystem/protect_vcs_metadata"
  std::vector<std::string> absent;  // metadata files git would read that do not exist: the command could create them
  std::size_t repositories = 0;
};

// For each writable entry, each repository the facts list at or below it and
// each file of core::protected_vcs_files: an entry where it exists, else a
// line in `absent` (a `.git` that is a file names its git directory
// elsewhere: the files below it are not looked for). On a reference shape
// every writable root is a repository whose metadata all exists.
vcs_protection vcs_entries(const std::vector<acl_entry>& entries, const host_facts& facts);

}  // namespace cordon::windows::detail
