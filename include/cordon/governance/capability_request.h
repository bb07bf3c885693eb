// cordon/governance/capability_request.h — what an agent host asks to do.
//
// A capability_request names one action (run a shell command, read a file,
// open an outbound connection, ...), its risk, the resources it touches and
// who asks. It is the input of the capability policy (capability_policy.h)
// and of the execution runtime (runtime.h). It grants nothing by itself:
// `host_metadata` in particular is carried into audit events and never read
// by any decision (docs/governance.md, "Requests").
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/result.h"

namespace cordon::governance {

// The kinds of action a request can name. The JSON spelling (to_string) is stable.
enum class action_kind {
  python,                 // run Python: argv, e.g. ["python3", "script.py"]
  process,                // run argv directly (no shell)
  shell,                  // run a shell command line (`command`), judged segment by segment
  filesystem_read,        // read the named paths
  filesystem_write,       // write the named paths
  network_outbound,       // connect to the named hosts
  environment_access,     // read the named environment variables
  secret_access,          // obtain the named secrets (`variables` carries their names)
  artifact_activation,    // activate a learned artifact (`paths` or `tool` names it)
  exploration_execution,  // run an effectful exploration step: argv
};

// Declared risk, lowest first. The requester declares it; rules may match on it.
enum class risk_level { low, medium, high, critical };

std::string_view to_string(action_kind kind) noexcept;
std::string_view to_string(risk_level risk) noexcept;
std::optional<action_kind> action_kind_from_string(std::string_view name) noexcept;
std::optional<risk_level> risk_level_from_string(std::string_view name) noexcept;

// True for the kinds that run a command (python, process, shell, exploration_execution).
bool runs_command(action_kind kind) noexcept;

inline constexpr int capability_request_schema_version = 1;

struct capability_request {
  action_kind action = action_kind::process;
  risk_level risk = risk_level::high;
  std::vector<std::string> argv;   // python, process, exploration_execution: the command
  std::string command;             // shell: the command line, as `sh -c` would get it
  std::string working_directory;   // absolute, or empty (the workspace)
  // Resources. Paths are absolute and normalized lexically when read
  // (".", "..", "//" removed; symlinks are not resolved: the sandbox, not this
  // layer, decides what a path really is). Hosts are "HOST" or "HOST:PORT"
  // ("[v6]:PORT"), normalized as network rules compare them (host_rules.h).
  // Variables are environment or secret names.
  std::vector<std::string> paths;
  std::vector<std::string> hosts;
  std::vector<std::string> variables;
  std::string tool;        // the tool that asks, e.g. "bash"
  std::string trace_id;    // the host's correlation id (not part of the normalized form)
  std::string subject_id;  // who the request is for (user, agent)
  // The session boundary revision the request was made against
  // (session_boundary.h); a stale one is rejected by the runtime.
  std::optional<std::uint64_t> boundary_revision;
  // Host data carried into audit events verbatim. Grants nothing.
  std::map<std::string, std::string> host_metadata;
  bool operator==(const capability_request&) const = default;
};

// Checks a request's shape and normalizes its resources in place: the kinds
// that run a command need `argv` (shell: `command`) and no other; paths become
// lexically normal absolute paths; hosts their normal form; variable names
// must match [A-Za-z_][A-Za-z0-9_]*; every string must be UTF-8 without NUL.
// Errors: error_code::invalid_policy with location = the JSON pointer of the
// field ("/resources/paths/2").
result<void> normalize_capability_request(capability_request& request);

// Reads a request (JSON, "$defs/request" of schemas/capability_rules.v1.schema.json): strict,
// unknown fields are errors; then normalize_capability_request.
// Errors: parse_error (location "line L, column C"), invalid_policy (JSON pointer).
result<capability_request> capability_request_from_json(std::string_view text);

// The canonical JSON form: keys sorted, no whitespace, every field present.
// Two requests with the same content have byte-identical forms.
std::string canonical_json(const capability_request& request);

// The request's identity for approval scopes: the canonical JSON of what it
// asks (action, risk, argv/command, working directory, resources sorted and
// without duplicates, tool, subject), without trace_id, boundary_revision and
// host_metadata, which vary between two asks for the same thing.
std::string normalized_form(const capability_request& request);

// "sha256:<64 hex>" over canonical_json(request).
std::string request_digest(const capability_request& request);

// "sha256:<64 hex>" of arbitrary bytes (the digest spelling used throughout
// governance and in the run report's policy digest).
std::string sha256_digest(std::string_view bytes);

// Lexical normal form of an absolute path: "/a/./b//c/../d" -> "/a/b/d".
// Errors: invalid_policy when `path` is empty or relative.
result<std::string> normalize_absolute_path(std::string_view path);

}  // namespace cordon::governance
