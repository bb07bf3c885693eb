// src/windows/launcher/machine_lock.h — the machine-wide lock that serializes
// DACL leases across processes: a named mutex (docs/windows-backend.md,
// "Leases"). Two cordon.exe runs on one tree would otherwise each record the
// other's leased DACL as the "original" and restore grants that were never
// the host's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "cordon/result.h"
#include "windows/launcher/win32.h"

namespace cordon::windows::launcher {

// The mutex's name: in the Global namespace, so that runs in every session
// of the machine (a service, another logon) share it.
inline constexpr const wchar_t* machine_lock_name = L"Global\\cordon-dacl-leases-v1";

class machine_lock {
 public:
  // Waits for the lock, at most `wait_ms` milliseconds (nullopt: as long as
  // it takes). A lock its last owner died holding (WAIT_ABANDONED) is taken
  // and `note` says so (the leases that owner left are recovered as stale
  // ones). Must be released by the thread that took it (the destructor of an
  // object kept on that thread). Errors: launch_failed when the mutex cannot
  // be created or opened (GetLastError in the message), or when the wait
  // timed out ("another cordon run holds the lease lock").
  static result<machine_lock> acquire(std::optional<std::uint32_t> wait_ms, std::string& note);

  machine_lock(machine_lock&&) noexcept = default;
  machine_lock& operator=(machine_lock&& other) noexcept;
  machine_lock(const machine_lock&) = delete;
  machine_lock& operator=(const machine_lock&) = delete;
  ~machine_lock();

 private:
  machine_lock() = default;
  void release() noexcept;
  win32::unique_handle mutex_;
};

}  // namespace cordon::windows::launcher
