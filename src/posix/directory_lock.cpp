// directory_lock.cpp — flock(2) on a file's directory (directory_lock.h).
#include "posix/directory_lock.h"

#include <fcntl.h>
#include <sys/file.h>

#include <cerrno>

#include "posix/atomic_file.h"

namespace cordon {

directory_lock::directory_lock(const std::string& file) : directory_(parent_of(file)) {
  // O_RDONLY, not O_PATH: flock needs a descriptor that refers to the open directory.
  fd_.reset(::open(directory_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd_) {
    errno_ = errno;
    return;
  }
  while (::flock(fd_.get(), LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    errno_ = errno;
    fd_.reset();
    return;
  }
}  // the lock goes with the descriptor

result<void> directory_lock::status() const {
  if (fd_) return ok;
  return make_error(error_code::io_error, "cannot lock the directory " + directory_, {}, errno_);
}

}  // namespace cordon
