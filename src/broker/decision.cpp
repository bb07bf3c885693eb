// src/broker/decision.cpp — see decision.h.
#include "broker/decision.h"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <optional>
#include <set>
#include <string>

#include "broker/broker.h"

namespace cordon::broker {
namespace {

bool is_ip_literal(const std::string& normalized) {
  std::array<unsigned char, 16> raw{};
  return inet_pton(AF_INET, normalized.c_str(), raw.data()) == 1 ||
         inet_pton(AF_INET6, normalized.c_str(), raw.data()) == 1;
}

std::string rule_text(const std::optional<std::size_t>& rule) {
  return rule ? "rule " + std::to_string(*rule) : std::string("the default action");
}

// The IPv4 address an IPv6 literal of the well-known NAT64 prefix
// 64:ff9b::/96 (RFC 6052) embeds: a NAT64 gateway connects to it.
// (IPv4-mapped literals are matched as IPv4 already, host_rules.cpp.)
std::optional<std::string> nat64_embedded_ipv4(const std::string& literal) {
  std::array<unsigned char, 16> b{};
  if (inet_pton(AF_INET6, literal.c_str(), b.data()) != 1) return std::nullopt;
  if (b[0] != 0x00 || b[1] != 0x64 || b[2] != 0xff || b[3] != 0x9b) return std::nullopt;
  if (!std::all_of(b.begin() + 4, b.begin() + 12, [](unsigned char x) { return x == 0; })) return std::nullopt;
  return std::to_string(b[12]) + "." + std::to_string(b[13]) + "." + std::to_string(b[14]) + "." +
         std::to_string(b[15]);
}

}  // namespace

std::string printable(std::string_view text, std::size_t max) {
  std::string out;
  for (char c : text) {
    if (out.size() >= max) {
      out += "...";
      break;
    }
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f && c != '\\') {
      out += c;
    } else {
      std::array<char, 5> hex{};
      std::snprintf(hex.data(), hex.size(), "\\x%02x", u);
      out += hex.data();
    }
  }
  return out;
}

name_decision decide_resolution(const network_policy& policy, std::string_view host) {
  std::set<int> ports;
  for (const auto& rule : policy.rules) {
    if (rule.port) ports.insert(*rule.port);
  }
  int unnamed = 1;
  while (ports.count(unnamed) != 0) ++unnamed;
  ports.insert(unnamed);
  std::optional<name_decision> first;
  for (const int port : ports) {
    name_decision d = decide_name(policy, host, port);
    if (!d.decision || d.decision->action == rule_action::allow) return d;
    if (!first) first = std::move(d);
  }
  return std::move(*first);
}

name_decision decide_name(const network_policy& policy, std::string_view host, int port) {
  name_decision d;
  auto normalized = normalize_destination_host(host);
  if (!normalized) {
    d.host = printable(host);
    d.reason = "invalid destination: " + printable(normalized.error_value().message);
    return d;
  }
  d.host = *normalized;
  d.ip_literal = is_ip_literal(d.host);
  auto decided = match_host_rules(policy, d.host, port);
  if (!decided) {
    // An invalid port, or a policy that was not validated: refuse either way.
    const bool destination = decided.error_value().code == error_code::invalid_destination;
    d.reason = (destination ? "invalid destination: " : "invalid policy: ") + printable(decided.error_value().message);
    return d;
  }
  d.decision = *decided;
  if (decided->action == rule_action::deny) d.reason = "denied by " + rule_text(decided->rule);
  // A rule that denies an IPv4 address denies its NAT64 form too, whatever
  // allowed that form (`*`): through a gateway it is the same destination.
  if (decided->action == rule_action::allow && d.ip_literal) {
    if (auto v4 = nat64_embedded_ipv4(d.host)) {
      auto inner = match_host_rules(policy, *v4, port);
      if (inner && inner->action == rule_action::deny && inner->rule) {
        d.decision = *inner;
        d.reason = "NAT64 address of " + *v4 + ", denied by " + rule_text(inner->rule);
      }
    }
  }
  return d;
}

bool opened_by_ip_rule(const network_policy& policy, const std::string& literal, int port) {
  auto decided = match_host_rules(policy, literal, port);
  if (!decided || decided->action != rule_action::allow || !decided->rule) return false;
  auto pattern = normalize_destination_host(policy.rules.at(*decided->rule).host);
  return pattern && *pattern == literal;
}

address_choice choose_addresses(const network_policy& policy, std::string_view named, int port,
                                const std::vector<std::string>& addresses,
                                const std::vector<std::string>& own_addresses) {
  address_choice choice;
  std::string first_refused;
  bool refused_own = false;
  for (const auto& address : addresses) {
    auto normalized = normalize_destination_host(address);
    if (!normalized || !is_ip_literal(*normalized)) continue;  // a resolver returning junk, or a zone
    const std::string& literal = *normalized;
    if (std::find(choice.usable.begin(), choice.usable.end(), literal) != choice.usable.end()) continue;
    // Only an allow rule written for this very address opens a non-public
    // one or one of the host's own: a name or `*` never does, so neither DNS
    // nor a broad rule reaches the host's (or its network's) services.
    const bool non_public = is_non_public_address(literal);
    const bool own = std::find(own_addresses.begin(), own_addresses.end(), literal) != own_addresses.end();
    const bool usable = (!own && !non_public) || opened_by_ip_rule(policy, literal, port);
    if (usable) {
      choice.usable.push_back(literal);
    } else if (first_refused.empty()) {
      first_refused = literal;
      refused_own = !non_public;  // the reason names the more telling class
    }
  }
  if (!choice.usable.empty()) return choice;
  if (first_refused.empty()) {
    choice.reason = "no usable address for " + printable(named);
  } else {
    choice.reason = std::string(first_refused == named ? "" : "resolves to ") +
                    (refused_own ? "this host's own address " : "non-public address ") + first_refused +
                    "; only an IP rule can allow it";
  }
  return choice;
}

}  // namespace cordon::broker
