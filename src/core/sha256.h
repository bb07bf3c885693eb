// sha256.h — SHA-256 (FIPS 180-4), for the policy digest in reports.
//
// From libmd, linked statically (sha256.cpp): every shared library the CLI
// loads costs each launch the dynamic loader's time (libmd.so did: about
// 0.1 ms with libm).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace cordon::detail {

std::array<std::uint8_t, 32> sha256(std::string_view data) noexcept;
// The same as 64 lower-case hex digits.
std::string sha256_hex(std::string_view data);

}  // namespace cordon::detail
