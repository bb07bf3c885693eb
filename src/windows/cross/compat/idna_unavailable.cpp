// idna_unavailable.cpp — core/idna.h for the mingw-w64 cross build, which has
// no libidn2: ASCII host names work as everywhere; a name with non-ASCII
// characters is refused (fail closed) rather than matched in a form that
// might differ from the Linux build's (docs/windows-backend.md).
#include <algorithm>

#include "core/idna.h"

namespace cordon::detail {

bool has_non_ascii(std::string_view name) {
  return std::any_of(name.begin(), name.end(), [](char c) { return static_cast<unsigned char>(c) >= 0x80; });
}

idna_result idna_to_ascii(std::string_view) {
  return {{}, "internationalized host names need libidn2, which this Windows build does not have"};
}

}  // namespace cordon::detail
