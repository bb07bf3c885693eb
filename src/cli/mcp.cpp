// `cordon mcp`: the governance runtime's tool-use call as a Model Context
// Protocol server on stdin/stdout (src/mcp/server.h, docs/mcp.md). This file
// only reads the options; the server is src/mcp.
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "cli/command.h"
#include "cli/exit_codes.h"
#include "cli/profile_dirs.h"
#include "cli/workspace.h"
#include "cordon/governance/approval.h"
#include "governance/default_rules.h"
#include "mcp/server.h"

extern char** environ;

namespace cordon::cli {
namespace {

struct mcp_options {
  std::string rules, policy_file, profile, workspace, audit, approver = "deny";
  std::uint64_t max_output = 256 * 1024;
  double timeout = 120, approver_timeout = 60;
  std::size_t pool = 1;
};

int serve_mcp(const mcp_options& o) {
  auto chosen = load_policy_or_profile(o.policy_file, o.profile);
  if (!chosen) return print_policy_file_error(o.policy_file, chosen.error_value()), exit_cordon_failed;
  const char* home = std::getenv("HOME");
  auto ws = choose_workspace(o.workspace, current_directory(), home != nullptr ? home : "");
  if (!ws) return print_error(ws.error_value()), exit_cordon_failed;
  // A rules file may write {workspace}; without one, the default rules for coding agents.
  auto rules = o.rules.empty() ? governance::coding_agent_rules(ws->workspace)
                               : governance::load_rules(o.rules, ws->workspace);
  if (!rules) return print_error(rules.error_value()), exit_cordon_failed;
  mcp::server_options options;
  options.rules = std::move(*rules);
  options.policy = std::move(chosen->policy);
  options.workspace = ws->workspace;
  options.audit_path = o.audit;
  options.max_output = o.max_output;
  options.timeout = std::chrono::milliseconds(static_cast<long long>(o.timeout * 1000));
  options.pool_size = o.pool;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) options.host_environment.emplace_back(*e);
  if (o.approver != "deny") {
    std::vector<std::string> argv;
    std::istringstream words(o.approver);
    for (std::string w; words >> w;) argv.push_back(w);
    options.approver = std::make_unique<governance::external_command_approval_service>(
        argv, std::chrono::milliseconds(static_cast<long long>(o.approver_timeout * 1000)));
  }
  auto served = mcp::serve(std::move(options), std::cin, std::cout);
  if (!served) return print_error(served.error_value()), exit_cordon_failed;
  return 0;
}

// `cordon mcp`.
struct mcp_command final : command {
  mcp_options options;
  void add_options(CLI::App& app) override {
    app.footer(
        "Tools: shell, read, write, edit, glob, grep, apply_patch; protocol, approvals and results: docs/mcp.md.\n\n"
        "Exit status: 0 at the end of input; 125 the rules or policy cannot be used, the audit log fails, or bad "
        "usage.");
    app.add_option("--rules", options.rules,
                   "The capability rules (JSON; {workspace} stands for the workspace): what may run, what needs "
                   "approval. Default: the built-in rules for coding agents (docs/governance.md)")
        ->type_name("FILE");
    app.add_option("--policy", options.policy_file, "Sandbox policy file (JSON)")->type_name("FILE");
    app.add_option("--profile", options.profile, "Profile by name (default workspace-write)")
        ->type_name("NAME")
        ->excludes("--policy");
    app.add_option("--workspace", options.workspace, "The workspace ({workspace}); default as for `cordon run`")
        ->type_name("DIR");
    app.add_option("--audit", options.audit, "Append every call's events to this tamper-evident log")->type_name("FILE");
    app.add_option("--approver", options.approver,
                   "deny (default) or an approver command, asked when the client cannot ask the user (no elicitation)");
    app.add_option("--approver-timeout", options.approver_timeout, "Seconds an approver command may take (default 60)");
    app.add_option("--max-output", options.max_output, "Bytes of each output stream kept per command (default 262144)")
        ->type_name("BYTES")
        ->check(CLI::PositiveNumber);
    app.add_option("--timeout", options.timeout, "Seconds a command may run at most (default 120)")
        ->check(CLI::PositiveNumber);
    app.add_option("--pool", options.pool, "Sandboxes kept prepared for commands (default 1; 0: every command cold)")
        ->check(CLI::Range(0, 16));
  }
  int execute() override { return serve_mcp(options); }
};

}  // namespace

std::unique_ptr<command> make_mcp_command() { return std::make_unique<mcp_command>(); }

}  // namespace cordon::cli
