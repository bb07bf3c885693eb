// cordon/selection.h — which backend runs a policy: auto / require / forbid
// (docs/governance.md, "Backend selection").
//
//  - automatic: a policy that restricts anything (every cordon policy does) needs the platform
//    sandbox (Linux: linux-namespaces where it can run, else linux-os-sandbox, whose gate 3 refuses a
//    policy requiring `container`); without one, selection fails closed. No fallback to the host.
//  - require: the full platform sandbox (Linux: linux-namespaces, never linux-os-sandbox), or a failure.
//  - forbid: host execution, chosen explicitly. Its backend states every
//    control with something to act on as `not_enforced`, so the compile
//    driver refuses any policy that does not accept `not_enforced` for each
//    (or has nothing for them to act on), and every plan and report names the
//    backend "host-execution" and warns for each control.
#pragma once

#include <memory>
#include <string_view>

#include "cordon/backend.h"
#include "cordon/result.h"

namespace cordon {

enum class sandbox_preference { automatic, require, forbid };

inline constexpr std::string_view host_execution_backend_name = "host-execution";

// The backend for `preference` on this host. Errors: backend_unavailable (the chosen backend
// cannot run here: blocker with the reason; for `require` on Linux, linux-namespaces' own),
// unsupported_platform (this build has no backend for the host's platform).
result<std::unique_ptr<sandbox_backend>> select_backend(sandbox_preference preference);

// The host-execution backend itself (forbid), for tests and explicit callers.
std::unique_ptr<sandbox_backend> make_host_execution_backend();

}  // namespace cordon
