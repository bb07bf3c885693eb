// cordon/validation.h — validate_sandbox_policy(): semantic checks and
// lexical normalization (docs/policy.md).
//
// This is configuration hygiene. It does not touch the filesystem; backends
// still defend against symlink, mount and time-of-check/time-of-use tricks.
#pragma once

#include <string>
#include <vector>

#include "cordon/policy.h"
#include "cordon/policy_json.h"

namespace cordon {

struct validation_result {
  sandbox_policy policy;              // normalized; meaningful only when errors is empty
  std::vector<policy_error> errors;   // every problem found, in document order
  bool ok() const noexcept { return errors.empty(); }
};

// Checks the policy and returns it normalized, or every error found.
// Rejects: schema_version != 1; empty or relative paths (a path may start with
// a root token, see policy.h); unknown tokens or tokens not at the start;
// NUL bytes in paths; invalid environment names (empty, containing '=' or NUL)
// and duplicate names in `allow` or `set`; network rules or a non-deny
// default_action outside `filtered` mode; allow_local_binding with
// `unrestricted` (meaningless); ports outside 1..65535; host patterns that are
// URLs or carry a scheme, path, query, fragment, userinfo or port; malformed
// wildcards ("a.*.com", "*example.com"); two rules with the same host and port
// but different actions; zero resource limits; a timeout above
// max_timeout_ms; enforcement entries for controls the policy cannot have
// (network_filter outside `filtered`); network.publish with `unrestricted`,
// with `filtered` but without allow_local_binding, with more than
// max_published_ports entries, a port outside 1..65535, a host port twice,
// or with `filtered` a port inside that is the network broker's (3128, 3129,
// 53: the host would use the sandbox's broker) (docs/network.md, "Published
// ports"). The host grammar is the matcher's
// (cordon/host_rules.h), so every valid pattern means the same there.
// Normalizes: paths lexically ("." and ".." and repeated or trailing slashes),
// host patterns to lower case without a trailing dot (IPv6 literals to
// canonical text without brackets), and removes exact
// duplicates from every list keeping first occurrence order.
validation_result validate_sandbox_policy(const sandbox_policy& policy);

// Lexical normalization of one absolute or token-rooted path: "/a/./b//c/../d/"
// -> "/a/b/d". ".." never climbs above the root or the token. Empty input
// stays empty.
std::string normalize_path_lexically(const std::string& path);

}  // namespace cordon
