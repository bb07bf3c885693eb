// Interactive terminals: `cordon run -- bash -i` driven through a real pty
// the test opens (forkpty(3)), as a user's terminal emulator would. Job
// control works inside (Ctrl-Z, fg, Ctrl-C reach the sandboxed foreground
// job, not cordon), the window size follows the caller's, ttyname() names
// the private pty, the caller's terminal settings come back after the run,
// and the timeout holds while cordon itself is stopped (docs/linux-backend.md,
// "Standard descriptors and terminals").
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <thread>

#include "escape_support.h"

namespace cordon::test::escape {
namespace {

using clock_type = std::chrono::steady_clock;

// cordon on the slave side of a pty the test holds the master of.
class interactive_run {
 public:
  interactive_run(const std::vector<std::string>& options, const std::vector<std::string>& command,
                  const std::string& cwd) {
    struct winsize size {};
    size.ws_row = 24;
    size.ws_col = 80;
    pid_ = ::forkpty(&master_, nullptr, nullptr, &size);
    if (pid_ == 0) {
      ::setenv("TERM", "dumb", 1);
      exec_in(cwd, cordon_run_argv(options, command));
    }
    if (master_ >= 0) ::fcntl(master_, F_SETFD, FD_CLOEXEC);
  }
  ~interactive_run() {
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (master_ >= 0) ::close(master_);
  }
  interactive_run(const interactive_run&) = delete;
  interactive_run& operator=(const interactive_run&) = delete;

  bool ok() const { return pid_ > 0 && master_ >= 0; }
  pid_t pid() const { return pid_; }
  int master() const { return master_; }

  void send(const std::string& bytes) { ASSERT_EQ(::write(master_, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size())); }

  // Reads until the screen so far contains `text` (after the last call's
  // match) or `limit` passes. True when found.
  bool wait_for(const std::string& text, std::chrono::milliseconds limit = std::chrono::seconds(10)) {
    auto end = clock_type::now() + limit;
    while (true) {
      std::size_t at = screen_.find(text, consumed_);
      if (at != std::string::npos) {
        consumed_ = at + text.size();
        return true;
      }
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - clock_type::now()).count();
      if (left <= 0) return false;
      pollfd p{master_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(std::min<long long>(left, 100))) <= 0) continue;
      char buffer[4096];
      ssize_t n = ::read(master_, buffer, sizeof buffer);
      if (n <= 0) return false;  // EIO: the other side is gone
      screen_.append(buffer, static_cast<std::size_t>(n));
    }
  }

  // cordon's exit status, waiting at most `limit`; -1 if it is still running.
  int wait_exit(std::chrono::milliseconds limit = std::chrono::seconds(10)) {
    auto end = clock_type::now() + limit;
    while (clock_type::now() < end) {
      wait_for("\x01never\x01", std::chrono::milliseconds(50));  // keep the pty drained
      int status = 0;
      pid_t done = ::waitpid(pid_, &status, WNOHANG);
      if (done == pid_) {
        reaped_ = true;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
    }
    return -1;
  }

  const std::string& screen() const { return screen_; }

 private:
  pid_t pid_ = -1;
  int master_ = -1;
  bool reaped_ = false;
  std::string screen_;
  std::size_t consumed_ = 0;
};

// The state (proc(5): R, S, T, ...) of the host's process with exactly this
// command line, or 0 when there is none (zombies have none).
char process_state(const std::string& cmdline) {
  std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir("/proc"), ::closedir);
  if (!d) return 0;
  while (dirent* e = ::readdir(d.get())) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::string text = proc_cmdline(e->d_name);  // harness.h: a process may exit meanwhile
    for (auto& c : text) c = c == '\0' ? ' ' : c;
    if (text != cmdline + " ") continue;
    std::ifstream in(std::string("/proc/") + e->d_name + "/stat");
    const std::string stat((std::istreambuf_iterator<char>(in)), {});
    const auto end = stat.rfind(')');  // the name may hold spaces
    return end != std::string::npos && end + 2 < stat.size() ? stat[end + 2] : 0;
  }
  return 0;
}

// Is a process with exactly this command line running on the host?
bool running(const std::string& cmdline) { return process_state(cmdline) != 0; }

// Waits (polling, within 10 s) until `accept` takes the state of the
// process with exactly this command line.
template <typename Accept>
bool state_becomes(const std::string& cmdline, Accept accept) {
  for (int i = 0; i < 2000; ++i) {
    if (accept(process_state(cmdline))) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

const std::vector<std::string> kBash = {"bash", "--norc", "--noprofile", "-i"};

TEST(Terminal, BashHasJobControlCtrlZFgAndCtrlC) {
  temp_dir ws;
  interactive_run run({}, kBash, ws.path());
  ASSERT_TRUE(run.ok()) << std::strerror(errno);
  run.send("PS1='PROMPT> '; set -o | grep -w monitor; tty\n");
  ASSERT_TRUE(run.wait_for("monitor        \ton")) << run.screen();
  // ttyname() works: the private pty, inside the sandbox's own /dev.
  ASSERT_TRUE(run.wait_for("/dev/pts/0")) << run.screen();
  // The job carries a duration of this test's own, to find it among the
  // host's processes: Ctrl-Z once it runs (bash gives it the terminal before
  // the exec), Ctrl-C once fg has woken it (the terminal first, then SIGCONT).
  const std::string job = "sleep 40." + std::to_string(::getpid() % 1000);
  run.send(job + "\n");
  ASSERT_TRUE(state_becomes(job, [](char s) { return s != 0; })) << run.screen();
  run.send("\x1a");  // Ctrl-Z: the line discipline of the private pty stops the foreground job
  ASSERT_TRUE(run.wait_for("Stopped")) << run.screen();
  run.send("jobs -l\n");
  ASSERT_TRUE(run.wait_for(job)) << run.screen();
  run.send("fg\n");
  ASSERT_TRUE(run.wait_for(job)) << run.screen();
  ASSERT_TRUE(state_becomes(job, [](char s) { return s != 0 && s != 'T'; })) << run.screen();
  run.send("\x03");  // Ctrl-C: interrupts the job, not the session
  run.send("echo session-$((6*7))\n");
  ASSERT_TRUE(run.wait_for("session-42")) << run.screen();
  run.send("exit 3\n");
  EXPECT_EQ(run.wait_exit(), 3) << run.screen();
}

TEST(Terminal, WindowSizeIsForwarded) {
  temp_dir ws;
  interactive_run run({}, kBash, ws.path());
  ASSERT_TRUE(run.ok());
  run.send("stty size; echo first-done\n");
  ASSERT_TRUE(run.wait_for("24 80")) << run.screen();
  ASSERT_TRUE(run.wait_for("first-done")) << run.screen();
  struct winsize size {};
  size.ws_row = 33;
  size.ws_col = 101;
  ASSERT_EQ(::ioctl(run.master(), TIOCSWINSZ, &size), 0);  // the caller's terminal gets SIGWINCH: cordon forwards
  // The forwarding is asynchronous: ask again until the new size shows
  // (within 10 s), rather than once after a fixed pause.
  bool resized = false;
  for (int i = 0; i < 50 && !resized; ++i) {
    run.send("stty size\n");
    resized = run.wait_for("33 101", std::chrono::milliseconds(200));
  }
  EXPECT_TRUE(resized) << run.screen();
  run.send("exit\n");
  EXPECT_EQ(run.wait_exit(), 0) << run.screen();
}

TEST(Terminal, CallersSettingsAreRestoredAfterExitAndTimeout) {
  temp_dir ws;
  for (const char* how : {"exit", "timeout"}) {
    int master = -1, slave = -1;
    ASSERT_EQ(::openpty(&master, &slave, nullptr, nullptr, nullptr), 0);
    termios before{};
    ASSERT_EQ(::tcgetattr(slave, &before), 0);
    std::vector<std::string> command = std::string(how) == "exit" ? std::vector<std::string>{"true"}
                                                                   : std::vector<std::string>{"sleep", "30"};
    pid_t pid = ::fork();
    if (pid == 0) {
      ::setsid();
      ::ioctl(slave, TIOCSCTTY, 0);
      for (int i = 0; i < 3; ++i) ::dup2(slave, i);
      exec_in(ws.path(), cordon_run_argv({"--timeout", "1"}, command));
    }
    bool saw_raw = false;
    int status = 0;
    for (int i = 0; i < 400 && ::waitpid(pid, &status, WNOHANG) == 0; ++i) {
      termios during{};
      if (::tcgetattr(slave, &during) == 0 && (during.c_lflag & ICANON) == 0) saw_raw = true;
      char buffer[256];
      ::fcntl(master, F_SETFL, O_NONBLOCK);
      while (::read(master, buffer, sizeof buffer) > 0) {
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_TRUE(WIFEXITED(status)) << how;
    EXPECT_EQ(WEXITSTATUS(status), std::string(how) == "exit" ? 0 : 124) << how;
    if (std::string(how) == "timeout") {
      EXPECT_TRUE(saw_raw) << "the terminal was never raw during the run";
    }
    termios after{};
    ASSERT_EQ(::tcgetattr(slave, &after), 0);
    EXPECT_EQ(after.c_lflag, before.c_lflag) << how;
    EXPECT_EQ(after.c_iflag, before.c_iflag) << how;
    EXPECT_EQ(after.c_oflag, before.c_oflag) << how;
    ::close(slave);
    ::close(master);
  }
}


// Ctrl-Z (SIGTSTP) cannot stop cordon, and SIGSTOP, which cannot be
// refused, does not stretch the timeout: PID 1 holds the deadline.
TEST(Terminal, TimeoutHoldsWhileCordonIsStopped) {
  temp_dir ws;
  const std::string duration = "41." + std::to_string(::getpid() % 1000);
  interactive_run run({"--timeout", "1.5"}, {"sleep", duration}, ws.path());
  ASSERT_TRUE(run.ok());
  auto started = clock_type::now();
  for (int i = 0; i < 100 && !running("sleep " + duration); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(running("sleep " + duration)) << "the command never started";
  ASSERT_EQ(::kill(run.pid(), SIGTSTP), 0);  // ignored by cordon for the run
  ASSERT_EQ(::kill(run.pid(), SIGSTOP), 0);
  while (clock_type::now() - started < std::chrono::milliseconds(2500) ) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(running("sleep " + duration)) << "the tree outlived --timeout while cordon was stopped";
  int status = 0;
  EXPECT_EQ(::waitpid(run.pid(), &status, WNOHANG | WUNTRACED), run.pid());
  EXPECT_TRUE(WIFSTOPPED(status)) << "cordon should still be stopped (SIGSTOP)";
  ASSERT_EQ(::kill(run.pid(), SIGCONT), 0);
  EXPECT_EQ(run.wait_exit(), 124) << run.screen();
}

TEST(Terminal, InjectionReachesOnlyThePrivatePty) {
  temp_dir ws;
  install_probe(ws);
  interactive_run run({}, {"./probe", "tiocsti", "0", "+", "open-write", "/dev/tty", "+", "fd-kind", "0"}, ws.path());
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run.wait_exit(), 0) << run.screen();
  std::string shown;
  for (char c : run.screen()) {
    if (c != '\r') shown += c;
  }
  // seccomp refuses TIOCSTI; /dev/tty is the private pty (its controlling terminal).
  EXPECT_EQ(shown, lines({"tiocsti EPERM", "open-write OK", "fd-kind OK tty /dev/pts/0"}));
}

// What reaches the caller's terminal passes the escape sequence filter
// (docs/linux-backend.md, "Standard descriptors and terminals"): a clipboard write, a title
// report and tmux's passthrough are removed, text and colours arrive as
// written, through the private pty (the default profile) and through a pipe
// relayed to the terminal (read-only: no pty).
TEST(Terminal, EscapeSequencesBeyondDrawingNeverReachTheCallersTerminal) {
  const std::string script =
      R"(printf 'a\033]52;c;ZXZpbA==\007b\033[21tc\033Ptmux;x\033\\d\033[1me\033[0m\n')";
  for (const std::vector<std::string>& options : {std::vector<std::string>{}, {"--profile", "read-only"}}) {
    SCOPED_TRACE(options.empty() ? "private pty" : "relayed pipe");
    temp_dir ws;
    interactive_run run(options, {"/bin/sh", "-c", script}, ws.path());
    ASSERT_TRUE(run.ok());
    EXPECT_EQ(run.wait_exit(), 0) << run.screen();
    std::string shown;
    for (char c : run.screen()) {
      if (c != '\r') shown += c;
    }
    EXPECT_EQ(shown, "abcd\x1b[1me\x1b[0m\n");
  }
}

}  // namespace
}  // namespace cordon::test::escape
