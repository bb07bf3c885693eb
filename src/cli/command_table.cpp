// The Linux CLI's command table (command.h): every `cordon` command, parents
// before their subcommands, in the order --help, the man pages and the
// completions list them. Each factory is defined beside its command, in the
// file named in its comment.
#include "cli/command.h"

namespace cordon::cli {

std::unique_ptr<command> make_run_command();              // run.cpp
std::unique_ptr<command> make_probe_command();            // info.cpp
std::unique_ptr<command> make_profile_list_command();     // info.cpp
std::unique_ptr<command> make_profile_show_command();     // info.cpp
std::unique_ptr<command> make_policy_validate_command();  // info.cpp
std::unique_ptr<command> make_policy_normalize_command(); // info.cpp
std::unique_ptr<command> make_policy_explain_command();   // explain.cpp
std::unique_ptr<command> make_report_show_command();      // report_view.cpp
std::unique_ptr<command> make_exec_command();             // governance.cpp
std::unique_ptr<command> make_audit_verify_command();     // governance.cpp
std::unique_ptr<command> make_audit_show_command();       // governance.cpp
std::unique_ptr<command> make_rules_test_command();       // governance.cpp
std::unique_ptr<command> make_session_init_command();     // governance.cpp
std::unique_ptr<command> make_session_show_command();     // governance.cpp
std::unique_ptr<command> make_session_grow_command();     // governance.cpp
std::unique_ptr<command> make_gate_run_command();         // gate.cpp
std::unique_ptr<command> make_gate_render_command();      // gate.cpp
std::unique_ptr<command> make_sidecar_command();          // sidecar.cpp
std::unique_ptr<command> make_fs_command();               // fs.cpp
std::unique_ptr<command> make_mcp_command();              // mcp.cpp
std::unique_ptr<command> make_manpage_command();          // manpage.cpp (hidden)
std::unique_ptr<command> make_completion_command();       // completion.cpp (hidden)

const std::vector<command_row>& command_table() {
  static const std::vector<command_row> rows = {
      {{"run"}, "Run a command confined by a policy or profile", make_run_command},
      {{"probe"}, "Print a backend's capabilities on this host, or on another platform's facts (JSON)",
       make_probe_command},
      {{"profile"}, "Profiles by name: built-in, user and system ones", nullptr},
      {{"profile", "list"}, "List the profiles and where each comes from (-q: the names --profile takes)",
       make_profile_list_command},
      {{"profile", "show"}, "Print a profile's JSON", make_profile_show_command},
      {{"policy"}, "Check policy files", nullptr},
      {{"policy", "validate"}, "Check policy files; print every error with its location", make_policy_validate_command},
      {{"policy", "normalize"}, "Print the normalized form of a valid policy file", make_policy_normalize_command},
      {{"policy", "explain"}, "Show what each control would be for a policy on this host or another platform",
       make_policy_explain_command},
      {{"report"}, "Read run reports", nullptr},
      {{"report", "show"}, "Print a run report (cordon run --report FILE) as tables", make_report_show_command},
      {{"exec"}, "Run one capability request through the governance runtime", make_exec_command},
      {{"audit"}, "Check or show a tamper-evident audit log", nullptr},
      {{"audit", "verify"}, "Verify a log; name the first bad line (exit 1)", make_audit_verify_command},
      {{"audit", "show"}, "The log as a table (interrupted runs marked)", make_audit_show_command},
      {{"rules"}, "Capability rules files", nullptr},
      {{"rules", "test"}, "Load a rules file and run its examples (exit 1 on failure)", make_rules_test_command},
      {{"session"}, "A session's execution boundary", nullptr},
      {{"session", "init"}, "Create a session file at revision 1", make_session_init_command},
      {{"session", "show"}, "The current boundary and its history", make_session_show_command},
      {{"session", "grow"}, "Ask to grow the boundary (needs approval)", make_session_grow_command},
      {{"gate"}, "Run CI gates, each confined by its own policy", nullptr},
      {{"gate", "run"}, "Run the gates of a manifest (TOML, docs/gates.md)", make_gate_run_command},
      {{"gate", "render"}, "Write a manifest's gates as jobs for a scheduler (Kubernetes)", make_gate_render_command},
      {{"sidecar"}, "Run a protocol sidecar (MCP, LSP) confined, stdin/stdout as its channel", make_sidecar_command},
      {{"fs"}, "Serve an agent's file tools from a confined worker (JSON lines on stdin/stdout)", make_fs_command},
      {{"mcp"}, "Serve governed, confined tool calls to an MCP client (stdio)", make_mcp_command},
      {{"__manpage"}, "Write the man pages into DIR (used by the build)", make_manpage_command},
      {{"__completion"}, "Print the completion script for SHELL (used by the build)", make_completion_command},
  };
  return rows;
}

}  // namespace cordon::cli
