// atomic_file.h — writing a file so that readers see the old one or the whole
// new one, never half. Private to the library: the public way to write a
// report is cordon::report_target (cordon/run.h).
#pragma once

#include <string>

#include "cordon/result.h"
#include "posix/unique_fd.h"

namespace cordon {

// A temporary file in the same directory, fsync, rename. Errors: io_error with errno.
result<void> write_file_atomically(const std::string& path, const std::string& contents);

// The same, relative to a directory descriptor opened earlier (O_PATH is
// enough): a directory swapped for a symlink after it was opened cannot
// redirect the write. `name` must be a single path component.
result<void> write_file_atomically_at(int dir_fd, const std::string& name, const std::string& contents);

// The directory part of `path` ("." for a bare name, "/" for "/x") and its
// last component (may be empty, "." or "..": callers check).
std::string parent_of(const std::string& path);
std::string base_of(const std::string& path);

// Opens the directory that will hold `path` (O_PATH | O_DIRECTORY). Errors:
// io_error with errno.
result<unique_fd> open_parent_directory(const std::string& path);

}  // namespace cordon
