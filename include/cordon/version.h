// cordon/version.h — the library's version, from one source: the project
// VERSION in CMakeLists.txt (compiled in as CORDON_VERSION).
#pragma once

#include <string_view>

namespace cordon {

// "MAJOR.MINOR.PATCH"; what reports write as cordon_version and
// `cordon --version` prints.
std::string_view library_version() noexcept;

}  // namespace cordon
