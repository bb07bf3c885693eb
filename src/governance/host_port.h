// host_port.h — "HOST", "HOST:PORT" and "[v6]:PORT" as requests and rules
// spell a network destination; the host part is normalized and matched by the
// network rule matcher (cordon/host_rules.h), so a capability rule and a
// sandbox network rule agree on what "*.example.com" means.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "cordon/result.h"

namespace cordon::governance::detail {

struct host_port {
  std::string host;         // a destination's normal form, or a pattern as written
  std::optional<int> port;  // 1..65535
};

// Splits "HOST[:PORT]"; a bare IPv6 literal ("::1") has no port, a bracketed
// one may ("[::1]:443"). Errors: invalid_destination for a bad port or an
// empty host.
result<host_port> split_host_port(std::string_view text);

// A destination: split, then the host normalized (normalize_destination_host).
result<host_port> parse_destination(std::string_view text);

// "HOST" or "HOST:PORT" ("[v6]:PORT") of a normalized destination.
std::string format_destination(const host_port& destination);

// Does the rule entry `pattern` ("*.example.com:443", "**.corp", "*") match
// the normalized destination? Errors: invalid_policy for a bad pattern.
result<bool> destination_matches(const host_port& pattern, const host_port& destination);

}  // namespace cordon::governance::detail
