// Where a run report goes (cordon/run.h, docs/report.md "Where the report
// goes"). The report is the evidence of a run: it must land where the caller
// will look, or cordon must say that it did not. A command with a writable
// root can rename the report's directory away and plant a forged report under
// the old name, or have replaced the name with a symlink or a device; the
// checks here make both an error instead of a silent success.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <utility>

#include "cordon/run.h"
#include "posix/atomic_file.h"

namespace cordon {

namespace {

// The kind of a directory entry that the report must not replace, or nullptr
// for a regular file (or no entry at all).
const char* unreplaceable_kind(const struct stat& st) {
  if (S_ISREG(st.st_mode)) return nullptr;
  if (S_ISLNK(st.st_mode)) return "a symlink";
  if (S_ISDIR(st.st_mode)) return "a directory";
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) return "a device";
  if (S_ISFIFO(st.st_mode)) return "a FIFO";
  if (S_ISSOCK(st.st_mode)) return "a socket";
  return "not a regular file";
}

const char* entry_kind(int dir_fd, const std::string& name) {
  struct stat st{};
  if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return nullptr;  // absent: created
  return unreplaceable_kind(st);
}

result<void> write_all(int fd, const std::string& text) {
  std::size_t written = 0;
  while (written < text.size()) {
    ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      return make_error(error_code::io_error, "cannot write the report to its descriptor", {}, errno);
    }
    written += static_cast<std::size_t>(n);
  }
  return ok;
}

}  // namespace

report_target::report_target(report_target&& other) noexcept
    : dir_fd_(std::exchange(other.dir_fd_, -1)),
      out_fd_(std::exchange(other.out_fd_, -1)),
      directory_(std::move(other.directory_)),
      name_(std::move(other.name_)),
      dir_dev_(other.dir_dev_),
      dir_ino_(other.dir_ino_) {}

report_target& report_target::operator=(report_target&& other) noexcept {
  if (this != &other) {
    if (dir_fd_ >= 0) ::close(dir_fd_);
    if (out_fd_ >= 0) ::close(out_fd_);
    dir_fd_ = std::exchange(other.dir_fd_, -1);
    out_fd_ = std::exchange(other.out_fd_, -1);
    directory_ = std::move(other.directory_);
    name_ = std::move(other.name_);
    dir_dev_ = other.dir_dev_;
    dir_ino_ = other.dir_ino_;
  }
  return *this;
}

report_target::~report_target() {
  if (dir_fd_ >= 0) ::close(dir_fd_);
  if (out_fd_ >= 0) ::close(out_fd_);
}

result<report_target> report_target::to_descriptor(int fd) {
  int flags = fd < 0 ? -1 : ::fcntl(fd, F_GETFL);
  if (flags < 0) {
    return make_error(error_code::usage_error, "--report-fd " + std::to_string(fd) + ": not an open descriptor", {},
                      EBADF);
  }
  if ((flags & O_ACCMODE) == O_RDONLY || (flags & O_PATH) != 0) {
    return make_error(error_code::usage_error, "--report-fd " + std::to_string(fd) + ": not open for writing", {},
                      EBADF);
  }
  report_target target;
  target.out_fd_ = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
  if (target.out_fd_ < 0) return make_error(error_code::io_error, "cannot duplicate the report descriptor", {}, errno);
  return target;
}

result<report_target> report_target::open(const std::string& path) {
  if (path == "-") return to_descriptor(STDOUT_FILENO);
  std::string name = base_of(path);
  std::string directory = parent_of(path);
  if (name.empty() || name == "." || name == "..") {
    return make_error(error_code::usage_error, "--report " + path + ": names no file");
  }
  // Re-resolved at write() from the same starting point the caller meant: an
  // absolute path as given, a relative one from the current directory now.
  if (directory.front() != '/') {
    char cwd[PATH_MAX];
    if (::getcwd(cwd, sizeof cwd) == nullptr) {
      return make_error(error_code::io_error, "--report " + path + ": cannot name the current directory", {}, errno);
    }
    directory = std::string(cwd) + (directory == "." ? "" : "/" + directory);
  }
  auto dir = open_parent_directory(path);
  if (!dir) return std::move(dir).error_value();
  report_target target;
  target.dir_fd_ = dir->release();
  target.directory_ = directory;
  target.name_ = name;
  struct stat st{};
  if (::fstat(target.dir_fd_, &st) != 0) return make_error(error_code::io_error, "cannot stat " + directory, {}, errno);
  target.dir_dev_ = st.st_dev;
  target.dir_ino_ = st.st_ino;
  if (::access(parent_of(path).c_str(), W_OK) != 0) {
    return make_error(error_code::usage_error, "--report " + path + ": cannot write a file there", {}, errno);
  }
  if (const char* kind = entry_kind(target.dir_fd_, name)) {
    return make_error(error_code::usage_error,
                      "--report " + path + ": is " + kind +
                          "; the report only replaces a regular file (standard output: --report -, "
                          "a descriptor: --report-fd N)");
  }
  return target;
}

result<void> report_target::write(const std::string& text) const {
  if (out_fd_ >= 0) return write_all(out_fd_, text);
  if (dir_fd_ < 0) return make_error(error_code::io_error, "the report target is not open");
  // Is the directory still the one opened before the run, under the path the
  // caller gave? A command that renamed it away (and perhaps put another in
  // its place, with a forged report) is caught here.
  struct stat now{};
  if (::stat(directory_.c_str(), &now) != 0 || now.st_dev != dir_dev_ || now.st_ino != dir_ino_) {
    return make_error(error_code::io_error,
                      "the report's directory " + directory_ +
                          " was moved or replaced during the run; the report was not written, and any " + name_ +
                          " there is not this run's",
                      {}, EXDEV);
  }
  if (const char* kind = entry_kind(dir_fd_, name_)) {
    return make_error(error_code::io_error,
                      directory_ + "/" + name_ + " became " + kind + " during the run; the report was not written", {},
                      ELOOP);
  }
  return write_file_atomically_at(dir_fd_, name_, text);
}

}  // namespace cordon
