// src/core/host_rules.cpp — host pattern grammar (host_syntax.h) and the
// network rule matcher (cordon/host_rules.h). docs/network.md, "Network rule
// semantics". Nothing here resolves names or touches the network.
#include "cordon/host_rules.h"

#include <arpa/inet.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/host_syntax.h"
#include "core/idna.h"
#include "core/json_pointer.h"

namespace cordon {
namespace detail {
namespace {

// Calls f(label) for every '.'-separated label, empty ones included.
template <class F>
void for_each_label(std::string_view name, F&& f) {
  for (;;) {
    const auto dot = name.find('.');
    f(name.substr(0, dot));
    if (dot == std::string_view::npos) return;
    name.remove_prefix(dot + 1);
  }
}

std::optional<std::string> dns_name_problem(std::string_view name) {
  if (name.empty()) return "host name is empty";
  if (name.size() > 253) return "host name is longer than 253 characters";
  std::optional<std::string> problem;
  std::string_view last;
  for_each_label(name, [&](std::string_view label) {
    last = label;
    if (problem) return;
    if (label.empty()) {
      problem = "host name has an empty label";
    } else if (label.size() > 63) {
      problem = "host name label is longer than 63 characters";
    } else if (!std::all_of(label.begin(), label.end(), [](char c) {
                 return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
               })) {
      problem =
          "host name may contain only letters, digits, hyphens and dots (an international name is "
          "written in Unicode or as xn-- labels)";
    } else if (label.front() == '-' || label.back() == '-') {
      problem = "host name label may not start or end with a hyphen";
    }
  });
  if (problem) return problem;
  // No top-level domain is numeric; such a name is a malformed IP address
  // ("1.2.3", "256.1.1.1") that resolvers might still interpret as one. A
  // number in hexadecimal ("0xc6336402", "0xc6.51.100.0x2") is one too: the
  // system resolver (inet_aton) reads it as an address without asking DNS,
  // so a rule written for that address would never see it.
  const auto digits = [](std::string_view s, bool hex) {
    return std::all_of(s.begin(), s.end(), [hex](char c) {
      return (c >= '0' && c <= '9') || (hex && ((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')));
    });
  };
  const bool hex_number = last.size() >= 2 && last[0] == '0' && (last[1] == 'x' || last[1] == 'X') &&
                          digits(last.substr(2), true);
  if (digits(last, false) || hex_number) return "not a valid IPv4 address or host name";
  return std::nullopt;
}

// Canonical text of an IPv6 literal (RFC 5952, as inet_ntop writes it), and
// the address the matcher compares: an IPv4-mapped address is its IPv4 one.
std::optional<parsed_host> ipv6_literal(const std::string& s) {
  in6_addr addr{};
  if (inet_pton(AF_INET6, s.c_str(), &addr) != 1) return std::nullopt;
  char buf[INET6_ADDRSTRLEN] = {};
  if (inet_ntop(AF_INET6, &addr, buf, sizeof buf) == nullptr) return std::nullopt;
  parsed_host out;
  out.kind = host_kind::ipv6;
  out.normalized = buf;
  out.base = buf;
  const unsigned char* b = addr.s6_addr;
  if (std::all_of(b, b + 10, [](unsigned char x) { return x == 0; }) && b[10] == 0xff && b[11] == 0xff) {
    out.kind = host_kind::ipv4;
    out.base = std::to_string(b[12]) + "." + std::to_string(b[13]) + "." + std::to_string(b[14]) + "." +
               std::to_string(b[15]);
  }
  return out;
}

bool is_ipv4(const std::string& s) {
  in_addr addr{};
  return inet_pton(AF_INET, s.c_str(), &addr) == 1;
}

constexpr std::string_view port_in_host = "host must not carry a port; use the rule's \"port\" field";

parsed_host bad(std::string reason) {
  parsed_host out;
  out.reason = std::move(reason);
  return out;
}

parsed_host good(host_kind kind, std::string normalized, std::string base) {
  parsed_host out;
  out.kind = kind;
  out.normalized = std::move(normalized);
  out.base = std::move(base);
  return out;
}

}  // namespace

parsed_host parse_host_pattern(std::string_view raw_view) {
  const std::string raw(raw_view);
  if (raw.empty()) return bad("host is empty");
  if (raw.find('\0') != std::string::npos) return bad("host contains a NUL byte");
  if (raw.find("://") != std::string::npos) return bad("host must be a bare host, not a URL (no scheme)");
  if (raw.find('@') != std::string::npos) return bad("host must be a bare host (no userinfo)");
  if (raw.find('/') != std::string::npos) return bad("host must be a bare host (no path)");
  if (raw.find('?') != std::string::npos) return bad("host must be a bare host (no query)");
  if (raw.find('#') != std::string::npos) return bad("host must be a bare host (no fragment)");

  if (raw.front() == '[') {
    const auto close = raw.find(']');
    if (close == std::string::npos) return bad("unterminated '[' in IPv6 address");
    const std::string after = raw.substr(close + 1);
    if (!after.empty()) {
      return bad(after.front() == ':' ? std::string(port_in_host) : "unexpected text after ']' in IPv6 address");
    }
    if (auto v6 = ipv6_literal(raw.substr(1, close - 1))) return std::move(*v6);
    return bad("invalid IPv6 address");
  }
  if (raw.find(':') != std::string::npos) {
    if (auto v6 = ipv6_literal(raw)) return std::move(*v6);
    // One colon: a name or IPv4 address with a port.
    const auto colon = raw.find(':');
    if (raw.find(':', colon + 1) == std::string::npos) return bad(std::string(port_in_host));
    return bad("invalid IPv6 address");
  }

  std::string h;
  h.reserve(raw.size());
  for (char c : raw) h += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  if (h.back() == '.') h.pop_back();  // "example.com." is the same name
  if (is_ipv4(h)) return good(host_kind::ipv4, h, h);
  if (h == "*") return good(host_kind::any, h, {});

  host_kind kind = host_kind::name;
  std::string_view prefix;
  if (h.starts_with("**.")) {
    prefix = "**.";
    kind = host_kind::any_depth;
  } else if (h.starts_with("*.")) {
    prefix = "*.";
    kind = host_kind::one_label;
  }
  std::string_view base = std::string_view(h).substr(prefix.size());
  // An internationalized name is matched in its ASCII form (core/idna.h).
  if (has_non_ascii(base)) {
    idna_result ascii = idna_to_ascii(base);
    if (!ascii.problem.empty()) return bad(std::move(ascii.problem));
    h = std::string(prefix) + ascii.ascii;
    base = std::string_view(h).substr(prefix.size());
  }
  if (base.find('*') != std::string_view::npos) {
    return bad("wildcard is only allowed as the whole first label (*, *.name or **.name)");
  }
  if (auto problem = dns_name_problem(base)) return bad(std::move(*problem));
  return good(kind, h, std::string(base));
}

parsed_host parse_destination_host(std::string_view raw) {
  parsed_host out = parse_host_pattern(raw);
  if (!out.ok()) return out;
  if (out.kind == host_kind::any || out.kind == host_kind::one_label || out.kind == host_kind::any_depth) {
    return bad("a destination host cannot be a wildcard pattern");
  }
  if (out.kind != host_kind::name) out.normalized = out.base;  // addresses compare by address
  return out;
}

bool pattern_matches(const parsed_host& pattern, const parsed_host& destination) {
  const std::string& d = destination.base;
  const std::string& p = pattern.base;
  const bool is_name = destination.kind == host_kind::name;
  switch (pattern.kind) {
    case host_kind::any:
      return true;
    case host_kind::ipv4:
    case host_kind::ipv6:
    case host_kind::name:
      return destination.kind == pattern.kind && d == p;
    case host_kind::any_depth:
      if (is_name && d == p) return true;
      [[fallthrough]];
    case host_kind::one_label: {
      // d = <below> "." p, with <below> non-empty (labels are never empty
      // in a valid name); one_label also needs <below> to be one label.
      if (!is_name || d.size() < p.size() + 2) return false;
      const std::size_t dot = d.size() - p.size() - 1;
      if (d[dot] != '.' || d.compare(dot + 1, std::string::npos, p) != 0) return false;
      return pattern.kind == host_kind::any_depth || d.find('.') == dot;
    }
  }
  return false;
}

}  // namespace detail

namespace {

error bad_destination(std::string_view host, const std::string& reason) {
  // The host is quoted only when it is printable ASCII, so a message never
  // carries control bytes from the network into a log.
  const bool printable =
      std::all_of(host.begin(), host.end(), [](char c) { return c >= 0x20 && c < 0x7f; }) && host.size() <= 300;
  return make_error(error_code::invalid_destination,
                    (printable ? "destination \"" + std::string(host) + "\": " : std::string("destination: ")) +
                        reason);
}

result<detail::parsed_host> destination(std::string_view host) {
  detail::parsed_host d = detail::parse_destination_host(host);
  if (!d.ok()) return bad_destination(host, d.reason);
  return d;
}

}  // namespace

result<rule_decision> match_host_rules(const network_policy& policy, std::string_view host, int port) {
  auto dest = destination(host);
  if (!dest) return std::move(dest).error_value();
  if (port < 1 || port > 65535) {
    return bad_destination(host, "port " + std::to_string(port) + " is outside 1..65535");
  }
  switch (policy.mode) {
    case network_mode::denied: return rule_decision{rule_action::deny, std::nullopt};
    case network_mode::unrestricted: return rule_decision{rule_action::allow, std::nullopt};
    case network_mode::filtered: break;
  }
  // Every pattern is checked before any decision, so that an invalid policy
  // never decides anything, whatever the destination.
  std::vector<detail::parsed_host> patterns;
  patterns.reserve(policy.rules.size());
  for (std::size_t i = 0; i < policy.rules.size(); ++i) {
    const std::string at = detail::pointer_join("/network/rules", i);
    patterns.push_back(detail::parse_host_pattern(policy.rules[i].host));
    if (!patterns.back().ok()) {
      return make_error(error_code::invalid_policy, patterns.back().reason, detail::pointer_join(at, "host"));
    }
    if (const auto& p = policy.rules[i].port; p && (*p < 1 || *p > 65535)) {
      return make_error(error_code::invalid_policy, "port " + std::to_string(*p) + " is outside 1..65535",
                        detail::pointer_join(at, "port"));
    }
  }
  for (std::size_t i = 0; i < policy.rules.size(); ++i) {
    const network_rule& rule = policy.rules[i];
    if (rule.port && *rule.port != port) continue;
    if (detail::pattern_matches(patterns[i], *dest)) return rule_decision{rule.action, i};
  }
  return rule_decision{policy.default_action, std::nullopt};
}

result<std::string> normalize_destination_host(std::string_view host) {
  auto dest = destination(host);
  if (!dest) return std::move(dest).error_value();
  return std::move(dest->normalized);
}

result<bool> host_pattern_matches(std::string_view pattern, std::string_view host) {
  auto dest = destination(host);
  if (!dest) return std::move(dest).error_value();
  detail::parsed_host p = detail::parse_host_pattern(pattern);
  if (!p.ok()) return make_error(error_code::invalid_policy, p.reason);
  return detail::pattern_matches(p, *dest);
}

}  // namespace cordon
