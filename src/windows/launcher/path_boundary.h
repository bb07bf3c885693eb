// src/windows/launcher/path_boundary.h — the Windows path boundary: a root
// and each of its ancestors opened one component at a time without
// FILE_SHARE_DELETE (so none can be renamed or replaced while held),
// reparse points and extra hard links refused by handle, the handles kept
// until the operation that needed them finishes (docs/windows-backend.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "windows/launcher/win32.h"

namespace cordon::windows::launcher {

struct opened_path {
  std::vector<win32::unique_handle> chain;  // drive root first, the leaf last
  HANDLE leaf() const { return chain.back().get(); }
  bool directory = false;
  std::uint32_t links = 1;
  std::string file_id;  // "vvvvvvvv:iiiiiiiiiiiiiiii" (volume serial, file index)
};

// Opens `path` (absolute, "C:\..."). The leaf gets `leaf_access` on top of
// FILE_READ_ATTRIBUTES | READ_CONTROL (e.g. WRITE_DAC for a lease).
// Errors (launch_failed): a component that cannot be opened, is a reparse
// point, or (for a file leaf) has more than one hard link; a final path that
// differs from `path` other than in case (a short 8.3 name, an alias).
result<opened_path> open_path(const std::string& path, DWORD leaf_access);

// Files below `root` with more than one hard link, at most `limit` entries
// visited; `truncated` when the walk stopped early. `repositories`, when
// given, receives every directory at or below `root` that holds a `.git`
// entry (directory or file), found by the same walk.
std::vector<std::string> find_multi_link_files(const std::string& root, std::size_t limit, bool& truncated,
                                               std::vector<std::string>* repositories = nullptr);

}  // namespace cordon::windows::launcher
