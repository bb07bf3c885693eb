// beside_install.h — a helper executable of the same installation as the
// code that asks: the library (libcordon_c.so.1 in <prefix>/lib or
// <prefix>/lib/<multiarch>) or a program linked with it statically
// (<prefix>/bin/cordon) finds <prefix>/libexec/cordon/<name>, whatever the
// prefix was (docs/python.md, "Install"). So a `cmake --install --prefix DIR`
// or a relocated install runs without CORDON_SUPERVISOR or CORDON_FS_WORKER.
#pragma once

#include <string>

namespace cordon::posix {

// The executable <prefix>/libexec/cordon/<name>, where <prefix> is one or
// two levels above the directory of the object file (shared library or
// executable) this function is linked into; "" when none is executable.
std::string beside_install(const char* name);

}  // namespace cordon::posix
