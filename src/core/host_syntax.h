// src/core/host_syntax.h — the one grammar of network rule host patterns and
// destination hosts, shared by validate_sandbox_policy() (which stores the
// normal form) and the matcher in host_rules.cpp (which compares it), so
// that what validation accepts is exactly what the matcher understands.
#pragma once

#include <string>
#include <string_view>

namespace cordon::detail {

enum class host_kind {
  any,        // "*"
  one_label,  // "*.name": exactly one label below name
  any_depth,  // "**.name": name and any depth below it
  name,       // a DNS name
  ipv4,       // an IPv4 literal (also an IPv4-mapped IPv6 literal)
  ipv6,       // an IPv6 literal
};

struct parsed_host {
  host_kind kind = host_kind::name;
  // The normal form validation stores: lower case, no trailing dot, IPv6 in
  // canonical text without brackets. Empty when `reason` is set.
  std::string normalized;
  // What the matcher compares: the name without its wildcard prefix, or the
  // address (an IPv4-mapped IPv6 address as dotted IPv4). Empty for `any`.
  std::string base;
  // Why the text is not a valid pattern; empty when it is.
  std::string reason;
  bool ok() const noexcept { return reason.empty(); }
};

// Parses a rule's host pattern ("*", "*.name", "**.name", a DNS name, an
// IPv4 literal, an IPv6 literal with or without brackets).
parsed_host parse_host_pattern(std::string_view raw);

// Parses a destination host: the same grammar without wildcards.
parsed_host parse_destination_host(std::string_view raw);

// Does a valid pattern match a valid destination (both from the functions above)?
bool pattern_matches(const parsed_host& pattern, const parsed_host& destination);

}  // namespace cordon::detail
