// cordon/launch.h — what a launcher is asked to run, and what it returns.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cordon {

struct launch_request {
  std::vector<std::string> argv;             // argv[0] is looked up in the sandbox's PATH
  std::string working_directory;             // absolute; empty = the workspace, else "/"
  std::vector<std::string> host_environment; // "NAME=VALUE" entries the policy may pass through
};

// A kind of attempt that confinement stopped.
struct violation {
  std::string kind;    // e.g. "seccomp", "network_connect"
  std::string target;  // e.g. syscall name, address
  std::uint64_t count = 0;
};

struct run_outcome {
  bool exited = false;          // the command exited normally
  int exit_code = 0;            // valid when exited
  int signal = 0;               // terminating signal when !exited
  bool timed_out = false;       // the wall-clock timeout fired and killed the tree
  bool interrupted = false;     // cordon received SIGINT/SIGTERM/SIGHUP and forwarded it
  std::int64_t wall_ms = 0;     // launch to exit of the whole tree, milliseconds
  std::int64_t user_cpu_ms = 0; // CPU time of reaped descendants, milliseconds
  std::int64_t system_cpu_ms = 0;
  std::uint64_t max_rss_bytes = 0;      // largest resident set of any one process in the tree
  // With a cgroup for the run: the tree's peak memory (bytes) and CPU time
  // (milliseconds), as the kernel accounted them.
  std::optional<std::uint64_t> peak_memory_bytes;
  std::optional<std::uint64_t> tree_cpu_ms;
  bool memory_limit_hit = false;   // the memory controller killed a process (OOM)
  bool process_limit_hit = false;  // a fork was refused at the process ceiling
  bool cpu_limit_hit = false;      // the tree used its CPU time and was killed
  std::vector<std::string> environment_names;  // names (never values) passed to the command
  std::vector<std::string> mounts;      // the mount table applied, one line per mount, in order
  std::vector<violation> violations;
  std::vector<std::string> warnings;    // found at launch (e.g. an absent .gitmodules)
  std::string working_directory;        // inside the sandbox
};

}  // namespace cordon
