#include "harness.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace cordon::test {
namespace fs = std::filesystem;

temp_dir::temp_dir(const std::string& parent) {
  std::string tmpl = parent + "/cordon-test-XXXXXX";
  char* made = ::mkdtemp(tmpl.data());
  if (made == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = made;
}

temp_dir::~temp_dir() {
  std::error_code ec;
  // Make everything removable first (tests create mode-000 and read-only entries).
  for (auto it = fs::recursive_directory_iterator(path_, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_directory(ec) && !it->is_symlink(ec)) ::chmod(it->path().c_str(), 0755);
  }
  fs::remove_all(path_, ec);
}

std::string temp_dir::write(const std::string& relative, const std::string& contents) const {
  fs::path p = fs::path(path_) / relative;
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << contents;
  return p.string();
}

std::string temp_dir::mkdir(const std::string& relative) const {
  fs::path p = fs::path(path_) / relative;
  fs::create_directories(p);
  return p.string();
}

std::string cordon_cli() {
  if (const char* env = std::getenv("CORDON_CLI"); env != nullptr && *env != '\0') return env;
  return CORDON_CLI;
}

std::string source_dir() {
  if (const char* env = std::getenv("CORDON_SOURCE_DIR"); env != nullptr && *env != '\0') return env;
  return CORDON_SOURCE_DIR;
}


run_result run_cordon(const std::vector<std::string>& options, const std::vector<std::string>& command,
                      const std::string& cwd, const std::vector<std::string>& extra_env,
                      const std::string& stdin_text) {
  // stdin comes from a file so that a command that never reads it cannot block us.
  temp_dir input_dir;
  int in = ::open(input_dir.write("stdin", stdin_text).c_str(), O_RDONLY | O_CLOEXEC);
  run_result r = run_cordon_with_stdin(in, options, command, cwd, extra_env);
  ::close(in);
  return r;
}

run_result run_cordon_with_stdin(int stdin_fd, const std::vector<std::string>& options,
                                 const std::vector<std::string>& command, const std::string& cwd,
                                 const std::vector<std::string>& extra_env) {
  temp_dir report_dir;
  std::string report = report_dir.path() + "/report.json";
  std::vector<std::string> args = {cordon_cli(), "run"};
  args.insert(args.end(), options.begin(), options.end());
  // $CORDON_TEST_ACCEPT ("control=level,..."): an explicit relaxation for
  // every run, repeated in its report. The kernel matrix's 6.1 guest sets it
  // (filesystem_write=partial: Landlock ABI 2 has no truncate right) so that
  // linux-os-sandbox runs its probes there instead of refusing each policy.
  if (const char* accept = std::getenv("CORDON_TEST_ACCEPT"); accept != nullptr && *accept != '\0') {
    std::string list = accept;
    for (std::size_t start = 0; start <= list.size();) {
      const std::size_t comma = std::min(list.find(',', start), list.size());
      if (comma > start) {
        args.push_back("--accept");
        args.push_back(list.substr(start, comma - start));
      }
      start = comma + 1;
    }
  }
  args.push_back("--report");
  args.push_back(report);
  args.push_back("--");
  args.insert(args.end(), command.begin(), command.end());

  std::vector<std::string> env_storage;
  auto name_of = [](const std::string& entry) { return entry.substr(0, entry.find('=')); };
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry = *e;
    bool overridden = false;
    for (const auto& extra : extra_env) overridden = overridden || name_of(extra) == name_of(entry);
    if (!overridden) env_storage.push_back(entry);
  }
  env_storage.insert(env_storage.end(), extra_env.begin(), extra_env.end());
  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env_storage) envp.push_back(e.data());
  envp.push_back(nullptr);

  std::string out_path = report_dir.path() + "/out", err_path = report_dir.path() + "/err";
  auto started = std::chrono::steady_clock::now();
  pid_t pid = ::fork();
  if (pid == 0) {
    int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(stdin_fd, 0);
    ::dup2(out, 1);
    ::dup2(err, 2);
    if (::chdir(cwd.c_str()) != 0) ::_exit(250);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(251);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  run_result r;
  r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::ifstream out_file(out_path), err_file(err_path), report_file(report);
  std::stringstream o, e;
  o << out_file.rdbuf();
  e << err_file.rdbuf();
  r.out = o.str();
  r.err = e.str();
  if (report_file) {
    std::stringstream rep;
    rep << report_file.rdbuf();
    r.report = nlohmann::json::parse(rep.str(), nullptr, false);
  }
  return r;
}

run_result run_sh(const std::string& workspace, const std::string& script, const std::vector<std::string>& options) {
  return run_cordon(options, {"sh", "-c", script}, workspace);
}

int host_command(const std::vector<std::string>& args, const std::string& cwd) {
  std::vector<std::string> copy = args;
  std::vector<char*> argv;
  for (auto& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid == 0) {
    int null = ::open("/dev/null", O_RDWR);
    ::dup2(null, 1);
    ::dup2(null, 2);
    if (::chdir(cwd.c_str()) != 0) ::_exit(250);
    ::execvp(argv[0], argv.data());
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

struct loopback_server::state {
  std::atomic<int> accepted{0};
  std::atomic<bool> stop{false};
  std::thread thread;
};

loopback_server::loopback_server(bool ipv6) : state_(new state) {
  fd_ = ::socket(ipv6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (ipv6) {
    sockaddr_in6 addr{};
    addr.sin6_family = AF_INET6;
    addr.sin6_addr = in6addr_loopback;
    ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    socklen_t len = sizeof addr;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin6_port);
  } else {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    socklen_t len = sizeof addr;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
  }
  ::listen(fd_, 16);
  state_->thread = std::thread([this] {
    while (!state_->stop) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) > 0) {
        int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (c >= 0) {
          ++state_->accepted;
          ::close(c);
        }
      }
    }
  });
}

loopback_server::~loopback_server() {
  state_->stop = true;
  state_->thread.join();
  ::close(fd_);
  delete state_;
}

int loopback_server::accepted() const { return state_->accepted; }

std::string proc_cmdline(const char* pid) {
  std::string text;
  const int fd = ::open((std::string("/proc/") + pid + "/cmdline").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  char buffer[4096];
  ssize_t n;
  while ((n = ::read(fd, buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<std::size_t>(n));
  ::close(fd);
  return n < 0 ? std::string() : text;
}

bool process_with_marker_alive(const std::string& marker) {
  std::unique_ptr<DIR, int (*)(DIR*)> proc(::opendir("/proc"), ::closedir);
  if (!proc) return false;
  while (dirent* entry = ::readdir(proc.get())) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    std::string text = proc_cmdline(entry->d_name);
    for (auto& c : text) {
      if (c == '\0') c = ' ';
    }
    // Zombies have an empty cmdline; they are not alive.
    if (text.find(marker) != std::string::npos) return true;
  }
  return false;
}

bool running_as_root() { return ::geteuid() == 0; }

std::string report_schema_verdict(const nlohmann::json& report) {
  temp_dir dir;
  std::string path = dir.write("report.json", report.dump());
  std::string out = dir.path() + "/verdict";
  std::string schema = source_dir() + "/schemas/report.v1.schema.json";
  std::string script =
      "import json, sys, jsonschema\n"
      "schema = json.load(open(sys.argv[1]))\n"
      "jsonschema.Draft202012Validator.check_schema(schema)\n"
      "errors = list(jsonschema.Draft202012Validator(schema).iter_errors(json.load(open(sys.argv[2]))))\n"
      "open(sys.argv[3], 'w').write('valid' if not errors else '; '.join(e.message for e in errors))\n";
  int status = host_command({"python3", "-c", script, schema, path, out});
  std::ifstream in(out);
  std::string verdict((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return status == 0 ? verdict : "python3 jsonschema failed with status " + std::to_string(status);
}

}  // namespace cordon::test
