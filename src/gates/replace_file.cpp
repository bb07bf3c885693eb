// replace_file.cpp — the runner's intermediate records (record.h, replace_file):
// a temporary file and rename(2), without fsync.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "gates/record.h"
#include "posix/unique_fd.h"

namespace cordon::gates {

result<void> replace_file(const std::string& path, const std::string& contents) {
  std::string temporary = path + ".tmp." + std::to_string(::getpid());
  unique_fd fd(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644));
  if (!fd) return make_error(error_code::io_error, "create " + temporary, {}, errno);
  std::size_t done = 0;
  while (done < contents.size()) {
    ssize_t n = ::write(fd.get(), contents.data() + done, contents.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = errno;
      fd.reset();
      ::unlink(temporary.c_str());
      return make_error(error_code::io_error, "write " + temporary, {}, err);
    }
    done += static_cast<std::size_t>(n);
  }
  fd.reset();
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(temporary.c_str());
    return make_error(error_code::io_error, "rename to " + path, {}, err);
  }
  return ok;
}

}  // namespace cordon::gates
