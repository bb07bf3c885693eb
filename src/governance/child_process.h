// child_process.h — runs one program (argv, no shell) with bytes on its
// stdin, collecting its stdout, under a deadline. For the external approver.
#pragma once

#include <spawn.h>
#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "cordon/result.h"

namespace cordon::governance::detail {

struct child_result {
  bool exited = false;   // exited normally
  int exit_code = 0;     // when exited
  int signal = 0;        // when killed
  bool timed_out = false;
  std::string output;    // stdout, at most max_output bytes
};

inline constexpr std::size_t max_output = 64 * 1024;

// posix_spawnp(3) of `argv[0]` with no blocked signals and every disposition
// reset to its default, whatever the calling thread blocks (the CLI blocks
// SIGINT to cancel runs). `actions` may be null. Returns posix_spawnp's result
// (0, or an errno value); `*pid` is set on success.
int spawn_with_clean_signals(pid_t* pid, const posix_spawn_file_actions_t* actions, char* const argv[]);

// posix_spawnp(argv[0]) with stdin and stdout on pipes, stderr inherited,
// every other descriptor closed. When `timeout` passes the child is killed
// (SIGKILL) and reaped; timed_out is set. Errors: io_error (pipe, spawn)
// with errno; usage_error for an empty argv.
result<child_result> run_child(const std::vector<std::string>& argv, const std::string& input,
                               std::chrono::milliseconds timeout);

}  // namespace cordon::governance::detail
