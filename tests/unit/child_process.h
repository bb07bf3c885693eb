// child_process.h — running a test body in a forked child that reports
// mismatches through a pipe (for irreversible steps such as installing a
// seccomp filter or a Landlock ruleset). The child never calls gtest; the
// parent asserts on what came back.
#pragma once

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>

namespace cordon::test_support {

// Collects failure lines in the child and ships them to the parent.
class child_report {
 public:
  explicit child_report(int fd) : fd_(fd) {}

  void fail(const char* format, ...) __attribute__((format(printf, 2, 3))) {
    char line[512];
    va_list args;
    va_start(args, format);
    const int n = std::vsnprintf(line, sizeof line - 1, format, args);
    va_end(args);
    if (n <= 0) return;
    std::size_t len = std::min(static_cast<std::size_t>(n), sizeof line - 2);
    line[len++] = '\n';
    (void)!::write(fd_, line, len);
    failed_ = true;
  }

  // `rc` is a syscall's return value; expects -1 with errno == `expected`.
  void expect_errno(const std::string& what, long rc, int err, int expected) {
    if (rc != -1 || err != expected) {
      fail("%s: expected -1/%s, got %ld/%s", what.c_str(), strerrorname_np(expected), rc,
           err != 0 ? strerrorname_np(err) : "0");
    }
  }

  void expect_ok(const std::string& what, long rc, int err) {
    if (rc < 0) fail("%s: expected success, got %ld/%s", what.c_str(), rc, strerrorname_np(err));
  }

  bool failed() const { return failed_; }

 private:
  int fd_;
  bool failed_ = false;
};

struct child_outcome {
  int status = 0;
  std::string output;
};

// Runs `body` in a forked child; the child exits 0 unless it reported a
// failure (exit 1) or died. Everything the child reported comes back in
// `output`.
template <class Body>
child_outcome run_in_child(Body&& body) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return {-1, "pipe2 failed"};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    child_report report(fds[1]);
    body(report);
    ::_exit(report.failed() ? 1 : 0);
  }
  ::close(fds[1]);
  child_outcome outcome;
  char buf[1024];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0) {
    outcome.output.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  if (pid < 0) return {-1, "fork failed"};
  ::waitpid(pid, &outcome.status, 0);
  return outcome;
}

}  // namespace cordon::test_support
