// caches.h — `--cache NAME`: an opt-in persistent package or build cache,
// shared by every run that names it (docs/workloads.md, "Conveniences").
#pragma once

#include <string>
#include <vector>

#include "cordon/policy.h"
#include "cordon/result.h"

namespace cordon::core {

// The cache names --cache accepts, in the order the help lists them.
const std::vector<std::string>& cache_names();

// For each NAME (one of cache_names()) under the home directory `home`
// (absolute): creates the cache directory if it is missing (mode 0700, as the
// tools themselves do), appends it to filesystem.writable, points the tool at
// it with an environment.set entry (the command's HOME is not the host's),
// and records `metadata["persistent_cache.NAME"] = DIR`, which the report
// repeats as a warning: what the command writes there, the host's own tool
// may later read and trust.
//   pip    {home}/.cache/pip            PIP_CACHE_DIR
//   npm    {home}/.npm                  npm_config_cache
//   cargo  {home}/.cache/cordon/cargo   CARGO_HOME (a cargo home of its own: the
//                                       host's ~/.cargo holds config and binaries)
//   ccache {home}/.cache/ccache         CCACHE_DIR
// Errors (usage_error): an unknown NAME, an empty or relative `home`, a
// directory that cannot be created (with errno).
result<void> apply_caches(sandbox_policy& policy, const std::vector<std::string>& names, const std::string& home);

}  // namespace cordon::core
