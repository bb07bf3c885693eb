#include "escape_support.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

extern char** environ;

namespace cordon::test::escape {
namespace fs = std::filesystem;

namespace {
std::string from_env_or(const char* name, const char* fallback) {
  if (const char* env = std::getenv(name); env != nullptr && *env != '\0') return env;
  return fallback;
}
}  // namespace

std::string probe_binary() { return from_env_or("CORDON_ESCAPE_PROBE", CORDON_ESCAPE_PROBE); }
std::string setuid_helper_binary() { return from_env_or("CORDON_ESCAPE_HELPER", CORDON_ESCAPE_HELPER); }

void install_probe(const temp_dir& dir) {
  fs::path target = fs::path(dir.path()) / "probe";
  fs::copy_file(probe_binary(), target, fs::copy_options::overwrite_existing);
  fs::permissions(target, fs::perms(0755));
}

run_result run_probe(const temp_dir& ws, const std::vector<std::string>& args, const std::vector<std::string>& options,
                     const std::vector<std::string>& extra_env) {
  std::vector<std::string> command = {"./probe"};
  command.insert(command.end(), args.begin(), args.end());
  return run_cordon(options, command, ws.path(), extra_env);
}

std::string lines(const std::vector<std::string>& expected) {
  std::string out;
  for (const auto& line : expected) out += line + "\n";
  return out;
}

std::string write_policy(const temp_dir& dir, const std::string& filesystem, const std::string& network,
                         const std::string& process, const std::string& enforcement) {
  std::string body = R"({"schema_version": 1, "name": "escape-test", "filesystem": )" + filesystem +
                     R"(, "network": )" + network + R"(, "process": )" + process +
                     R"(, "environment": {"set": {"PATH": "/usr/bin:/bin"}}, "enforcement": )" + enforcement + "}";
  return dir.write("policy-" + unique_token() + ".json", body);
}

std::string unique_token() {
  static std::atomic<int> counter{0};
  std::random_device rd;
  return std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" + std::to_string(rd() % 1000000);
}

host_process::host_process() {
  std::random_device rd;
  // A duration nobody else uses, so the command line is recognizable; it ends by itself within an hour.
  std::string duration = "3" + std::to_string(rd() % 100000 + 100000) + ".25";
  pid_ = ::fork();
  if (pid_ == 0) {
    int null = ::open("/dev/null", O_RDWR);
    ::dup2(null, 0);
    ::dup2(null, 1);
    ::dup2(null, 2);
    ::execlp("sleep", "sleep", duration.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
}

host_process::~host_process() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
}

bool host_process::alive() const {
  int status = 0;
  return pid_ > 0 && ::waitpid(pid_, &status, WNOHANG) == 0;
}

std::string errno_name(int err) {
  const char* name = ::strerrorname_np(err);
  return name != nullptr ? name : std::to_string(err);
}

std::string ids_line() {
  return "ids OK uid=" + std::to_string(::getuid()) + " euid=" + std::to_string(::geteuid());
}

bool ran_os_sandbox(const run_result& r) {
  return r.report.is_object() && r.report.contains("backend") &&
         r.report["backend"].value("name", "") == "linux-os-sandbox";
}

void expect_claim(const run_result& r, const std::string& control, const std::string& level,
                  const std::string& words) {
  ASSERT_TRUE(r.report.is_object() && r.report.contains("controls")) << r.all();
  const auto& c = r.report["controls"][control];
  EXPECT_NE(("|" + level + "|").find("|" + c.value("level", "") + "|"), std::string::npos)
      << control << ": " << c.dump();
  const std::string text = c.value("mechanism", "") + " | " + c.value("detail", "");
  EXPECT_NE(text.find(words), std::string::npos) << control << " does not say '" << words << "': " << c.dump();
}

std::string os_sandbox_write_refusal(const std::string& path) {
  struct statvfs host {};
  if (::statvfs(path.c_str(), &host) == 0 && (host.f_flag & ST_RDONLY) != 0) return "EROFS";
  return "EACCES";
}

bool claims_signal_scope(const run_result& r) {
  if (!r.report.is_object() || !r.report.contains("controls")) return false;
  const std::string detail = r.report["controls"]["privilege"].value("detail", "");
  return detail.find("signals to processes outside the sandbox refused") != std::string::npos;
}

std::vector<std::string> cordon_run_argv(const std::vector<std::string>& options,
                                         const std::vector<std::string>& command) {
  // --no-summary: on a terminal the run summary would follow the probe's own
  // output on stderr (docs/cli.md); these tests read only the probe's.
  std::vector<std::string> args = {cordon_cli(), "run", "--no-summary"};
  args.insert(args.end(), options.begin(), options.end());
  args.push_back("--");
  args.insert(args.end(), command.begin(), command.end());
  return args;
}

void exec_in(const std::string& cwd, std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  if (::chdir(cwd.c_str()) != 0) ::_exit(250);
  ::execv(argv[0], argv.data());
  ::_exit(251);
}

}  // namespace cordon::test::escape
