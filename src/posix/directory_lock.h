// directory_lock.h — an exclusive flock(2) on the directory that holds a
// file, for a read-modify-write of that file that other cordon processes do
// too (a session file: cordon exec and cordon session grow). The file itself
// is replaced by rename (atomic_file.h), so a lock on its inode would not
// outlive one write; the directory's stays. Private to the library.
#pragma once

#include <string>

#include "cordon/result.h"
#include "posix/unique_fd.h"

namespace cordon {

class directory_lock {
 public:
  // Blocks until the lock on `file`'s directory is held (or fails).
  explicit directory_lock(const std::string& file);
  // ok, or io_error with errno when the directory cannot be opened or locked.
  result<void> status() const;

 private:
  unique_fd fd_;
  std::string directory_;
  int errno_ = 0;
};

}  // namespace cordon
