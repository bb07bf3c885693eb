// extension.h — the extension manifest of `cordon sidecar --manifest EXT.toml`
// (docs/sidecars.md, "Extension manifests").
//
// A manifest says what a packaged sidecar is: the command, the sandbox policy
// it runs under, its protocol, the protocol grants it asks for (what the
// extension may ask the host to do: data the host's capability policy judges,
// never sandbox authority) and the package's files with their SHA-256
// digests. Reading is strict: an unknown key or a wrong type is an error with
// its line, because a typo must never launch an extension with less checking.
//
// Integrity is not trust: matching digests prove the files are the ones the
// manifest names, not that anyone vouched for them. A package is recorded as
// `untrusted` (docs/governance.md); nothing here raises that.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/governance/capability_policy.h"
#include "cordon/result.h"
#include "sidecars/framing.h"

namespace cordon::sidecars {

struct extension_file {
  std::string path;    // relative to the manifest's directory, without ".."
  std::string sha256;  // 64 lower-case hex digits
  int line = 0;
};

struct extension_manifest {
  std::string path;       // as given
  std::string directory;  // the directory that holds it: the package, and the sidecar's workspace
  std::string digest;     // "sha256:<hex>" of the manifest's bytes
  std::string name;       // [A-Za-z0-9._-]+
  std::string version;    // optional, free text
  std::vector<std::string> command;  // argv, run in `directory`
  protocol proto = protocol::mcp;
  std::optional<double> handshake_timeout_sec;
  std::string sandbox_policy = "read-only";  // a built-in profile, or a policy file relative to `directory`
  // Protocol grants, as capability requests (action, paths, hosts, variables, tool, risk).
  std::vector<governance::capability_request> grants;
  std::vector<int> grant_lines;
  std::vector<extension_file> files;
};

struct extension_error {
  int line = 0;  // 1-based; 0 for the whole file
  std::string message;
};

struct extension_result {
  std::optional<extension_manifest> manifest;  // set when errors is empty
  std::vector<extension_error> errors;
};

// Parses manifest text; `path` names the file in messages and locates the package.
extension_result parse_extension_manifest(std::string_view text, const std::string& path);
// Reads and parses a file; an unreadable file is one error at line 0.
extension_result load_extension_manifest(const std::string& path);

// Hashes every listed file (opened without following a final symlink) and
// compares. Returns one message per file that is missing, unreadable, not a
// regular file or has another digest; empty when all match.
std::vector<std::string> verify_extension_files(const extension_manifest& manifest);

// One grant's judgement by the host's capability policy.
struct grant_decision {
  std::string grant;  // "grant 1 (filesystem_read /home/me/notes)"
  governance::decision_kind decision = governance::decision_kind::deny;
  std::string reason;
  std::string rule_id;
};
// Judges every grant. Only `allow` lets the extension start: a grant that
// needs approval is refused too, since no one is asked at launch.
std::vector<grant_decision> judge_grants(const extension_manifest& manifest,
                                         const governance::capability_policy& rules);

// A policy reference as the gate manifest reads one (docs/gates.md): a string
// with '/', a backslash or ".json" is a policy file (relative to
// `base_directory` unless absolute by this platform's rules,
// manifest::is_absolute_path), anything else a built-in profile name.
// Errors: unknown_profile; usage_error for a Windows path relative to the
// current drive or a drive's current directory; io_error, parse_error,
// invalid_policy from a policy file (docs/policy.md).
result<sandbox_policy> load_policy_reference(const std::string& ref, const std::string& base_directory);

// The sandbox policy named by the manifest. Errors: unknown_profile; io_error,
// parse_error, invalid_policy from a policy file (docs/policy.md).
result<sandbox_policy> load_extension_policy(const extension_manifest& manifest);

}  // namespace cordon::sidecars
