// sha256_bcrypt.cpp — core's SHA-256 (src/core/sha256.h) for the mingw-w64
// build: Windows' CNG (bcrypt.dll), since neither libmd nor OpenSSL is
// cross-built. Gives gate manifests their digest (src/manifest/digest.h) and
// Windows reports their policy digest. A failure of CNG, which has no way to
// be reported through sha256()'s signature, yields the all-zero digest; a
// digest of zeros names no real text.
#include <windows.h>

#include <bcrypt.h>

#include <algorithm>

#include "core/sha256.h"

namespace cordon::detail {
namespace {

struct algorithm {
  BCRYPT_ALG_HANDLE handle = nullptr;
  algorithm() {
    if (BCryptOpenAlgorithmProvider(&handle, BCRYPT_SHA256_ALGORITHM, nullptr, 0) < 0) handle = nullptr;
  }
  ~algorithm() {
    if (handle != nullptr) BCryptCloseAlgorithmProvider(handle, 0);
  }
  algorithm(const algorithm&) = delete;
  algorithm& operator=(const algorithm&) = delete;
};

struct hash_object {
  BCRYPT_HASH_HANDLE handle = nullptr;
  explicit hash_object(BCRYPT_ALG_HANDLE alg) {
    if (alg == nullptr || BCryptCreateHash(alg, &handle, nullptr, 0, nullptr, 0, 0) < 0) handle = nullptr;
  }
  ~hash_object() {
    if (handle != nullptr) BCryptDestroyHash(handle);
  }
  hash_object(const hash_object&) = delete;
  hash_object& operator=(const hash_object&) = delete;
};

}  // namespace

std::array<std::uint8_t, 32> sha256(std::string_view data) noexcept {
  std::array<std::uint8_t, 32> digest{};
  algorithm alg;
  hash_object hash(alg.handle);
  if (hash.handle == nullptr) return digest;
  // BCryptHashData takes at most ULONG bytes at a time.
  std::size_t done = 0;
  while (done < data.size()) {
    const ULONG n = static_cast<ULONG>(std::min<std::size_t>(data.size() - done, 1u << 30));
    auto* bytes = reinterpret_cast<PUCHAR>(const_cast<char*>(data.data() + done));
    if (BCryptHashData(hash.handle, bytes, n, 0) < 0) return std::array<std::uint8_t, 32>{};
    done += n;
  }
  if (BCryptFinishHash(hash.handle, digest.data(), static_cast<ULONG>(digest.size()), 0) < 0) {
    return std::array<std::uint8_t, 32>{};
  }
  return digest;
}

}  // namespace cordon::detail
