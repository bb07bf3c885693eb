// sha256.cpp — SHA-256 through libmd (Debian's libmd-dev) on Linux, linked
// statically: a well-kept implementation, and no shared library for the
// dynamic loader to load at every launch. On macOS and Windows, where libmd
// is not a dependency, OpenSSL's libcrypto (CORDON_SHA256_OPENSSL, set by
// src/core/CMakeLists.txt), which the broker links anyway.
#include "core/sha256.h"

#if defined(CORDON_SHA256_OPENSSL)
#include <openssl/sha.h>
#else
#include <sha2.h>
#endif

namespace cordon::detail {

std::array<std::uint8_t, 32> sha256(std::string_view data) noexcept {
#if defined(CORDON_SHA256_OPENSSL)
  std::array<std::uint8_t, 32> digest{};
  ::SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest.data());
  return digest;
#else
  SHA2_CTX context;
  SHA256Init(&context);
  SHA256Update(&context, reinterpret_cast<const std::uint8_t*>(data.data()), data.size());
  std::array<std::uint8_t, 32> digest{};
  SHA256Final(digest.data(), &context);
  return digest;
#endif
}

}  // namespace cordon::detail
