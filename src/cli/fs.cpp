// `cordon fs --policy P --workspace W`: the confined filesystem worker on
// this process's stdin and stdout, for hosts in any language
// (docs/fs-worker.md). Requests are relayed line by line; at end of input
// the worker's final report is the last line.
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/command.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/profile_dirs.h"
#include "cli/workspace.h"
#include "cordon/fs_worker.h"
#include "cordon/policy_json.h"
#include "cordon/profiles.h"

namespace cordon::cli {
namespace {

// Reads one line from `in` (without its newline) into `line`, keeping at
// most `max` bytes: a longer line is read to its end and `too_long` set,
// so a host's oversized request costs no more memory than the limit.
// False at the end of input.
bool read_request_line(std::istream& in, std::string& line, std::size_t max, bool& too_long) {
  line.clear();
  too_long = false;
  std::streambuf* buffer = in.rdbuf();
  for (int c = buffer->sbumpc();; c = buffer->sbumpc()) {
    if (c == std::char_traits<char>::eof()) return !line.empty() || too_long;
    if (c == '\n') return true;
    if (line.size() < max) {
      line.push_back(static_cast<char>(c));
    } else {
      too_long = true;
    }
  }
}

// The worker's own answer to a request line over the limit (docs/fs-worker.md).
std::string too_large_answer(std::size_t max) {
  return nlohmann::json{{"id", nullptr},
                        {"ok", false},
                        {"error",
                         {{"code", "request_too_large"},
                          {"message", "the request line is longer than " + std::to_string(max) + " bytes"}}}}
      .dump();
}

struct fs_options {
  std::string policy_file;
  std::string profile;
  std::string workspace;
  std::string worker;
  unsigned deadline_ms = 10000;
};

int serve_fs(const fs_options& options) {
  const char* home = std::getenv("HOME");
  auto workspace = choose_workspace(options.workspace, current_directory(), home != nullptr ? home : "");
  if (!workspace) {
    print_error(workspace.error_value());
    return exit_cordon_failed;
  }
  // A profile by name as `cordon run --profile` takes it: built-in, user or system (profile_dirs.h).
  auto chosen = load_policy_or_profile(options.policy_file, options.profile);
  if (!chosen) {
    print_policy_file_error(options.policy_file, chosen.error_value());
    return exit_cordon_failed;
  }
  sandbox_policy* policy = &chosen->policy;
  const std::string worker = find_fs_worker(options.worker);
  if (worker.empty()) {
    std::cerr << "cordon: usage_error: no cordon-fs-worker executable (--worker or $CORDON_FS_WORKER)\n";
    return exit_cordon_failed;
  }
  auto backend = make_host_backend();
  compile_options compile;
  compile.workspace = workspace->workspace;
  auto compiled = backend->compile(*policy, compile);
  if (compiled && !fs_worker_visible(*compiled.plan(), worker)) {
    // One file more, read-only: the worker itself (it is static).
    std::cerr << "cordon: note: the policy does not show " << worker
              << " inside the sandbox; it is added read-only for the worker's run\n";
    compiled = backend->compile(with_fs_worker_readable(*policy, worker), compile);
  }
  if (!compiled) {
    // `cordon fs` has no --accept or --cgroup-parent, and no flag edits its policy.
    print_compile_failure(compiled.failure(), false, options.policy_file);
    return exit_cordon_failed;
  }
  fs_worker_options worker_options;
  worker_options.worker_path = worker;
  worker_options.request_deadline = std::chrono::milliseconds(options.deadline_ms);
  auto started = fs_worker::start(*compiled.plan(), worker_options);
  if (!started) {
    print_error(started.error_value());
    return exit_cordon_failed;
  }
  std::string line;
  int status = 0;
  bool too_long = false;
  while (read_request_line(std::cin, line, worker_options.max_request_bytes, too_long)) {
    if (too_long) {  // answered here, as the worker would; the session goes on
      std::cout << too_large_answer(worker_options.max_request_bytes) << "\n" << std::flush;
      continue;
    }
    if (line.empty()) continue;
    auto answer = started->call(line);
    if (!answer) {
      print_error(answer.error_value());
      status = exit_cordon_failed;
      break;
    }
    std::cout << *answer << "\n" << std::flush;
  }
  auto report = started->finish();
  if (!report.report_json.empty()) std::cout << report.report_json << "\n" << std::flush;
  if (report.run.failure) {
    print_error(*report.run.failure);
    return exit_cordon_failed;
  }
  return status;
}

// `cordon fs`.
struct fs_command final : command {
  fs_options options;
  void add_options(CLI::App& app) override {
    app.footer(
        "Protocol, operations and error codes: docs/fs-worker.md.\n\nExit status: 0 at the end of input; 125 the policy "
        "is refused, the worker fails, or bad usage.");
    app.add_option("--policy", options.policy_file, "Policy file (JSON)")->type_name("FILE");
    app.add_option("--profile", options.profile,
                   "Profile by name: built-in (default workspace-write) or a user or system profile (cordon profile list)")
        ->type_name("NAME")
        ->excludes("--policy");
    app.add_option("--workspace", options.workspace, "The workspace ({workspace}); default as for `cordon run`")
        ->type_name("DIR");
    app.add_option("--worker", options.worker, "The cordon-fs-worker executable (default: installed or $CORDON_FS_WORKER)")
        ->type_name("PATH");
    app.add_option("--deadline-ms", options.deadline_ms, "Per-request deadline in milliseconds (default 10000)")
        ->check(CLI::Range(1u, 3600000u));
  }
  int execute() override { return serve_fs(options); }
};

}  // namespace

std::unique_ptr<command> make_fs_command() { return std::make_unique<fs_command>(); }

}  // namespace cordon::cli
