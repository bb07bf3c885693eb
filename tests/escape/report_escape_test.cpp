// The report is the evidence of a run: a command must not be able to make a
// forged report appear where the caller looks, nor make cordon's own write
// replace something that is not a regular file (the atomic rename once
// replaced the host's /dev/stdout symlink with a file). docs/report.md,
// "Where the report goes". Each refusal is paired with the working target.
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "escape_support.h"

namespace cordon::test::escape {
namespace {

namespace fs = std::filesystem;

struct cli_result {
  int exit_code = -1;
  std::string out, err;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// `cordon run <options> -- <command>` in `cwd` with stdout and stderr captured;
// `extra_fd` (if >= 0) stays open in cordon as descriptor `extra_fd_number`.
cli_result run_cli(const std::vector<std::string>& options, const std::vector<std::string>& command,
                   const std::string& cwd, int extra_fd = -1, int extra_fd_number = -1) {
  temp_dir capture;
  std::string out_path = capture.path() + "/out", err_path = capture.path() + "/err";
  pid_t pid = ::fork();
  if (pid == 0) {
    int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int in = ::open("/dev/null", O_RDONLY);
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(err, 2);
    if (extra_fd >= 0) ::dup2(extra_fd, extra_fd_number);
    exec_in(cwd, cordon_run_argv(options, command));
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  cli_result r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(out_path);
  r.err = slurp(err_path);
  return r;
}

bool is_report(const std::string& text) {
  auto parsed = nlohmann::json::parse(text, nullptr, false);
  return parsed.is_object() && parsed.value("schema", 0) == 1 && parsed.contains("outcome");
}

// Names that are not regular files are refused before anything runs, and
// stay what they were: a symlink (as /dev/stdout is), a FIFO, a socket, a
// directory. A regular file in the same directory is replaced by the report.
TEST(ReportTarget, RefusesEverythingButARegularFile) {
  temp_dir ws, host;
  std::string victim = host.write("victim", "host file\n");
  std::string link = ws.path() + "/stdout-link";
  ASSERT_EQ(::symlink(victim.c_str(), link.c_str()), 0);
  std::string fifo = ws.path() + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string sock_path = ws.path() + "/sock";
  int sock = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", sock_path.c_str());
  ASSERT_EQ(::bind(sock, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  std::string dir = ws.mkdir("a-directory");
  std::string marker = ws.path() + "/ran";

  for (const std::string& target : {link, fifo, sock_path, dir}) {
    cli_result r = run_cli({"--report", target}, {"sh", "-c", "touch ran"}, ws.path());
    EXPECT_EQ(r.exit_code, 125) << target << "\n" << r.err;
    EXPECT_NE(r.err.find("only replaces a regular file"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--report -"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(marker)) << "the command ran although its report could not be kept: " << target;
  }
  struct stat st{};
  ASSERT_EQ(::lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(slurp(victim), "host file\n");
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  ASSERT_EQ(::lstat(sock_path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  ::close(sock);

  // The working counterpart: an existing regular file is replaced by the report.
  std::string file = ws.write("report.json", "old\n");
  cli_result r = run_cli({"--report", file}, {"sh", "-c", "touch ran"}, ws.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(is_report(slurp(file)));
  EXPECT_TRUE(fs::exists(marker));
}

// `--report -` writes the report to standard output after the command's own
// output; `--report-fd N` to descriptor N; a descriptor not open for writing
// is refused and nothing runs.
TEST(ReportTarget, StandardOutputAndDescriptor) {
  temp_dir ws, host;
  cli_result r = run_cli({"--report", "-"}, {"sh", "-c", "echo from-the-command"}, ws.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string first = "from-the-command\n";
  ASSERT_EQ(r.out.substr(0, first.size()), first);
  EXPECT_TRUE(is_report(r.out.substr(first.size()))) << r.out;

  std::string report_path = host.path() + "/via-fd.json";
  int fd = ::open(report_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  // The descriptor is cordon's, not the command's: the command cannot write to it
  // (the word is split so that the report's copy of the command line does not contain it).
  r = run_cli({"--report-fd", "7"}, {"sh", "-c", "x=forg; echo ${x}ed >&7; echo tried"}, ws.path(), fd, 7);
  ::close(fd);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "tried\n");
  std::string written = slurp(report_path);
  EXPECT_TRUE(is_report(written)) << written;
  EXPECT_EQ(written.find("forged"), std::string::npos);

  int read_only = ::open(report_path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(read_only, 0);
  r = run_cli({"--report-fd", "7"}, {"sh", "-c", "touch ran"}, ws.path(), read_only, 7);
  ::close(read_only);
  EXPECT_EQ(r.exit_code, 125);
  EXPECT_NE(r.err.find("not open for writing"), std::string::npos) << r.err;
  r = run_cli({"--report-fd", "9"}, {"sh", "-c", "touch ran"}, ws.path());
  EXPECT_EQ(r.exit_code, 125);
  EXPECT_NE(r.err.find("not an open descriptor"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(ws.path() + "/ran"));
}

// A report under the writable workspace: the command moves its directory
// away and puts a forged report where the caller looks. cordon does not
// write into the moved directory and says so (125); the forged file is left,
// named as not this run's. Renaming the report's name into a symlink is
// caught the same way. Working counterpart: a command that only writes
// beside the report, and one that leaves the directory as it found it.
TEST(ReportTarget, DirectoryMovedDuringTheRunIsAnError) {
  temp_dir ws;
  ws.mkdir("out");
  std::string report = ws.path() + "/out/r.json";
  cli_result r = run_cli({"--report", report},
                         {"sh", "-c", "mv out out.moved && mkdir out && echo '{\"forged\": true}' > out/r.json"},
                         ws.path());
  EXPECT_EQ(r.exit_code, 125) << r.err;
  EXPECT_NE(r.err.find("was moved or replaced during the run"), std::string::npos) << r.err;
  EXPECT_EQ(slurp(report), "{\"forged\": true}\n");
  EXPECT_FALSE(fs::exists(ws.path() + "/out.moved/r.json"));

  // The same with a relative target, from the workspace as current directory.
  fs::remove_all(ws.path() + "/out");
  fs::remove_all(ws.path() + "/out.moved");
  ws.mkdir("out");
  r = run_cli({"--report", "out/r.json"}, {"sh", "-c", "mv out out.moved && mkdir out"}, ws.path());
  EXPECT_EQ(r.exit_code, 125) << r.err;
  EXPECT_FALSE(fs::exists(report));

  temp_dir host;
  std::string victim = host.write("victim", "host file\n");
  fs::remove_all(ws.path() + "/out");
  ws.mkdir("out");
  r = run_cli({"--report", report}, {"sh", "-c", "ln -s " + victim + " out/r.json"}, ws.path());
  EXPECT_EQ(r.exit_code, 125) << r.err;
  EXPECT_NE(r.err.find("became a symlink during the run"), std::string::npos) << r.err;
  struct stat st{};
  ASSERT_EQ(::lstat(report.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(slurp(victim), "host file\n");

  // Allowed: writing beside the report, and moving the directory back.
  fs::remove(report);
  r = run_cli({"--report", report}, {"sh", "-c", "echo hi > out/other && mv out o2 && mv o2 out"}, ws.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(is_report(slurp(report)));
  EXPECT_EQ(slurp(ws.path() + "/out/other"), "hi\n");
}

}  // namespace
}  // namespace cordon::test::escape
