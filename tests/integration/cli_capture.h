// cli_capture.h — running `cordon <subcommand>` (not `run`) and keeping its
// output, for tests of the informational commands.
#pragma once

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "harness.h"

namespace cordon::test {

struct captured {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs the CLI under test with `args` in `cwd`; stdin is `stdin_text`
// (from a file), /dev/null when empty.
inline captured run_cli(const std::vector<std::string>& args, const std::string& cwd,
                        const std::string& stdin_text = "") {
  temp_dir dir;
  const std::string in_path = stdin_text.empty() ? "/dev/null" : dir.write("in", stdin_text);
  std::vector<std::string> storage = {cordon_cli()};
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string out_path = dir.path() + "/out", err_path = dir.path() + "/err";
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int in = ::open(in_path.c_str(), O_RDONLY);
    const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(err, 2);
    if (::chdir(cwd.c_str()) != 0) ::_exit(250);
    ::execv(argv[0], argv.data());
    ::_exit(251);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  captured c;
  c.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::ifstream o(out_path), e(err_path);
  std::stringstream so, se;
  so << o.rdbuf();
  se << e.rdbuf();
  c.out = so.str();
  c.err = se.str();
  return c;
}

// `cordon probe` (JSON), parsed; null when it printed no JSON.
inline nlohmann::json probe_json() {
  captured c = run_cli({"probe"}, "/");
  return nlohmann::json::parse(c.out, nullptr, false);
}

}  // namespace cordon::test
