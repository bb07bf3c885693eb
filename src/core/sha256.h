// sha256.h — SHA-256 (FIPS 180-4), for the policy digest in reports.
//
// In-tree rather than from a library: the digest is a few hundred bytes of
// JSON per report, and every shared library the CLI loads costs each launch
// the dynamic loader's time (libmd did: about 0.1 ms with libm).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace cordon::detail {

std::array<std::uint8_t, 32> sha256(std::string_view data) noexcept;

}  // namespace cordon::detail
