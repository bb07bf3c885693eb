// landlock.h — Landlock as the second filesystem (and TCP) layer.
//
// Kernel document: Documentation/userspace-api/landlock.rst. The effective
// ABI is the kernel's (landlock_create_ruleset with
// LANDLOCK_CREATE_RULESET_VERSION); each right is used only when that ABI has
// it (refer: 2, truncate: 3, TCP: 4, ioctl_dev: 5, scopes: 6).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cordon::linux_impl {

// Portable access classes; mapped to LANDLOCK_ACCESS_FS_* for the ABI in use.
enum class landlock_access {
  read,        // READ_FILE | READ_DIR | EXECUTE
  read_write,  // every filesystem right the ABI handles
  device,      // read + WRITE_FILE + IOCTL_DEV (pseudo-devices, ptys)
  list_directory,  // READ_DIR only (the root of a restricted tree, so `ls /` works)
};

// "read", "read_write", "device", "list_directory" (plan descriptions).
const char* landlock_access_name(landlock_access access) noexcept;

struct landlock_path_rule {
  std::string path;  // absolute path inside the sandbox's root
  landlock_access access = landlock_access::read;
};

struct landlock_ruleset_plan {
  int abi = 0;                       // 0 = Landlock unavailable or not used
  std::vector<landlock_path_rule> rules;
  bool restrict_tcp = false;         // ABI >= 4: handle bind/connect TCP, allow none...
  std::vector<std::uint16_t> tcp_connect_ports;  // ...but connect to these ports (the broker's)
  bool scope_signals_and_abstract_sockets = false;  // ABI >= 6
  // "landlock abi 7: fs(read,write,refer,truncate,ioctl_dev) tcp(bind,connect) scope(signal,abstract_unix)"
  std::string describe() const;
};

// The Landlock ABI version the kernel offers, or 0 when Landlock is not
// available (not built, not in the LSM list, or disabled). Never fails.
int landlock_kernel_abi() noexcept;

// Applies the ruleset to the calling thread: creates it, adds one rule per
// path (paths that do not exist are skipped), then landlock_restrict_self.
// Requires no_new_privs. Irreversible. Returns 0 or an errno value; on error
// `failed_path` (if non-null) receives the path that failed, when one did,
// and `failed_rule` (if non-null) its index in plan.rules (the sandbox's
// init, which must not allocate, reports the index).
int apply_landlock(const landlock_ruleset_plan& plan, std::string* failed_path, int* failed_rule = nullptr) noexcept;

}  // namespace cordon::linux_impl
