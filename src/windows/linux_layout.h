// src/windows/linux_layout.h — the Linux layout a portable policy names in its
// environment (a POSIX PATH, /tmp), read as Windows can: the built-in profiles
// set PATH=/usr/local/bin:/usr/bin:... and HOME=TMPDIR=/tmp, which name
// nothing on Windows (docs/windows-backend.md, "Environment").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cordon/policy.h"

namespace cordon::windows::detail {

// The environment section with each `set` value that names the Linux layout
// replaced by its Windows counterpart, every replacement stated in `warnings`
// (one line each, "environment: NAME ..."):
//  - PATH (any case) whose value starts with '/' and has no entry with a
//    drive ("C:\"): `system_root`\System32;`system_root` (left as it is when
//    `system_root` is not an absolute Windows path);
//  - a value that is exactly "/tmp": `run_tmp` (left as it is when the policy
//    has no {run_tmp});
//  - when TMPDIR was so replaced, TEMP and TMP (what Windows programs read
//    for it) are set to `run_tmp` too, unless the policy names them itself in
//    `allow` or `set`.
// Every other value is kept byte for byte; so is the policy itself (only the
// command's environment changes).
environment_policy windows_reading_of(const environment_policy& policy, const std::optional<std::string>& run_tmp,
                                      const std::string& system_root, std::vector<std::string>& warnings);

}  // namespace cordon::windows::detail
