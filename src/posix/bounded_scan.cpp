#include "posix/bounded_scan.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <atomic>
#include <cstring>
#include <new>

#include "posix/unique_fd.h"
#include "posix/vcs_scan_codec.h"

namespace cordon::vcs {
namespace {

std::atomic<bool> plain_fork{false};

// fork(2), or without the atfork handlers once the process asked for it.
pid_t fork_scan_child() {
#ifdef __linux__
  if (plain_fork.load(std::memory_order_relaxed)) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    return ::_Fork();
#else
    return static_cast<pid_t>(::syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0));
#endif
  }
#endif
  return ::fork();
}

#ifdef __linux__
// A value of /proc/self/status in bytes ("VmSize:", "VmData:"), 0 when unknown.
std::uint64_t status_bytes(const char* field) {
  std::FILE* f = std::fopen("/proc/self/status", "re");
  if (f == nullptr) return 0;
  char line[256];
  std::uint64_t kib = 0;
  const std::size_t n = std::strlen(field);
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::strncmp(line, field, n) == 0) {
      kib = std::strtoull(line + n, nullptr, 10);
      break;
    }
  }
  std::fclose(f);
  return kib * 1024;
}

void limit_growth(int resource, std::uint64_t now, std::uint64_t bound) {
  struct rlimit r {};
  r.rlim_cur = r.rlim_max = static_cast<rlim_t>(now + bound);
  (void)::setrlimit(resource, &r);
}
#endif

// The child: bounded, scans, writes the encoding, exits without running
// the parent's atexit handlers or flushing its stdio buffers.
[[noreturn]] void run_child(int out, const std::function<vcs_scan()>& scan, std::uint64_t bound) {
  ::signal(SIGPIPE, SIG_DFL);
#ifdef __linux__
  limit_growth(RLIMIT_AS, status_bytes("VmSize:"), bound);
  limit_growth(RLIMIT_DATA, status_bytes("VmData:"), bound);
#else
  (void)bound;  // macOS enforces neither limit: the child is still apart from the launcher
#endif
  int code = 0;
  try {
    code = write_scan(out, scan()) ? 0 : 2;
  } catch (const std::bad_alloc&) {
    code = 3;
  } catch (...) {
    code = 4;
  }
  ::_exit(code);
}

vcs_scan failed(const std::string& root, const std::string& why) {
  vcs_scan scan;
  scan.incomplete.push_back({root, "the repository scan " + why, true});
  return scan;
}

// What the child's end said when the answer is not a scan.
std::string why_not(int status, bool have_status, std::uint64_t bound) {
  const std::string mib = std::to_string(bound >> 20) + " MiB";
  if (!have_status) return "gave no result (its memory bound is " + mib + ")";
  if (WIFEXITED(status) && WEXITSTATUS(status) == 3) return "passed its memory bound of " + mib;
  if (WIFSIGNALED(status)) {
    return "was ended by signal " + std::to_string(WTERMSIG(status)) + " (its memory bound is " + mib +
           "; an allocation past it can abort)";
  }
  return "failed (exit " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")";
}

}  // namespace

vcs_scan run_bounded_scan(const std::string& root, const std::function<vcs_scan()>& scan, std::uint64_t memory_bound) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return failed(root, std::string("cannot start: pipe2: ") + std::strerror(errno));
  unique_fd read_end(fds[0]), write_end(fds[1]);
  const pid_t pid = fork_scan_child();
  if (pid < 0) return failed(root, std::string("cannot start: fork: ") + std::strerror(errno));
  if (pid == 0) {
    read_end.reset();
    run_child(write_end.get(), scan, memory_bound);
  }
  write_end.reset();
  // A descriptor for the child: another thread's waitpid(-1) may reap it,
  // and its pid must not be signalled after that.
#ifdef __linux__
  unique_fd child(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
#endif
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(scan_time_budget_seconds + scan_child_grace_seconds);
  std::string bytes;
  std::string why;
  char buffer[65536];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      why = "ran past its time budget of " + std::to_string(scan_time_budget_seconds + scan_child_grace_seconds) + " s";
      break;
    }
    pollfd p{read_end.get(), POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    const ssize_t n = ::read(read_end.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (bytes.size() + static_cast<std::size_t>(n) > memory_bound) {
      why = "answered more than its memory bound of " + std::to_string(memory_bound >> 20) + " MiB";
      break;
    }
    bytes.append(buffer, static_cast<std::size_t>(n));
  }
  read_end.reset();
#ifdef __linux__
  if (!why.empty() && child) (void)::syscall(SYS_pidfd_send_signal, child.get(), SIGKILL, nullptr, 0);
#else
  if (!why.empty()) (void)::kill(pid, SIGKILL);
#endif
  int status = 0;
  const bool have_status = ::waitpid(pid, &status, 0) == pid;
  if (!why.empty()) return failed(root, why);
  if (have_status && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
    return failed(root, why_not(status, have_status, memory_bound));
  }
  auto decoded = decode_scan(bytes);
  if (!decoded) return failed(root, why_not(status, have_status, memory_bound));
  return std::move(*decoded);
}

void fork_scans_without_atfork_handlers() noexcept { plain_fork.store(true, std::memory_order_relaxed); }

}  // namespace cordon::vcs
