// The host backend of a Linux build (CMake compiles exactly one
// host_backend.cpp, the one of the platform it builds for).
#include "cordon/linux_backend.h"
#include "cordon/selection.h"

namespace cordon {

std::unique_ptr<sandbox_backend> make_host_backend() { return make_linux_backend(); }

// Selection lives beside the host backend so that cordon_core links without
// one (its rules are portable: a platform sandbox or a typed failure).
result<std::unique_ptr<sandbox_backend>> select_backend(sandbox_preference preference) {
  if (preference == sandbox_preference::forbid) return make_host_execution_backend();
  std::unique_ptr<sandbox_backend> backend = make_host_backend();
  host_facts facts = backend->read_host_facts({}, false);
  if (facts.platform != backend->platform()) {
    error err = make_error(error_code::unsupported_platform, "no sandbox backend for platform " + facts.platform);
    err.blockers.push_back(blocker::for_backend("this build has no backend for " + facts.platform));
    return err;
  }
  if (!facts.backend_available) {
    error err = make_error(error_code::backend_unavailable,
                           "the platform sandbox (" + std::string(backend->name()) +
                               ") cannot run here and the policy needs it; there is no unsandboxed fallback");
    err.blockers.push_back(blocker::for_backend(facts.backend_blocker));
    return err;
  }
  return backend;
}


}  // namespace cordon
