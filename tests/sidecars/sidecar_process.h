// sidecar_process.h — `cordon sidecar ...` started by a test with its stdin,
// stdout and stderr on pipes, as a host (an editor, an agent) would.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace cordon::test {

class sidecar_process {
 public:
  // Starts `cordon_cli() args...`; `extra_fd` >= 0 is passed as descriptor 3.
  explicit sidecar_process(const std::vector<std::string>& args, int extra_fd = -1);
  ~sidecar_process();
  sidecar_process(const sidecar_process&) = delete;
  sidecar_process& operator=(const sidecar_process&) = delete;

  bool send(const std::string& bytes);
  // The next line of stdout (without "\n"), or nullopt on EOF or after `timeout`.
  std::optional<std::string> read_line(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // The next `count` bytes of stdout, or nullopt.
  std::optional<std::string> read_bytes(std::size_t count, std::chrono::milliseconds timeout = std::chrono::seconds(10));
  void close_stdin();
  // Waits, without reading, until cordon has filled the pipe of its stdout:
  // cordon's next write of up to `largest_write` bytes would block. The
  // explicit sign that a host that stopped reading holds cordon up, instead
  // of a fixed sleep. A write that does not fit in a pipe's last page takes a
  // new one (pipe(7)), so each page may keep up to largest_write - 1 bytes
  // free. False after `timeout`.
  bool wait_until_stdout_full(std::size_t largest_write,
                              std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // Waits for cordon to exit (at most `timeout`, then SIGKILL): its exit status, 128+N for a signal.
  int wait(std::chrono::milliseconds timeout = std::chrono::seconds(30));
  // Everything left on stdout, and all of stderr (after wait).
  std::string rest_of_stdout();
  const std::string& stderr_text() const { return err_; }
  pid_t pid() const { return pid_; }

 private:
  bool fill(std::chrono::steady_clock::time_point deadline);
  pid_t pid_ = -1;
  int in_ = -1, out_ = -1, errfd_ = -1;
  std::string buffer_, err_;
  bool eof_ = false;
  int status_ = -1;
};

}  // namespace cordon::test
