// rounding.h — std::llround for non-negative millisecond counts, without libm:
// the CLI would otherwise load libm.so at every launch for this one call.
#pragma once

#include <cstdint>
#include <limits>

namespace cordon::detail {

// Nearest integer, halves away from zero (as std::llround); 0 for anything
// not positive (NaN included), the maximum for values beyond the range.
inline std::uint64_t round_milliseconds(double ms) noexcept {
  if (!(ms > 0.0)) return 0;
  if (ms >= 18446744073709551616.0) return std::numeric_limits<std::uint64_t>::max();  // 2^64
  auto whole = static_cast<std::uint64_t>(ms);  // truncation; exact below 2^64
  // ms - whole is exact for doubles, so the comparison is too.
  return ms - static_cast<double>(whole) >= 0.5 ? whole + 1 : whole;
}

}  // namespace cordon::detail
