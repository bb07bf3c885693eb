#include "cordon/version.h"

namespace cordon {

std::string_view library_version() noexcept { return CORDON_VERSION; }

}  // namespace cordon
