// The host backend of a Linux build (CMake compiles exactly one
// host_backend.cpp, the one of the platform it builds for).
#include <cstdlib>
#include <string_view>

#include "cordon/linux_backend.h"
#include "cordon/selection.h"
#include "linux/host_facts.h"

namespace cordon {

// The namespace backend where it can run, else the os_sandbox backend, whose
// facts name the namespace backend's blocker (a policy that requires
// `container` is refused at gate 3 with it). $CORDON_LINUX_BACKEND set to
// "os-sandbox" or "namespaces" forces one (tests, benchmarks, a host whose
// namespaces work but are not wanted); docs/linux-backend.md.
std::unique_ptr<sandbox_backend> make_host_backend() {
  const char* forced = std::getenv("CORDON_LINUX_BACKEND");
  const std::string_view choice = forced != nullptr ? forced : "";
  if (choice == "os-sandbox") return make_linux_os_sandbox_backend();
  if (choice == "namespaces") return make_linux_backend();
  if (!linux_impl::read_linux_host_facts({}, false).backend_available) return make_linux_os_sandbox_backend();
  return make_linux_backend();
}

// Selection lives beside the host backend so that cordon_core links without
// one (its rules are portable: a platform sandbox or a typed failure).
// `require` asks for the full platform sandbox, linux-namespaces: where it
// cannot run the answer is its own blocker, not the weaker backend.
result<std::unique_ptr<sandbox_backend>> select_backend(sandbox_preference preference) {
  if (preference == sandbox_preference::forbid) return make_host_execution_backend();
  std::unique_ptr<sandbox_backend> backend =
      preference == sandbox_preference::require ? make_linux_backend() : make_host_backend();
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
