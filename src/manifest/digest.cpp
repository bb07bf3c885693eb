// digest.cpp — SHA-256 from libcordon's libmd wrapper (src/core/sha256.h).
#include "manifest/digest.h"

#include "core/sha256.h"

namespace cordon::manifest {

std::string sha256_digest(std::string_view bytes) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out = "sha256:";
  for (std::uint8_t b : detail::sha256(bytes)) {
    out += hex[b >> 4];
    out += hex[b & 15];
  }
  return out;
}

}  // namespace cordon::manifest
