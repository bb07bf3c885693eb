#include "core/caches.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>

namespace cordon::core {
namespace {

struct cache_kind {
  const char* name;
  const char* directory;  // below the home directory
  const char* variable;
};

constexpr cache_kind kCaches[] = {
    {"pip", ".cache/pip", "PIP_CACHE_DIR"},
    {"npm", ".npm", "npm_config_cache"},
    {"cargo", ".cache/cordon/cargo", "CARGO_HOME"},
    {"ccache", ".cache/ccache", "CCACHE_DIR"},
};

// mkdir -p, each new component 0700.
bool make_directories(const std::string& path) {
  for (auto slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
    const std::string prefix = path.substr(0, slash);
    if (::mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) return false;
    if (slash == std::string::npos) return true;
  }
}

void set_variable(environment_policy& env, const std::string& name, const std::string& value) {
  auto it = std::find_if(env.set.begin(), env.set.end(), [&](const auto& entry) { return entry.first == name; });
  if (it != env.set.end()) {
    it->second = value;
  } else {
    env.set.emplace_back(name, value);
  }
}

}  // namespace

const std::vector<std::string>& cache_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& c : kCaches) out.emplace_back(c.name);
    return out;
  }();
  return names;
}

result<void> apply_caches(sandbox_policy& policy, const std::vector<std::string>& names, const std::string& home) {
  if (names.empty()) return ok;
  if (home.empty() || home.front() != '/') {
    return make_error(error_code::usage_error, "--cache needs HOME to be an absolute directory");
  }
  for (const auto& name : names) {
    const auto* kind = std::find_if(std::begin(kCaches), std::end(kCaches),
                                    [&](const cache_kind& c) { return name == c.name; });
    if (kind == std::end(kCaches)) {
      return make_error(error_code::usage_error, "--cache " + name + ": unknown cache (choices: pip, npm, cargo, ccache)");
    }
    const std::string dir = (home == "/" ? "" : home) + "/" + kind->directory;
    if (!make_directories(dir)) {
      return make_error(error_code::usage_error, "--cache " + name + ": cannot create " + dir, {}, errno);
    }
    auto& writable = policy.filesystem.writable;
    if (std::find(writable.begin(), writable.end(), dir) == writable.end()) writable.push_back(dir);
    set_variable(policy.environment, kind->variable, dir);
    policy.metadata["persistent_cache." + name] = dir;
  }
  return ok;
}

}  // namespace cordon::core
