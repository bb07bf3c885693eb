// src/broker/decision.h — the broker's decisions as pure functions: the rule
// decision for the destination a client named, then which of its addresses
// may be dialed. Nothing here resolves names or opens sockets.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/host_rules.h"
#include "cordon/policy.h"

namespace cordon::broker {

struct name_decision {
  // Normalized (normalize_destination_host); when the destination is
  // invalid, the text as sent made printable (printable()).
  std::string host;
  std::optional<rule_decision> decision;  // empty: invalid destination, refuse it
  bool ip_literal = false;                // `host` is an IPv4 or IPv6 literal
  std::string reason;                     // why it is refused; empty when allowed
};

// match_host_rules() on the destination as the client named it.
name_decision decide_name(const network_policy& policy, std::string_view host, int port);

// May the sandbox resolve `host` through the broker's DNS? When some port
// exists on which the rules allow it: each port a rule names is tried, and
// one port no rule names (first allow wins; else the first refusal).
name_decision decide_resolution(const network_policy& policy, std::string_view host);

struct address_choice {
  std::vector<std::string> usable;  // normalized literals, in the resolver's order, no duplicates
  std::string reason;               // set when `usable` is empty
};

// Keeps the addresses of an allowed destination that may be dialed: every
// public one, and a non-public one (is_non_public_address, or one of
// `own_addresses`: this host's interfaces) only when opened_by_ip_rule().
// `named` is the normalized destination (for the reason); `addresses` what
// it resolved to, or the literal itself.
address_choice choose_addresses(const network_policy& policy, std::string_view named, int port,
                                const std::vector<std::string>& addresses,
                                const std::vector<std::string>& own_addresses = {});

// Does match_host_rules() allow `literal`:`port` by a rule whose pattern is
// that very IP literal (not a name, not `*`)? `literal` is normalized.
bool opened_by_ip_rule(const network_policy& policy, const std::string& literal, int port);

// `text` with every byte outside printable ASCII written as \xHH, cut at
// `max` characters: for evidence, which ends up in JSON and on terminals.
std::string printable(std::string_view text, std::size_t max = 300);

}  // namespace cordon::broker
