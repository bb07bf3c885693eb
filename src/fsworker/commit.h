// commit.h — changing one or several files all-or-nothing (docs/fs-worker.md,
// "Atomic writes").
//
// Phase 1 prepares every change without touching a target: each new content
// goes to an unnamed O_TMPFILE in the target's directory (written, mode set,
// fsync'd) and only then gets a temporary name. Phase 2 swaps them in:
// renameat2(RENAME_EXCHANGE) for a file that exists (its old content keeps
// the temporary name, so undo is a second exchange), RENAME_NOREPLACE for a
// new one, a rename away for a removal. If any step fails, the steps done are
// undone in reverse and nothing has changed. A crash leaves every target
// wholly old or wholly new; what it may leave besides are complete
// `.cordon-fs-*` files beside them, never a half-written one.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fsworker/fs_error.h"
#include "fsworker/resolver.h"

namespace cordon::fsworker {

struct file_change {
  std::string path;                   // as the request named it (absolute or workspace-relative)
  bool remove = false;                // delete the file instead of writing `content`
  std::string content;
  std::optional<mode_t> mode;         // a new file's mode (default 0644); an existing file keeps its own
  std::optional<std::string> expected_sha256;  // refuse (stale_content) unless the current content has it
  bool must_exist = false;            // refuse (not_found) a file that is absent
  bool must_not_exist = false;        // refuse (already_exists) a file that is present
  bool create_parents = false;        // make missing directories (0755), undone on failure
};

// What one operation did to one file: sizes in bytes, digests SHA-256 hex
// ("" when the file did not exist before / does not after).
struct touched_file {
  std::string path;    // absolute, inside the sandbox
  std::string action;  // "read", "created", "replaced", "deleted", "unchanged"
  std::uint64_t bytes_before = 0;
  std::uint64_t bytes_after = 0;
  std::string sha256_before;
  std::string sha256_after;
};

// Applies every change, or none. `dry_run`: every check of phase 1 except
// creating the temporary files, nothing written. Errors: those of
// resolver::check/open (write access), not_a_file, hard_link, protected (a
// target that is itself a mount), stale_content, not_found, already_exists,
// file_too_large, io_error.
fs_result<std::vector<touched_file>> commit_changes(const resolver& paths, const std::vector<file_change>& changes,
                                                    std::size_t max_file_bytes, bool dry_run);

// Reads a whole regular file through the resolver (read access): refuses
// directories (not_a_file), hard links (hard_link) and files above `max_bytes`
// (file_too_large). `st` gets its fstat.
fs_result<std::string> read_whole_file(const resolver& paths, const std::string& path, std::size_t max_bytes,
                                       struct stat* st = nullptr);
// Opens a checked-for-read path as a regular file with one name: refuses
// directories and other types (not_a_file) and hard links (hard_link).
// `st` gets its fstat.
fs_result<unique_fd> open_single_file(const resolver& paths, const checked_path& path, struct stat& st);
// The hard_link refusal for a file with `links` names.
fs_error hard_link_error(const std::string& path, std::uint64_t links);
// Reads a whole open regular file (already checked), `size_hint` bytes
// expected (its fstat size). A file that holds more than `max_bytes` by the
// time it is read (it grew since the fstat) is file_too_large.
fs_result<std::string> read_all(int fd, std::size_t size_hint, std::size_t max_bytes, const std::string& path);

std::string sha256_hex(const std::string& data);

}  // namespace cordon::fsworker
