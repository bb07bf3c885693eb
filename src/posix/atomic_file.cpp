// Atomic file writes (temporary file, fsync, rename), for reports.
#include "posix/atomic_file.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace cordon {

std::string parent_of(const std::string& path) {
  auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string base_of(const std::string& path) {
  auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

result<unique_fd> open_parent_directory(const std::string& path) {
  std::string directory = parent_of(path);
  unique_fd fd(::open(directory.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!fd) return make_error(error_code::io_error, "cannot open directory " + directory, {}, errno);
  return fd;
}

result<void> write_file_atomically(const std::string& path, const std::string& contents) {
  auto dir = open_parent_directory(path);
  if (!dir) return std::move(dir).error_value();
  return write_file_atomically_at(dir->get(), base_of(path), contents);
}

result<void> write_file_atomically_at(int dir_fd, const std::string& name, const std::string& contents) {
  if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..") {
    return make_error(error_code::io_error, "report name must be a file name: " + name);
  }
  // A random temporary name beside the target, created exclusively.
  std::uint64_t nonce = 0;
  if (::getrandom(&nonce, sizeof nonce, 0) != static_cast<ssize_t>(sizeof nonce)) nonce = static_cast<std::uint64_t>(::getpid());
  std::string temp = "." + name + ".tmp." + std::to_string(nonce);
  unique_fd file(::openat(dir_fd, temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644));
  if (!file) return make_error(error_code::io_error, "cannot create a temporary file beside " + name, {}, errno);
  const int fd = file.get();
  auto fail = [&](const char* what) {
    int err = errno;
    file.reset();
    ::unlinkat(dir_fd, temp.c_str(), 0);
    return make_error(error_code::io_error, std::string(what) + " " + name, {}, err);
  };
  std::size_t written = 0;
  while (written < contents.size()) {
    ssize_t n = ::write(fd, contents.data() + written, contents.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail("cannot write");
    }
    written += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) return fail("cannot sync");
  if (file.close_now() != 0) {
    int err = errno;
    ::unlinkat(dir_fd, temp.c_str(), 0);
    return make_error(error_code::io_error, "cannot close " + name, {}, err);
  }
  if (::renameat(dir_fd, temp.c_str(), dir_fd, name.c_str()) != 0) {
    int err = errno;
    ::unlinkat(dir_fd, temp.c_str(), 0);
    return make_error(error_code::io_error, "cannot rename into " + name, {}, err);
  }
  // Make the rename itself durable (an O_PATH descriptor cannot be synced; reopen it).
  if (unique_fd sync_fd(::openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)); sync_fd) ::fsync(sync_fd.get());
  return ok;
}

}  // namespace cordon
