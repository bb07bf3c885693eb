// manifest.h — the gate manifest of `cordon gate run` (TOML, docs/gates.md).
//
// A manifest is a list of `[[gate]]` tables. Reading is strict in the way
// policy JSON is: an unknown key, a wrong type, a duplicate name, a `needs`
// entry that names no gate and a cycle of `needs` are errors, each with the
// line it is on, because a typo in a gate must never run a command with less
// confinement or skip a check silently.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cordon/policy.h"
#include "cordon/result.h"
#include "manifest/manifest_text.h"

namespace cordon::gates {

// The operating system a gate is meant for (`env`): `any` runs everywhere.
enum class target_os { any, linux_os, macos, windows };
std::string_view to_string(target_os os) noexcept;
// The OS this binary was built for.
target_os host_os() noexcept;

// Where a gate's sandbox policy comes from (`sandbox_policy`).
enum class policy_kind {
  profile,  // a built-in profile name (include/cordon/profiles.h); the default: workspace-write
  file,     // a policy JSON file: absolute, or relative to the manifest's directory (path_style_of)
  inline_table,  // a TOML table with the policy JSON's fields (docs/policy.md)
};

struct gate_spec {
  std::string name;               // [A-Za-z0-9._-]+, unique; also the record's file name
  std::vector<std::string> argv;  // `cmd`; with `shell = true`: {"/bin/sh", "-c", cmd}
  bool shell = false;
  target_os os = target_os::any;
  std::optional<std::uint64_t> timeout_ms;  // `timeout_sec` (may be fractional), > 0
  policy_kind policy = policy_kind::profile;
  std::string policy_ref = "workspace-write";  // profile name or file path as written
  std::string policy_json;                     // inline_table: the table as policy JSON
  std::string workdir = ".";                   // relative to the manifest's directory
  std::vector<std::string> needs;
  std::vector<std::pair<std::string, std::string>> setenv;  // `setenv` table, sorted by name
  // `accept_findings`: a gate whose sandbox report has violations or
  // deferred-execution findings passes anyway (they are still recorded);
  // without it such a gate is failed (docs/gates.md).
  bool accept_findings = false;
  int line = 0;  // where the [[gate]] header is
};

struct gate_manifest {
  std::string path;       // as given
  std::string directory;  // the directory that holds it (absolute when `path` was)
  std::string digest;     // "sha256:<64 hex>" of the file's bytes
  std::vector<gate_spec> gates;  // in file order
};

// One problem, at a 1-based line (0 when it concerns the whole file).
struct manifest_error {
  int line = 0;
  std::string message;
};

struct manifest_result {
  std::optional<gate_manifest> manifest;  // set when `errors` is empty
  std::vector<manifest_error> errors;     // every problem found, by line
};

// Parses manifest text. `path` names the file in messages and resolves
// relative paths. TOML syntax errors stop at the first (toml++ reports one);
// structural errors are all collected.
manifest_result parse_manifest(std::string_view text, const std::string& path);

// Reads and parses a file. An unreadable file is one error at line 0 with
// strerror in the message.
manifest_result load_manifest(const std::string& path);

// The path rules of the platform a gate runs on: `env`'s, or this binary's
// for `any` (manifest::path_style, src/manifest/manifest_text.h).
manifest::path_style path_style_of(target_os os) noexcept;

// The gate's policy as a sandbox_policy, not yet validated (compile does that).
// A policy file is absolute or relative to `manifest_directory` by the rules
// of the gate's platform (path_style_of): on Windows C:\x\p.json, C:/x/p.json
// and \\server\share\p.json are absolute.
// Errors: unknown_profile; usage_error for a Windows path relative to the
// current drive (\x\p.json) or a drive's current directory (C:p.json);
// io_error, parse_error or invalid_policy from a policy file or inline table
// (docs/policy.md).
result<sandbox_policy> load_gate_policy(const gate_spec& gate, const std::string& manifest_directory);

}  // namespace cordon::gates
