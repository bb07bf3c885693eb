// server.h — `cordon mcp`: the governance runtime's tool-use call as a Model
// Context Protocol server over stdio (docs/mcp.md).
//
// JSON-RPC 2.0, one message per line (the MCP stdio transport): initialize,
// ping, tools/list, tools/call; notifications are accepted and ignored.
// Tools: `shell` (a command line, run through execution_runtime::execute_tool:
// rules, approval, confined from a pool of prepared sandboxes, output capped,
// audited) and the file tools `read`, `write`, `edit`, `glob`, `grep`,
// `apply_patch` (authorized by the same rules as filesystem_read /
// filesystem_write requests, audited, then done by the confined filesystem
// worker under the same policy). A require_approval request is put to the
// user through the client (`elicitation/create`) when the client declared the
// elicitation capability, else to the configured approver. A refusal, a
// denial or a failed command is a tool result with isError true, never a
// protocol error.
#pragma once

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "cordon/governance/approval.h"
#include "cordon/governance/capability_policy.h"
#include "cordon/policy.h"
#include "cordon/result.h"

namespace cordon::mcp {

// The protocol revision this server implements (modelcontextprotocol.io,
// specification 2025-11-25); an initialize that asks for an older revision
// it also speaks (2025-06-18, 2025-03-26) gets that one.
inline constexpr const char* protocol_version = "2025-11-25";

struct server_options {
  governance::capability_policy rules;
  sandbox_policy policy;                // the sandbox every command and the file worker run under
  std::string workspace;                // absolute: {workspace}, the commands' working directory
  std::string audit_path;               // empty: events kept in memory only
  // Asked when the client cannot elicit (null: such requests are rejected).
  std::unique_ptr<governance::approval_service> approver;
  std::uint64_t max_output = 256 * 1024;         // bytes kept per stream of a command
  std::chrono::milliseconds timeout{std::chrono::minutes(2)};  // per command, unless the call asks less
  std::size_t pool_size = 1;                     // prepared sandboxes kept ready (0: every command cold)
  std::vector<std::string> host_environment;     // "NAME=VALUE" the policy may pass through
  std::string session_id;                        // the audit events' session (default "mcp-PID")
};

// Serves until `in` ends. Errors (before serving): the audit log cannot be
// opened or does not verify, the policy cannot be compiled here (the
// compile's error), the file worker cannot start.
result<void> serve(server_options options, std::istream& in, std::ostream& out);

}  // namespace cordon::mcp
