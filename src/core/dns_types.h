// src/core/dns_types.h — the DNS record types a network rule's `dns_types`
// may name (docs/policy.md, "DNS limits on a wildcard rule"), by their registered names and
// numbers (RFC 1035 §3.2.2, RFC 3596, RFC 2782, RFC 8659, RFC 9460). Shared
// by validation (src/core/validation.cpp) and the broker's resolver
// (src/broker/dns_server.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace cordon::core {

inline constexpr std::pair<std::string_view, std::uint16_t> dns_type_names[] = {
    {"A", 1},     {"NS", 2},   {"CNAME", 5}, {"SOA", 6},   {"PTR", 12},   {"MX", 15},
    {"TXT", 16},  {"AAAA", 28}, {"SRV", 33}, {"SVCB", 64}, {"HTTPS", 65}, {"CAA", 257},
};

// The number of the record type `name` (upper case), or nothing when it is
// not one of dns_type_names.
inline std::optional<std::uint16_t> dns_type_number(std::string_view name) {
  for (const auto& [n, number] : dns_type_names) {
    if (n == name) return number;
  }
  return std::nullopt;
}

// The name of record type `number`, or "TYPE<number>" (RFC 3597 §5).
inline std::string dns_type_text(std::uint16_t number) {
  for (const auto& [n, value] : dns_type_names) {
    if (value == number) return std::string(n);
  }
  return "TYPE" + std::to_string(number);
}

}  // namespace cordon::core
