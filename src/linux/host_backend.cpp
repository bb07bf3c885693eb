// The host backend of a Linux build (CMake compiles exactly one
// host_backend.cpp, the one of the platform it builds for).
#include "cordon/linux_backend.h"

namespace cordon {

std::unique_ptr<sandbox_backend> make_host_backend() { return make_linux_backend(); }

}  // namespace cordon
