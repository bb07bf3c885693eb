// `cordon run`: build a policy (file, profile, or the default), compile it,
// launch the command, write the report.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "cli/capped_run.h"
#include "cli/command.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "core/git_identity.h"
#include "cli/output.h"
#include "cli/plan_details.h"
#include "cli/profile_dirs.h"
#include "cli/report_view.h"
#include "cli/workspace.h"
#include "cordon/cordon.h"
#include "cordon/run.h"

extern char** environ;

namespace cordon::cli {
namespace {

// --max-output BYTES (0: not given): the output relayed within a cap
// (cli/capped_run.h). Beside run_options rather than in it, to keep this
// flag's change to this file.
std::uint64_t max_output_flag = 0;

constexpr const char* kRunHelp = R"(The workspace is --workspace DIR, else the git repository that holds the
current directory, else the current directory. The command starts in the
current directory when it is inside the workspace, else in the workspace.
/, system directories, /tmp itself and your home directory itself are refused
as workspaces. Without --policy or --profile, the built-in profile
'workspace-write' is used.

The policy shortcuts (--ro, --rw, --deny, --net, --allow-host, --env, --setenv,
--memory, --max-procs, --cpu, --timeout, --accept) edit that policy before it is
compiled; the result is compiled and enforced like any policy, so a limit the
host can only enforce partially (e.g. --memory without a writable cgroup: a
per-process rlimit) is refused unless the policy accepts that level (--accept memory=partial, or
"enforcement": {"memory": "partial"} in the policy). Relative paths are taken
from the current directory. `cordon policy explain` shows what a policy with
the same flags would get on this host.

Filtered network (--allow-host, or "mode": "filtered"): the command has no
route out; a broker outside the sandbox, at 127.0.0.1:3128 and
/dev/cordon-proxy.sock inside (HTTP CONNECT, HTTP proxy, SOCKS5; HTTP_PROXY,
HTTPS_PROXY, ALL_PROXY are set), lets through only what the rules allow, and
every decision is in the report. An allowed name never reaches a loopback or
private address; only an IP rule such as --allow-host 127.0.0.1:8080 does.

--max-output BYTES passes the command's stdout and stderr through cordon: the
first BYTES/2 of each stream as they come, the last BYTES/2 at the end, and
between them a "cordon: --max-output:" line on stderr saying how much was
dropped (also in the report's "output"). The command's output then reaches a
pipe, not the terminal.

At the end of a run, --summary (the default when stderr is a terminal;
--no-summary turns it off) prints a few "cordon: " lines on stderr: outcome and
exit, what was enforced, what was not and why, violations, warnings. `cordon
report show FILE` prints a --report file as tables.

Exit status:
  the command's own exit code, or 128+N when signal N killed it
  124  the timeout fired (the whole tree was killed)
  125  cordon refused or failed: bad usage, invalid policy, a control the host
       cannot enforce, sandbox setup failure, or the report could not be written
  126  the command was found but cannot be executed
  127  the command was not found inside the sandbox)";

// After a run the process only has to exit: freeing the plan, the policy and
// the parser's state would touch (and, after clone3, copy) heap pages for
// nothing. Sanitizer builds return normally so that the leak check still sees
// everything.
#if defined(__SANITIZE_ADDRESS__)
#define CORDON_CLI_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CORDON_CLI_SANITIZED 1
#endif
#endif
int exit_after_run(int code) {
  await_exiting_sandboxes();  // the run's PID 1 is reaped here, not left to init (cordon/run.h)
#ifndef CORDON_CLI_SANITIZED
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  ::_exit(code);
#endif
  return code;
}

// -v: what cordon decided before it runs the command, and why.
void print_run_decisions(const sandbox_plan& plan, const std::string& source, bool unedited,
                         const workspace_choice& workspace, const launch_request& request) {
  verbose_line() << "policy " << (plan.policy().name.empty() ? "(unnamed)" : plan.policy().name) << " from " << source
                 << (unedited ? "" : ", edited by flags") << "\n";
  verbose_line() << "workspace " << workspace.workspace << " (" << workspace.reason << "); the command starts in "
                 << workspace.working_directory << "\n";
  verbose_line() << "backend " << plan.backend_name() << " on " << plan.platform() << ", isolation "
                 << to_string(plan.isolation()) << "\n";
  for (const auto& [which, status] : plan.contract()) {
    verbose_line() << "control " << to_string(which) << ": " << to_string(status.level)
                   << (status.mechanism.empty() ? "" : " by " + status.mechanism)
                   << (status.detail.empty() ? "" : " (" + status.detail + ")") << "\n";
  }
  for (const auto& mount : plan_mounts(plan)) verbose_line() << "mount " << mount << "\n";
  for (const auto& variable : plan_environment(plan, request.host_environment)) {
    verbose_line() << "environment " << variable << "\n";
  }
  for (const auto& w : plan.warnings()) verbose_line() << "warning " << w << "\n";
}

}  // namespace

void print_compile_failure(const compile_failure& f, bool run_flags, const std::string& policy_file) {
  // One line per problem: each policy error with its location, or the code and each blocker.
  if (f.errors.empty()) std::cerr << "cordon: " << to_string(f.code) << ": " << f.message << "\n";
  if (!policy_file.empty()) {
    print_policy_errors(policy_file, f.code, f.errors);
  } else {
    for (const auto& e : f.errors) {
      std::cerr << "cordon: " << to_string(f.code) << ": " << (e.location.empty() ? "" : e.location + ": ")
                << e.reason << "\n";
    }
  }
  for (const auto& b : f.blockers) {
    std::cerr << "cordon: blocker: " << b.subject_name() << ": required " << b.required_name() << ", available "
              << b.available_name()
              << ": " << b.reason << "\n";
  }
  print_blocker_hints(f.blockers, run_flags);
}

std::string current_directory() {
  char buffer[4096];
  return ::getcwd(buffer, sizeof buffer) != nullptr ? buffer : "/";
}

void print_error(const error& err) {
  // "cordon: code: location: message: strerror", and one such line per extra
  // line of a multi-line message (the reader lists every structural problem).
  std::string message = err.message;
  std::string first = message.substr(0, message.find('\n'));
  std::cerr << "cordon: " << paint(std::string(to_string(err.code)), "31", output().color_stderr) << ": "
            << (err.location.empty() ? "" : err.location + ": ") << first;
  if (err.sys_errno != 0) std::cerr << ": " << std::error_code(err.sys_errno, std::generic_category()).message();
  std::cerr << "\n";
  for (auto pos = message.find('\n'); pos != std::string::npos;) {
    auto next = message.find('\n', pos + 1);
    std::string line = message.substr(pos + 1, next == std::string::npos ? std::string::npos : next - pos - 1);
    if (!line.empty()) std::cerr << "cordon: " << to_string(err.code) << ": " << line << "\n";
    pos = next;
  }
}

void print_policy_errors(const std::string& file, error_code code, const std::vector<policy_error>& errors) {
  for (const auto& e : errors) {
    std::cerr << "cordon: " << paint(std::string(to_string(code)), "31", output().color_stderr) << ": " << file << ": "
              << (e.location.empty() ? "(document)" : e.location) << ": " << e.reason << "\n";
  }
}

void print_policy_file_error(const std::string& file, const error& err) {
  if (file.empty() || (err.code != error_code::parse_error && err.code != error_code::invalid_policy)) {
    print_error(err);
    return;
  }
  std::vector<policy_error> problems = err.errors;
  if (problems.empty()) {
    // Not JSON at all: one problem, whose message load_sandbox_policy() starts with "FILE: ".
    std::string reason = err.message.substr(0, err.message.find('\n'));
    if (reason.rfind(file + ": ", 0) == 0) reason.erase(0, file.size() + 2);
    problems.push_back({err.location, reason});
  }
  print_policy_errors(file, err.code, problems);
}

std::size_t command_word_index(const CLI::App& app, const std::vector<std::string>& args) {
  std::size_t i = 0;
  while (i < args.size() && args[i].size() > 1 && args[i].front() == '-') {  // --help, -v, --color WHEN
    const CLI::Option* own = args[i].find('=') == std::string::npos ? app.get_option_no_throw(args[i]) : nullptr;
    i += (own != nullptr && own->get_items_expected_min() > 0) ? 2 : 1;
  }
  return std::min(i, args.size());
}

void separate_command(const CLI::App& app, std::vector<std::string>& args) {
  const std::size_t i = command_word_index(app, args);
  if (i == args.size() || args[i] != "run") return;
  const CLI::App* run = app.get_subcommand("run");
  for (std::size_t j = i + 1; j < args.size();) {
    const std::string& arg = args[j];
    if (arg == "--") return;
    if (arg.size() > 1 && arg.front() == '-') {
      // An option: skip its value too when it takes one ("--rw DIR", not "--rw=DIR").
      const CLI::Option* opt = arg.find('=') == std::string::npos ? run->get_option_no_throw(arg) : nullptr;
      if (opt == nullptr && arg.find('=') == std::string::npos) opt = app.get_option_no_throw(arg);  // --color WHEN
      j += (opt != nullptr && opt->get_items_expected_min() > 0) ? 2 : 1;  // a flag takes none
      continue;
    }
    args.insert(args.begin() + static_cast<std::ptrdiff_t>(j), "--");  // the command starts here
    return;
  }
}

void add_run_options(CLI::App& app, run_options& options) {
  CLI::App* run = &app;
  run->footer(kRunHelp);
  auto* policy = run->add_option("--policy", options.policy_file, "Policy file (JSON, schema v1)")->type_name("FILE");
  run->add_option("--profile", options.profile, "Profile by name: built-in (workspace-write, read-only, offline) or a user or system profile (cordon profile list)")
      ->type_name("NAME")
      ->excludes(policy);
  run->add_option("--workspace", options.workspace,
                  "Directory that {workspace} names (default: the git repository or current directory)")
      ->type_name("DIR");
  auto* report = run->add_option("--report", options.report_file,
                                 "Write the JSON run report here (atomically; - for standard output)")
                     ->type_name("FILE");
  run->add_option("--report-fd", options.report_fd, "Write the JSON run report to this open descriptor")
      ->type_name("N")
      ->excludes(report);
  auto* summary = run->add_flag("--summary", options.summary,
                                "At the end, print a summary of the report on stderr (default when stderr is a terminal)")
                      ->allow_extra_args(false);
  run->add_flag("--no-summary", options.no_summary, "Print no summary, even on a terminal")
      ->allow_extra_args(false)
      ->excludes(summary);
  run->add_flag("--force-workspace", options.force_workspace,
                "Accept a workspace inside a system tree (/etc, /usr, /var/lib, ...) or a credential folder (~/.ssh, ...)")
      ->allow_extra_args(false);
  run->add_option("--cgroup-parent", options.cgroup_parent,
                  "A delegated cgroup v2 DIR (its cgroup.subtree_control enables memory, pids, cpu) under which the "
                  "run's cgroup is made, for tree-wide limits without root")
      ->type_name("DIR");
  run->add_option("--max-output", max_output_flag,
                  "Relay at most BYTES of each of stdout and stderr: the first and the last half, with a note on "
                  "stderr of what was dropped between them (the report's \"output\")")
      ->type_name("BYTES")
      ->check(CLI::PositiveNumber);
  add_policy_flags(*run, options.overrides);
  run->add_option("command", options.command, "The command and its arguments (after --)")->required();
  run->prefix_command();
}

int run_confined(const run_options& options) {
  launch_request request;
  request.argv = options.command;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) request.host_environment.emplace_back(*e);
  const char* home = std::getenv("HOME");

  auto backend = make_host_backend();
  report_target report;
  if (!options.report_file.empty() || options.report_fd >= 0) {
    auto opened = options.report_fd >= 0 ? report_target::to_descriptor(options.report_fd)
                                         : report_target::open(options.report_file);
    if (!opened) {
      print_error(opened.error_value());
      return exit_cordon_failed;
    }
    report = std::move(*opened);
  }
  // Writes the report if one was asked for; false (after saying so) when it could not be written.
  auto write_report = [&](const std::string& text) {
    if (!report.is_open()) return true;
    auto written = report.write(text);
    if (!written) print_error(written.error_value());
    return static_cast<bool>(written);
  };
  // A problem of the --policy file is printed with the file's name, as `cordon policy validate` does.
  auto refuse = [&](const error& err, const std::string& policy_name, const std::string& policy_file = "") {
    print_policy_file_error(policy_file, err);
    write_report(refused_report_json(std::string(backend->name()), policy_name, request, err));
    return exit_cordon_failed;
  };
  auto workspace =
      choose_workspace(options.workspace, current_directory(), home != nullptr ? home : "", options.force_workspace);
  if (!workspace) return refuse(workspace.error_value(), "");

  std::string source = "policy file " + options.policy_file;
  result<sandbox_policy> policy = make_error(error_code::unknown_profile, "");
  if (!options.policy_file.empty()) {
    policy = load_sandbox_policy(options.policy_file);
  } else {
    auto named = load_named_profile(options.profile.empty() ? std::string(default_profile_name) : options.profile);
    if (!named) return refuse(named.error_value(), "");
    policy = std::move(named->policy);
    source = named->source + (options.profile.empty() ? " (the default)" : "");
  }
  if (!policy) return refuse(policy.error_value(), "", options.policy_file);
  // A built-in profile shows the user's git identity, not the rest of ~/.gitconfig (core/git_identity.h).
  if (options.policy_file.empty()) core::add_git_identity(*policy, home != nullptr ? home : "");
  // The shortcut flags edit this policy; it still goes through the one compile below.
  if (auto applied = apply_overrides(*policy, options.overrides, current_directory()); !applied) {
    return refuse(applied.error_value(), policy->name);
  }

  compile_options compile;
  compile.workspace = workspace->workspace;
  compile.cgroup_parent = options.cgroup_parent;
  auto compiled = backend->compile(*policy, compile);
  if (!compiled) {
    print_compile_failure(compiled.failure(), true, options.overrides.empty() ? options.policy_file : "");
    write_report(refused_report_json(std::string(backend->name()), policy->name, request, compiled.failure()));
    return exit_cordon_failed;
  }
  const sandbox_plan& plan = *compiled.plan();
  request.working_directory = workspace->working_directory;
  if (verbose()) print_run_decisions(plan, source, options.overrides.empty(), *workspace, request);

  // The CLI is single-threaded: the run is supervised here, without the
  // run API's helper process (cordon/run.h). Building the report costs a
  // fraction of a millisecond: only when a report or the summary is asked for.
  const bool summary =
      options.summary || (!options.no_summary && output().level != verbosity::quiet && ::isatty(STDERR_FILENO) == 1);
  run_report run = max_output_flag > 0 ? run_capped(plan, request, max_output_flag)
                                          : run_in_this_process(plan, request, report.is_open() || summary);
  if (run.failure) {
    print_error(*run.failure);
    write_report(run.json);
    return exit_code_for(run);
  }
  const run_outcome& outcome = *run.outcome;
  if (!write_report(run.json)) return exit_cordon_failed;
  if (summary) print_run_summary(nlohmann::ordered_json::parse(run.json), options.report_file, std::cerr);
  if (outcome.cpu_limit_hit) {
    std::cerr << "cordon: cpu_limit: the tree used its " << *plan.policy().process.cpu_seconds
              << " s of CPU time; it was killed\n";
  }
  if (outcome.memory_limit_hit) std::cerr << "cordon: memory_limit: the tree reached its memory ceiling; the kernel killed a process\n";
  if (outcome.timed_out) {
    std::cerr << "cordon: timeout: the command ran past its " << *plan.policy().process.timeout_ms
              << " ms timeout; the tree was killed\n";
    return exit_timeout;
  }
  return exit_after_run(exit_code_for(run));
}

namespace {

// `cordon run [OPTIONS] CMD ARGS...`.
struct run_command final : command {
  run_options options;
  CLI::App* self = nullptr;
  void add_options(CLI::App& app) override {
    self = &app;
    add_run_options(app, options);
  }
  int execute() override {
    // `run` stops at its command (prefix_command), and CLI11 then keeps an
    // unknown option such as "--dny=secret" aside instead of failing. A
    // misspelt flag must never run the command with less confinement.
    for (const auto& extra : self->remaining()) {
      if (extra == "--") continue;  // the separator before the command
      std::cerr << "cordon: usage_error: unknown option " << extra << " for run (see cordon run --help)\n";
      return exit_cordon_failed;
    }
    return run_confined(options);
  }
};

}  // namespace

std::unique_ptr<command> make_run_command() { return std::make_unique<run_command>(); }

}  // namespace cordon::cli
