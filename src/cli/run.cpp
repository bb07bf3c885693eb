// `cordon run`: build a policy (file, profile, or the default), compile it,
// launch the command, write the report.
#include <unistd.h>

#include <cmath>
#include <iostream>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cordon/cordon.h"

extern char** environ;

namespace cordon::cli {
namespace {

constexpr const char* kRunHelp = R"(Exit status:
  the command's own exit code, or 128+N when signal N killed it
  124  the policy's timeout fired (the whole tree was killed)
  125  cordon refused or failed: bad usage, invalid policy, a control the host
       cannot enforce, sandbox setup failure, or the report could not be written
  126  the command was found but cannot be executed
  127  the command was not found inside the sandbox

Without --policy or --profile, the built-in profile 'workspace-write' is used,
with the current directory as the workspace.)";

std::string current_directory() {
  char buffer[4096];
  return ::getcwd(buffer, sizeof buffer) != nullptr ? buffer : "/";
}

bool within(const std::string& path, const std::string& root) {
  return path == root || root == "/" || (path.rfind(root + "/", 0) == 0);
}

int exit_code_for(const error& err) {
  switch (err.code) {
    case error_code::command_not_found: return exit_not_found;
    case error_code::command_not_executable: return exit_not_executable;
    default: return exit_cordon_failed;
  }
}

// Writes the report if one was asked for. Returns false (after saying so) when it could not be written.
bool write_report(const std::string& path, const std::string& text) {
  if (path.empty()) return true;
  auto written = write_file_atomically(path, text);
  if (!written) {
    std::cerr << "cordon: " << written.error_value().describe() << " (report not written)\n";
    return false;
  }
  return true;
}

}  // namespace

void print_error(const std::string& code, const std::string& message) {
  std::cerr << "cordon: " << code << ": " << message << "\n";
}

void add_run_command(CLI::App& app, run_options& options) {
  CLI::App* run = app.add_subcommand("run", "Run a command confined by a policy or profile");
  run->footer(kRunHelp);
  auto* policy = run->add_option("--policy", options.policy_file, "Policy file (JSON, schema v1)");
  run->add_option("--profile", options.profile, "Built-in profile: workspace-write, read-only, offline")
      ->excludes(policy);
  run->add_option("--workspace", options.workspace,
                  "Directory that {workspace} names (default: the current directory)");
  run->add_option("--report", options.report_file, "Write the JSON run report here (atomically)");
  run->add_option("--timeout", options.timeout_seconds,
                  "Wall-clock timeout in seconds; kills the whole tree (overrides the policy's)")
      ->check(CLI::PositiveNumber);
  run->add_option("command", options.command, "The command and its arguments (after --)")->required();
  run->prefix_command();
}

int run_command(const run_options& options) {
  launch_request request;
  request.argv = options.command;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) request.host_environment.emplace_back(*e);
  std::string cwd = current_directory();
  std::string workspace = options.workspace.empty() ? cwd : options.workspace;
  if (workspace[0] != '/') workspace = cwd + "/" + workspace;

  auto backend = make_host_backend();
  result<sandbox_policy> policy = !options.policy_file.empty() ? load_sandbox_policy(options.policy_file)
                                  : builtin_profile(options.profile.empty() ? default_profile_name
                                                                            : std::string_view(options.profile));
  if (!policy) {
    const error& err = policy.error_value();
    print_error(std::string(to_string(err.code)), (err.location.empty() ? "" : err.location + ": ") + err.message);
    compile_failure failure;
    failure.code = err.code;
    failure.message = err.describe();
    write_report(options.report_file, refused_report_json(std::string(backend->name()), "", request, failure));
    return exit_cordon_failed;
  }
  if (options.timeout_seconds) {
    policy->process.timeout_ms = static_cast<std::uint64_t>(std::llround(*options.timeout_seconds * 1000.0));
  }

  compile_options compile;
  compile.workspace = workspace;
  auto compiled = backend->compile(*policy, compile);
  if (!compiled) {
    const compile_failure& f = compiled.failure();
    // One line per problem: each policy error with its location, or the code and each blocker.
    if (f.errors.empty()) print_error(std::string(to_string(f.code)), f.message);
    for (const auto& e : f.errors) {
      print_error(std::string(to_string(f.code)), (e.location.empty() ? "" : e.location + ": ") + e.reason);
    }
    for (const auto& b : f.blockers) {
      print_error("blocker", b.control + ": required " + b.required + ", available " + b.available + ": " + b.reason);
    }
    write_report(options.report_file, refused_report_json(std::string(backend->name()), policy->name, request, f));
    return exit_cordon_failed;
  }
  const sandbox_plan& plan = *compiled.plan();
  // Run where the user is when that is inside the workspace; otherwise in the workspace.
  request.working_directory = within(cwd, workspace) ? cwd : workspace;

  auto outcome = backend->launch(&plan, request);
  if (!outcome) {
    const error& err = outcome.error_value();
    std::cerr << "cordon: " << err.describe() << "\n";
    write_report(options.report_file, launch_failed_report_json(plan, request, err));
    return exit_code_for(err);
  }
  if (!write_report(options.report_file, run_report_json(plan, request, *outcome))) return exit_cordon_failed;
  if (outcome->timed_out) {
    print_error("timeout", "the command ran past its " +
                               std::to_string(*plan.policy().process.timeout_ms) + " ms timeout; the tree was killed");
    return exit_timeout;
  }
  return outcome->exited ? outcome->exit_code : 128 + outcome->signal;
}

}  // namespace cordon::cli
