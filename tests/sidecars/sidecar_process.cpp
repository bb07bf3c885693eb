// sidecar_process.cpp — see sidecar_process.h.
#include <algorithm>
#include "sidecar_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <thread>

#include "harness.h"

namespace cordon::test {

sidecar_process::sidecar_process(const std::vector<std::string>& args, int extra_fd) {
  int in[2], out[2], err[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) return;
  std::vector<std::string> argv = {cordon_cli()};
  argv.insert(argv.end(), args.begin(), args.end());
  pid_ = ::fork();
  if (pid_ == 0) {
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    if (extra_fd >= 0) ::dup2(extra_fd, 3);
    std::vector<char*> c;
    for (auto& a : argv) c.push_back(a.data());
    c.push_back(nullptr);
    ::execv(c[0], c.data());
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  in_ = in[1];
  out_ = out[0];
  errfd_ = err[0];
  ::signal(SIGPIPE, SIG_IGN);
}

sidecar_process::~sidecar_process() {
  if (status_ < 0 && pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  for (int fd : {in_, out_, errfd_}) {
    if (fd >= 0) ::close(fd);
  }
}

bool sidecar_process::send(const std::string& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(in_, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

bool sidecar_process::fill(std::chrono::steady_clock::time_point deadline) {
  if (eof_) return false;
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  pollfd p{out_, POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(std::max<long long>(left.count(), 0))) <= 0) return false;
  char buffer[65536];
  ssize_t n = ::read(out_, buffer, sizeof buffer);
  if (n <= 0) {
    eof_ = true;
    return false;
  }
  buffer_.append(buffer, static_cast<std::size_t>(n));
  return true;
}

bool sidecar_process::wait_until_stdout_full(std::size_t largest_write, std::chrono::milliseconds timeout) {
  const int capacity = ::fcntl(out_, F_GETPIPE_SZ);
  const long page = ::sysconf(_SC_PAGESIZE);
  if (capacity <= 0 || page <= 0) return false;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int queued = 0;
    if (::ioctl(out_, FIONREAD, &queued) != 0) return false;
    const long slack = (capacity / page) * static_cast<long>(largest_write > 0 ? largest_write - 1 : 0);
    if (queued >= capacity - std::min<long>(slack, capacity - 1)) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // polling a condition, not deciding the test
  }
}

std::optional<std::string> sidecar_process::read_line(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return line;
    }
    if (!fill(deadline)) return std::nullopt;
  }
}

std::optional<std::string> sidecar_process::read_bytes(std::size_t count, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (buffer_.size() < count) {
    if (!fill(deadline)) return std::nullopt;
  }
  std::string out = buffer_.substr(0, count);
  buffer_.erase(0, count);
  return out;
}

void sidecar_process::close_stdin() {
  if (in_ >= 0) ::close(in_);
  in_ = -1;
}

int sidecar_process::wait(std::chrono::milliseconds timeout) {
  if (status_ >= 0) return status_;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  int st = 0;
  bool err_eof = false;
  // Drain both outputs while waiting, so that cordon never blocks on a full pipe.
  for (;;) {
    pid_t r = ::waitpid(pid_, &st, WNOHANG);
    if (r == pid_) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &st, 0);
      break;
    }
    pollfd p[2] = {{eof_ ? -1 : out_, POLLIN, 0}, {err_eof ? -1 : errfd_, POLLIN, 0}};
    if (::poll(p, 2, 20) > 0) {
      char buffer[65536];
      if (p[0].revents) {
        ssize_t n = ::read(out_, buffer, sizeof buffer);
        if (n > 0) buffer_.append(buffer, static_cast<std::size_t>(n));
        else eof_ = true;
      }
      if (p[1].revents) {
        ssize_t n = ::read(errfd_, buffer, sizeof buffer);
        if (n > 0) err_.append(buffer, static_cast<std::size_t>(n));
        else err_eof = true;
      }
    } else if (eof_ && err_eof) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  char buffer[65536];
  ssize_t n;
  ::fcntl(errfd_, F_SETFL, O_NONBLOCK);
  while ((n = ::read(errfd_, buffer, sizeof buffer)) > 0) err_.append(buffer, static_cast<std::size_t>(n));
  status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return status_;
}

std::string sidecar_process::rest_of_stdout() {
  while (fill(std::chrono::steady_clock::now() + std::chrono::milliseconds(100))) {
  }
  return std::exchange(buffer_, {});
}

}  // namespace cordon::test
