// A helper of the same installation (beside_install.h), through dladdr(3)
// on this function's own address.
#include "posix/beside_install.h"

#include <dlfcn.h>
#include <unistd.h>

namespace cordon::posix {

std::string beside_install(const char* name) {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&beside_install), &info) == 0 || info.dli_fname == nullptr) return "";
  std::string directory = info.dli_fname;
  for (int up = 0; up < 3; ++up) {
    const auto slash = directory.find_last_of('/');
    if (slash == std::string::npos) return "";
    directory.resize(slash);
    if (up == 0) continue;  // the object's own directory: lib/ or bin/
    const std::string candidate = directory + "/libexec/cordon/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

}  // namespace cordon::posix
