// platform_defaults.h — what any process needs on macOS to start, and the
// Mach services and sysctls a deny-default profile grants.
//
// Every entry is listed in `cordon policy explain --platform macos` and in
// docs/macos-backend.md, "Levels". Denied paths still win over
// them: the compiler wraps each default in the policy's exclusions.
#pragma once

#include <string>
#include <vector>

#include "cordon/policy.h"

namespace cordon::macos_impl {

struct default_path {
  std::string path;   // canonical (/private/... form)
  bool subtree;       // subpath (true) or literal (false)
  std::string why;    // one line
};

// Read-only system paths (`filesystem.include_platform_defaults`): the dyld
// shared cache and frameworks, the system binaries, /private/etc, time zones,
// the /bin/sh selector, and the pseudo-devices.
const std::vector<default_path>& platform_read_defaults();

// Written by almost every program: /dev/null and /dev/fd.
const std::vector<default_path>& platform_write_defaults();

// Directory entries whose metadata realpath(3) and the dynamic loader stat:
// "/", the /private aliases themselves, and /private.
const std::vector<std::string>& platform_metadata_literals();

// Exact Mach global names; never a wildcard. The network services (DNS,
// configd, trust evaluation) are added only for the network modes that use
// them (see mach_services_for).
std::vector<std::string> mach_services_for(network_mode mode);

// sysctl names (exact) and prefixes that libc, the loader and language runtimes
// read (CPU count, page size, OS version). No sysctl is writable.
const std::vector<std::string>& sysctl_read_names();
const std::vector<std::string>& sysctl_read_prefixes();

}  // namespace cordon::macos_impl
