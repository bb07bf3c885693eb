// src/core/idna.cpp — IDNA conversion of host names (idna.h) with libidn2.
#include "core/idna.h"

#include <idn2.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>
#include <memory>

namespace cordon::detail {

bool has_non_ascii(std::string_view name) {
  return std::any_of(name.begin(), name.end(), [](char c) { return static_cast<unsigned char>(c) >= 0x80; });
}

idna_result idna_to_ascii(std::string_view name) {
  const std::string input(name);  // NUL-terminated for libidn2 (callers refuse NUL bytes first)
  char* out = nullptr;
  const int rc = ::idn2_lookup_u8(reinterpret_cast<const std::uint8_t*>(input.c_str()),
                                  reinterpret_cast<std::uint8_t**>(&out), IDN2_NFC_INPUT | IDN2_NONTRANSITIONAL);
  const std::unique_ptr<char, decltype(&::idn2_free)> owned(out, &::idn2_free);
  if (rc != IDN2_OK || out == nullptr) {
    return {{}, std::string("not a valid internationalized host name: ") + ::idn2_strerror(rc)};
  }
  std::string ascii(out);
  for (char& c : ascii) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return {std::move(ascii), {}};
}

}  // namespace cordon::detail
