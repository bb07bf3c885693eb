// src/broker/address_class.cpp — is_non_public_address(): which resolved
// addresses only an IP-literal rule may reach (broker.h). Ranges from the
// IANA special-purpose registries (RFC 6890 and its updates).
#include <arpa/inet.h>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "broker/broker.h"

namespace cordon::broker {
namespace {

bool in_v4(std::uint32_t address, std::uint32_t network, int prefix) {
  const std::uint32_t mask = prefix == 0 ? 0 : ~std::uint32_t{0} << (32 - prefix);
  return (address & mask) == network;
}

constexpr std::uint32_t v4(unsigned a, unsigned b, unsigned c, unsigned d) {
  return (a << 24) | (b << 16) | (c << 8) | d;
}

bool v4_non_public(std::uint32_t a) {
  struct range {
    std::uint32_t network;
    int prefix;
  };
  static constexpr std::array<range, 10> ranges = {{
      {v4(0, 0, 0, 0), 8},       // "this network" (RFC 791), 0.0.0.0 reaches the host itself
      {v4(10, 0, 0, 0), 8},      // private (RFC 1918)
      {v4(100, 64, 0, 0), 10},   // shared address space, carrier NAT (RFC 6598)
      {v4(127, 0, 0, 0), 8},     // loopback
      {v4(169, 254, 0, 0), 16},  // link-local, cloud metadata services (RFC 3927)
      {v4(172, 16, 0, 0), 12},   // private (RFC 1918)
      {v4(192, 0, 0, 0), 24},    // IETF protocol assignments (RFC 6890)
      {v4(192, 168, 0, 0), 16},  // private (RFC 1918)
      {v4(224, 0, 0, 0), 4},     // multicast
      {v4(240, 0, 0, 0), 4},     // reserved (RFC 1112), 255.255.255.255 broadcast included
  }};
  for (const auto& r : ranges) {
    if (in_v4(a, r.network, r.prefix)) return true;
  }
  return false;
}

std::uint32_t v4_at(const unsigned char* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | std::uint32_t{p[3]};
}

bool v6_non_public(const std::array<unsigned char, 16>& b) {
  auto zeros = [&](int from, int to) {
    for (int i = from; i < to; ++i) {
      if (b[static_cast<std::size_t>(i)] != 0) return false;
    }
    return true;
  };
  // ::/96 (IPv4-compatible, RFC 4291 §2.5.5.1; "::" and "::1" are in it and
  // judged as 0.0.0.0 and 0.0.0.1) and ::ffff:0:0/96 (IPv4-mapped): the
  // embedded IPv4 address is what a dual-stack socket reaches.
  if (zeros(0, 12)) return v4_non_public(v4_at(&b[12]));
  if (zeros(0, 10) && b[10] == 0xff && b[11] == 0xff) return v4_non_public(v4_at(&b[12]));
  // 64:ff9b::/96, the well-known NAT64 prefix (RFC 6052): a NAT64 gateway
  // translates it to the embedded IPv4 address.
  if (b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && zeros(4, 12)) {
    return v4_non_public(v4_at(&b[12]));
  }
  // 64:ff9b:1::/48, local-use NAT64 (RFC 8215): translates into the local
  // network, with an embedding that depends on the site's prefix length.
  if (b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && b[4] == 0x00 && b[5] == 0x01) return true;
  if ((b[0] & 0xfe) == 0xfc) return true;                  // unique local fc00::/7 (RFC 4193)
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) return true;  // link-local fe80::/10
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0) return true;  // site-local fec0::/10 (deprecated, RFC 3879)
  if (b[0] == 0xff) return true;                           // multicast ff00::/8
  return false;
}

}  // namespace

bool is_non_public_address(const std::string& address) {
  std::string_view text = address;
  const bool bracketed = text.size() >= 2 && text.front() == '[' && text.back() == ']';
  if (bracketed) text = text.substr(1, text.size() - 2);
  const std::string literal(text);
  // inet_pton accepts only the strict forms: dotted quad without leading
  // zeros for IPv4, RFC 4291 text without a zone for IPv6. Brackets are for
  // IPv6 only.
  std::array<unsigned char, 4> a4{};
  if (!bracketed && inet_pton(AF_INET, literal.c_str(), a4.data()) == 1) return v4_non_public(v4_at(a4.data()));
  std::array<unsigned char, 16> a6{};
  if (inet_pton(AF_INET6, literal.c_str(), a6.data()) == 1) return v6_non_public(a6);
  return true;  // not an address: fail closed
}

}  // namespace cordon::broker
