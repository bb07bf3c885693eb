// cordon/host_rules.h — the network rule matcher: which rule of a filtered
// network policy decides a connection to one destination.
//
// This is the single implementation of docs/policy.md, "How a destination is decided";
// every backend and the network broker call it, so the decision for a given
// policy and destination is the same on every platform:
//
//  1. Rules are tried in declaration order; the first rule that matches
//     decides.
//  2. When no rule matches, `default_action` decides.
//  3. A rule without a port matches every port; a rule with a port matches
//     only that port.
//  4. Host patterns:
//       "*"               every destination: every DNS name and every IPv4
//                         and IPv6 literal;
//       "*.example.com"   exactly one label below example.com:
//                         "a.example.com", not "example.com", not
//                         "a.b.example.com";
//       "**.example.com"  example.com itself and any depth below it;
//       "example.com"     that name only;
//       an IP literal     that address only (no prefixes, no ranges).
//     Wildcard patterns match DNS names only, never IP literals ("*.1.2.3.4"
//     is not a valid pattern; "*.example.com" never matches "10.0.0.1").
//  5. DNS names compare ASCII case-insensitively and one trailing dot is
//     insignificant ("WWW.Example.COM." is "www.example.com"). International
//     names are compared in their IDNA ASCII form ("xn--bcher-kva.example"):
//     a pattern or destination written in Unicode is converted with IDNA
//     (libidn2, IDNA2008 with UTS #46 mapping, non-transitional) first; one
//     that IDNA refuses (invalid UTF-8, a disallowed code point) is an
//     error, never a guess. IP
//     literals compare by address, not by spelling: "[2001:DB8::0:1]",
//     "2001:db8::1" and "2001:0db8:0:0:0:0:0:1" are one destination, and an
//     IPv4-mapped IPv6 address ("::ffff:10.0.0.1") is the IPv4 address it
//     carries (it is that address on the wire), both as a destination and as
//     a pattern.
//
// The matcher never resolves names: a rule for "example.com" says nothing
// about the addresses it resolves to, and a rule for an address says nothing
// about names. Brokers decide on the name the command asked for.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "cordon/policy.h"
#include "cordon/result.h"

namespace cordon {

// The decision for one destination.
struct rule_decision {
  rule_action action = rule_action::deny;
  // Index (0-based) into network_policy::rules of the rule that decided;
  // empty when no rule matched and `default_action` decided, or when the
  // mode is `denied` or `unrestricted` (no rules apply there).
  std::optional<std::size_t> rule;
  bool operator==(const rule_decision&) const = default;
};

// Decides a connection to `host`:`port` under `policy`.
//
// Inputs:
//  - policy: a network policy as returned by validate_sandbox_policy() (its
//    rules are already normalized). Rules that are valid but not in normal
//    form (upper case, a trailing dot, a bracketed or long-form IPv6 literal)
//    are normalized again here and match the same destinations.
//    Mode `denied` decides deny and mode `unrestricted` decides allow for
//    every valid destination, without looking at rules; mode `filtered`
//    applies the rules, then `default_action`.
//  - host: the destination host as the command named it: a DNS name
//    (letters, digits, hyphens; labels of 1-63 characters not starting or
//    ending with a hyphen; at most 253 characters without the trailing dot;
//    the last label not all digits), optionally with one trailing dot; an
//    IPv4 literal in dotted-quad form ("10.0.0.1"); or an IPv6 literal,
//    bare ("::1") or bracketed ("[::1]"), with no zone ("%eth0").
//  - port: the destination TCP/UDP port, 1..65535.
//
// Output: the action and the index of the deciding rule (see rule_decision).
//
// Errors:
//  - error_code::invalid_destination when `host` is empty, contains bytes
//    outside printable ASCII, is a pattern ("*", "*.example.com"), a URL or
//    carries a scheme, path, query, fragment, userinfo or ":port", is not a
//    valid name or literal as described above; or when `port` is outside
//    1..65535. location is empty. A broker must refuse such a connection.
//  - error_code::invalid_policy when, in mode `filtered`, a rule's host
//    pattern is not valid or its port is outside 1..65535 (the policy was
//    not validated): location is "/network/rules/N/host" or
//    "/network/rules/N/port". No decision is made from an invalid policy,
//    whatever the destination.
// Never throws except std::bad_alloc.
result<rule_decision> match_host_rules(const network_policy& policy, std::string_view host, int port);

// The normal form of a destination host, as match_host_rules compares it:
// a DNS name in lower case without a trailing dot, an IPv4 literal, or an
// IPv6 literal in canonical RFC 5952 text without brackets (an IPv4-mapped
// IPv6 address becomes its IPv4 address).
// Errors: error_code::invalid_destination, as for match_host_rules.
result<std::string> normalize_destination_host(std::string_view host);

// Does the single (valid) host pattern `pattern` match the destination host
// `host`? Rule 4 and 5 above, without ports or order.
// Errors: invalid_destination for `host`; invalid_policy (location empty)
// for `pattern`.
result<bool> host_pattern_matches(std::string_view pattern, std::string_view host);

}  // namespace cordon
