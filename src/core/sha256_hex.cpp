// sha256_hex.cpp — the hex spelling of core's SHA-256 (sha256.h), apart from
// the digest itself so that every implementation of sha256() shares it
// (libmd or OpenSSL in sha256.cpp, CNG in src/windows/cross/compat/sha256_bcrypt.cpp).
#include "core/sha256.h"

namespace cordon::detail {

std::string sha256_hex(std::string_view data) {
  const auto digest = sha256(data);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (std::uint8_t byte : digest) {
    out += kHex[byte >> 4];
    out += kHex[byte & 0xf];
  }
  return out;
}

}  // namespace cordon::detail
