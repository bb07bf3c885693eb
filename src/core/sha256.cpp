// sha256.cpp — SHA-256 through libmd (Debian's libmd-dev), linked statically:
// a well-kept implementation, and no shared library for the dynamic loader
// to load at every launch.
#include "core/sha256.h"

#include <sha2.h>

namespace cordon::detail {

std::array<std::uint8_t, 32> sha256(std::string_view data) noexcept {
  SHA2_CTX context;
  SHA256Init(&context);
  SHA256Update(&context, reinterpret_cast<const std::uint8_t*>(data.data()), data.size());
  std::array<std::uint8_t, 32> digest{};
  SHA256Final(digest.data(), &context);
  return digest;
}

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
