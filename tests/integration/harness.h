// harness.h — running the real `cordon` binary on real commands.
//
// Every confinement test runs a process under a real plan and checks both
// the forbidden thing failing (with its exact error) and the allowed thing
// working. The CLI is found through $CORDON_CLI, else the path the build
// baked in, so the same binary can run as root and as an unprivileged user.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace cordon::test {

struct run_result {
  int exit_code = -1;          // cordon's exit status (or 128+N if cordon itself died of N)
  std::string out;             // the command's stdout
  std::string err;             // stderr (the command's and cordon's)
  nlohmann::json report;       // parsed --report file; null when none was written
  double wall_seconds = 0;     // as measured by the test
  // stdout then stderr: a shell reports a failed redirection on its own stderr.
  std::string all() const { return out + err; }
};

// A fresh directory under /tmp, removed (recursively) at destruction.
class temp_dir {
 public:
  explicit temp_dir(const std::string& parent = "/tmp");
  ~temp_dir();
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  const std::string& path() const { return path_; }
  // Writes a file (creating parent directories) and returns its path.
  std::string write(const std::string& relative, const std::string& contents) const;
  std::string mkdir(const std::string& relative) const;

 private:
  std::string path_;
};

// Path of the cordon CLI under test: $CORDON_CLI, else the one the build made.
std::string cordon_cli();

// The source tree (for schemas/): $CORDON_SOURCE_DIR, else the one the build used.
std::string source_dir();

// Runs `cordon run <options> --report <tmp> -- <command...>` with `cwd` as the
// working directory and `extra_env` added to this process's environment.
// `stdin_text` is fed to the command's stdin.
run_result run_cordon(const std::vector<std::string>& options, const std::vector<std::string>& command,
                      const std::string& cwd, const std::vector<std::string>& extra_env = {},
                      const std::string& stdin_text = "");

// Like run_cordon, but the command's stdin is the given descriptor (a
// terminal, an open host file).
run_result run_cordon_with_stdin(int stdin_fd, const std::vector<std::string>& options,
                                 const std::vector<std::string>& command, const std::string& cwd,
                                 const std::vector<std::string>& extra_env = {});

// Shorthand: the default profile, `sh -c script`, in `workspace`.
run_result run_sh(const std::string& workspace, const std::string& script,
                  const std::vector<std::string>& options = {});

// Runs a command on the host (not confined) and returns its exit code; output discarded.
int host_command(const std::vector<std::string>& argv, const std::string& cwd = "/");

// A TCP listener on the host's loopback that accepts and counts connections
// in a background thread. port() is the bound port.
class loopback_server {
 public:
  explicit loopback_server(bool ipv6 = false);
  ~loopback_server();
  int port() const { return port_; }
  int accepted() const;

 private:
  int fd_ = -1;
  int port_ = 0;
  struct state;
  state* state_;
};

// Is any process whose command line contains `marker` alive on the host?
bool process_with_marker_alive(const std::string& marker);

// /proc/<pid>/cmdline as it is (arguments NUL-terminated); empty when the
// process is gone or a zombie. A process may exit while it is read (ESRCH),
// which an std::ifstream turns into an exception: this reads with read(2).
std::string proc_cmdline(const char* pid);

bool running_as_root();

// Validates `report` against schemas/report.v1.schema.json with
// python3-jsonschema (draft 2020-12): "valid", or the errors.
std::string report_schema_verdict(const nlohmann::json& report);

}  // namespace cordon::test
