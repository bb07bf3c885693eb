// Host files reachable through the command's standard descriptors: a host
// regular file, a terminal, /dev/null and a directory handed over as stdio.
// Whatever the command does to descriptors 0-2 (fchmod, futimens, fchown,
// fsetxattr, through a dup, /dev/stdout or /proc/self/fd/N), the caller's file
// keeps its mode, owner and times: the command only ever holds a pipe, a
// private pty or the sandbox's read-only /dev/null (docs/linux-backend.md,
// "Standard descriptors and terminals"). Each test pairs the attempts with
// the working reads and writes.
#include <fcntl.h>
#include <pty.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "escape_support.h"

namespace cordon::test::escape {
namespace {

constexpr time_t kOldTime = 1000000000;  // 2001: any change by the command shows

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void set_old_times(const std::string& path) {
  timespec times[2] = {{kOldTime, 0}, {kOldTime, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0) << path;
}

// cordon run <options> -- <command> with the given descriptors as 0, 1, 2.
// Returns cordon's exit status (128+N if a signal killed it).
int run_with_stdio(int in, int out, int err, const std::vector<std::string>& options,
                   const std::vector<std::string>& command, const std::string& cwd) {
  pid_t pid = ::fork();
  if (pid == 0) {
    // dup2 of a descriptor onto itself keeps its close-on-exec flag: go through a copy.
    int fds[3] = {::fcntl(in, F_DUPFD, 10), ::fcntl(out, F_DUPFD, 10), ::fcntl(err, F_DUPFD, 10)};
    for (int i = 0; i < 3; ++i) ::dup2(fds[i], i);
    exec_in(cwd, cordon_run_argv(options, command));
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Every way the command could reach the file behind descriptor `fd`.
std::vector<std::string> metadata_attempts(int fd) {
  const std::string n = std::to_string(fd);
  static const char* names[] = {"/dev/stdin", "/dev/stdout", "/dev/stderr"};
  return {"fd-chmod", n, "666", "+", "dup-chmod", n, "666", "+", "fd-utimes", n, "+", "fd-chown", n, "+",
          "fd-setxattr", n, "+", "chmod", names[fd], "666", "+", "chmod", "/proc/self/fd/" + n, "666", "+",
          "path-utimes", names[fd], "+", "path-chown", "/proc/self/fd/" + n, "+"};
}

std::vector<std::string> all_attempts() {
  std::vector<std::string> args = {"./probe"};
  for (int fd = 0; fd < 3; ++fd) {
    auto more = metadata_attempts(fd);
    args.insert(args.end(), more.begin(), more.end());
  }
  return args;
}

// What the attempts print on a pipe the command owns: they succeed, and change nothing of the host's.
std::vector<std::string> on_a_pipe() {
  return {"fd-chmod OK", "dup-chmod OK", "fd-utimes OK", "fd-chown OK", "fd-setxattr EPERM", "chmod OK",
          "chmod OK",    "path-utimes OK", "path-chown OK"};
}

struct host_file_state {
  mode_t mode = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  time_t mtime = 0;
  time_t atime = 0;
};

host_file_state state_of(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return {st.st_mode, st.st_uid, st.st_gid, st.st_mtim.tv_sec, st.st_atim.tv_sec};
}

TEST(EscapeStdio, HostFilesAsStdioKeepTheirModeOwnerAndTimes) {
  temp_dir ws, outside("/var/tmp");
  install_probe(ws);
  std::string input = outside.write("input.txt", "input\n");
  std::string output = outside.write("output.txt", "");
  std::string errors = outside.write("errors.txt", "");
  for (const auto& path : {input, output, errors}) {
    ASSERT_EQ(::chmod(path.c_str(), 0600), 0);
    set_old_times(path);
  }
  int in = ::open(input.c_str(), O_RDONLY | O_CLOEXEC);
  int out = ::open(output.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  int err = ::open(errors.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  ASSERT_TRUE(in >= 0 && out >= 0 && err >= 0);
  auto args = all_attempts();
  for (const char* more : {"fd-kind", "0", "+", "fd-kind", "1", "+", "fd-kind", "2", "+", "read-line"}) {
    args.push_back(more);
  }
  int status = run_with_stdio(in, out, err, {}, args, ws.path());
  for (int fd : {in, out, err}) ::close(fd);
  EXPECT_EQ(status, 0) << slurp(errors);
  std::vector<std::string> expected;
  for (int fd = 0; fd < 3; ++fd) {
    auto pipe = on_a_pipe();
    expected.insert(expected.end(), pipe.begin(), pipe.end());
  }
  for (const char* more : {"fd-kind OK pipe", "fd-kind OK pipe", "fd-kind OK pipe", "read-line OK input"}) {
    expected.push_back(more);
  }
  // The writes work: the probe's report reached the caller's file.
  EXPECT_EQ(slurp(output), lines(expected)) << slurp(errors);
  for (const auto& path : {input, output, errors}) {
    host_file_state now = state_of(path);
    EXPECT_EQ(now.mode & 07777, 0600u) << path << ": the command changed the host file's mode";
    EXPECT_EQ(now.uid, ::getuid()) << path;
    EXPECT_EQ(now.gid, ::getgid()) << path;
    EXPECT_NE(now.mtime, 0) << path << ": the command set the host file's times";
    EXPECT_NE(now.atime, 0) << path << ": the command set the host file's times";
    EXPECT_EQ(::getxattr(path.c_str(), "user.cordon-escape", nullptr, 0), -1) << path << ": xattr set";
  }
  EXPECT_EQ(state_of(input).mtime, kOldTime) << "the input's mtime changed";
}

// A terminal the test owns, standing in for the caller's.
class test_terminal {
 public:
  test_terminal() {
    struct winsize size {};
    size.ws_row = 24;
    size.ws_col = 80;
    if (::openpty(&master_, &slave_, name_, nullptr, &size) != 0) master_ = slave_ = -1;
    if (master_ >= 0) ::fcntl(master_, F_SETFD, FD_CLOEXEC);
    if (slave_ >= 0) ::fcntl(slave_, F_SETFD, FD_CLOEXEC);
  }
  ~test_terminal() {
    if (slave_ >= 0) ::close(slave_);
    if (master_ >= 0) ::close(master_);
  }
  test_terminal(const test_terminal&) = delete;
  test_terminal& operator=(const test_terminal&) = delete;
  bool ok() const { return master_ >= 0; }
  int master() const { return master_; }
  int slave() const { return slave_; }
  std::string name() const { return name_; }
  // Everything the terminal shows now (non-blocking).
  std::string drain() const {
    std::string text;
    char buffer[4096];
    int flags = ::fcntl(master_, F_GETFL);
    ::fcntl(master_, F_SETFL, flags | O_NONBLOCK);
    for (int i = 0; i < 1000; ++i) {
      ssize_t n = ::read(master_, buffer, sizeof buffer);
      if (n <= 0) break;
      text.append(buffer, static_cast<std::size_t>(n));
    }
    ::fcntl(master_, F_SETFL, flags);
    return text;
  }

 private:
  int master_ = -1;
  int slave_ = -1;
  char name_[128] = {};
};

std::string without_cr(std::string text) {
  std::string out;
  for (char c : text) {
    if (c != '\r') out += c;
  }
  return out;
}

TEST(EscapeStdio, TerminalAsStdioKeepsItsModeAndTheCommandGetsAPrivateOne) {
  test_terminal terminal;
  if (!terminal.ok()) GTEST_SKIP() << "no pseudo-terminal available: " << std::strerror(errno);
  temp_dir ws;
  install_probe(ws);
  ASSERT_EQ(::chmod(terminal.name().c_str(), 0620), 0);
  set_old_times(terminal.name());
  host_file_state before = state_of(terminal.name());
  auto args = all_attempts();
  for (const char* more : {"fd-kind", "0", "+", "fd-kind", "1", "+", "fd-kind", "2"}) args.push_back(more);
  int status = run_with_stdio(terminal.slave(), terminal.slave(), terminal.slave(), {}, args, ws.path());
  std::string shown = without_cr(terminal.drain());
  EXPECT_EQ(status, 0) << shown;
  // The private pty lives in the sandbox's own devpts, mounted read-only:
  // its mode cannot change either; its times can (they are its own).
  std::vector<std::string> expected;
  for (int fd = 0; fd < 3; ++fd) {
    for (const char* line : {"fd-chmod EROFS", "dup-chmod EROFS", "fd-utimes EROFS", "fd-chown EROFS",
                             "fd-setxattr EROFS", "chmod EROFS", "chmod EROFS", "path-utimes EROFS",
                             "path-chown EROFS"}) {
      expected.push_back(line);
    }
  }
  for (const char* line : {"fd-kind OK tty /dev/pts/0", "fd-kind OK tty /dev/pts/0", "fd-kind OK tty /dev/pts/0"}) {
    expected.push_back(line);
  }
  EXPECT_EQ(shown, lines(expected));
  host_file_state after = state_of(terminal.name());
  EXPECT_EQ(after.mode, before.mode) << "the command changed the caller's terminal's mode";
  // Writes to a terminal move its times forward (the relay writes); the
  // command's futimens({0, 0}) would have set them to 1970.
  EXPECT_GE(after.mtime, before.mtime) << "the command set the caller's terminal's times";
  EXPECT_NE(after.atime, 0) << "the command set the caller's terminal's times";
  EXPECT_EQ(after.uid, before.uid);
}

TEST(EscapeStdio, TerminalWithoutAPtyAllowanceIsRelayedAsAPipe) {
  test_terminal terminal;
  if (!terminal.ok()) GTEST_SKIP() << "no pseudo-terminal available: " << std::strerror(errno);
  temp_dir ws;
  install_probe(ws);
  ASSERT_EQ(::chmod(terminal.name().c_str(), 0620), 0);
  host_file_state before = state_of(terminal.name());
  ASSERT_EQ(::write(terminal.master(), "typed\n", 6), 6);
  std::vector<std::string> args = {"./probe", "fd-kind", "0", "+", "isatty", "0", "+", "chmod", "/dev/stdin", "666",
                                   "+", "dup-chmod", "1", "666", "+", "read-line"};
  // read-only: process.allow_pty is false.
  int status = run_with_stdio(terminal.slave(), terminal.slave(), terminal.slave(), {"--profile", "read-only"}, args,
                              ws.path());
  std::string shown = without_cr(terminal.drain());
  EXPECT_EQ(status, 0) << shown;
  // "typed" is echoed by the caller's terminal itself (it is not raw without a pty).
  EXPECT_NE(shown.find(lines({"fd-kind OK pipe", "isatty ENOTTY", "chmod OK", "dup-chmod OK", "read-line OK typed"})),
            std::string::npos)
      << shown;
  EXPECT_EQ(state_of(terminal.name()).mode, before.mode) << "the command changed the caller's terminal's mode";
}

TEST(EscapeStdio, DevNullAsStdioIsTheSandboxesReadOnlyOne) {
  temp_dir ws;
  install_probe(ws);
  host_file_state before = state_of("/dev/null");
  int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  temp_dir logs;
  std::string output = logs.write("out.txt", "");
  int out = ::open(output.c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_TRUE(null >= 0 && out >= 0);
  int status = run_with_stdio(null, out, null, {},
                              {"./probe", "fd-kind", "0", "+", "fd-chmod", "0", "600", "+", "chmod", "/dev/stderr",
                               "600", "+", "fd-utimes", "2", "+", "fd-read", "0"},
                              ws.path());
  ::close(null);
  ::close(out);
  EXPECT_EQ(status, 0);
  EXPECT_EQ(slurp(output), lines({"fd-kind OK chardev 1:3", "fd-chmod EROFS", "chmod EROFS", "fd-utimes EROFS",
                                  "fd-read OK"}));
  host_file_state after = state_of("/dev/null");
  EXPECT_EQ(after.mode, before.mode) << "the command changed the host's /dev/null";
  EXPECT_EQ(after.mtime, before.mtime);
}

TEST(EscapeStdio, DirectoryAndOPathStdinAreRefused) {
  temp_dir ws, logs;
  install_probe(ws);
  std::string errors = logs.write("err.txt", "");
  std::string output = logs.write("out.txt", "");
  int err = ::open(errors.c_str(), O_WRONLY | O_CLOEXEC);
  int out = ::open(output.c_str(), O_WRONLY | O_CLOEXEC);
  int dir = ::open("/etc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  int path = ::open("/etc/hostname", O_PATH | O_CLOEXEC);
  ASSERT_TRUE(err >= 0 && out >= 0 && dir >= 0 && path >= 0);
  std::vector<std::string> attempt = {"./probe", "fd-openat", "0", "shadow", "+", "create", "ran"};
  EXPECT_EQ(run_with_stdio(dir, out, err, {}, attempt, ws.path()), 125);
  EXPECT_NE(slurp(errors).find("usage_error: standard input (descriptor 0) is a directory"), std::string::npos)
      << slurp(errors);
  EXPECT_EQ(run_with_stdio(out, path, err, {}, attempt, ws.path()), 125);
  EXPECT_NE(slurp(errors).find("standard output (descriptor 1) is an O_PATH descriptor"), std::string::npos)
      << slurp(errors);
  EXPECT_EQ(slurp(output), "");
  EXPECT_EQ(::access((ws.path() + "/ran").c_str(), F_OK), -1) << "the command ran";
  // The working counterpart: a file as stdin is read.
  std::string input = logs.write("in.txt", "from a file\n");
  int in = ::open(input.c_str(), O_RDONLY | O_CLOEXEC);
  EXPECT_EQ(run_with_stdio(in, out, err, {}, {"./probe", "read-line", "+", "create", "ran"}, ws.path()), 0);
  EXPECT_EQ(slurp(output), lines({"read-line OK from a file", "create OK"}));
  for (int fd : {err, out, dir, path, in}) ::close(fd);
}

}  // namespace
}  // namespace cordon::test::escape
