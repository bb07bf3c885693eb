// src/windows/launcher/machine_lock.cpp — see machine_lock.h.
#include "windows/launcher/machine_lock.h"

namespace cordon::windows::launcher {

result<machine_lock> machine_lock::acquire(std::optional<std::uint32_t> wait_ms, std::string& note) {
  machine_lock lock;
  lock.mutex_.reset(CreateMutexW(nullptr, FALSE, machine_lock_name));
  if (!lock.mutex_) return win32::last_error("CreateMutexW(Global\\cordon-dacl-leases-v1)");
  const DWORD waited = WaitForSingleObject(lock.mutex_.get(), wait_ms ? static_cast<DWORD>(*wait_ms) : INFINITE);
  switch (waited) {
    case WAIT_OBJECT_0: return lock;
    case WAIT_ABANDONED:
      note = "lease lock: its last owner died holding it; taken (stale leases are recovered)";
      return lock;
    case WAIT_TIMEOUT:
      lock.mutex_.reset();
      return make_error(error_code::launch_failed,
                        "another cordon run holds the lease lock (Global\\cordon-dacl-leases-v1); waited " +
                            std::to_string(wait_ms.value_or(0)) + " ms");
    default: {
      error e = win32::last_error("WaitForSingleObject(lease lock)");
      lock.mutex_.reset();
      return e;
    }
  }
}

machine_lock& machine_lock::operator=(machine_lock&& other) noexcept {
  if (this != &other) {
    release();
    mutex_ = std::move(other.mutex_);
  }
  return *this;
}

machine_lock::~machine_lock() { release(); }

void machine_lock::release() noexcept {
  if (mutex_) ReleaseMutex(mutex_.get());
  mutex_.reset();
}

}  // namespace cordon::windows::launcher
