// src/windows/launcher/dacl_lease.h — temporary DACL changes that are always
// restored: the originals recorded durably before the first change, the
// changes read back, restoration with three attempts per entry, the record
// kept on disk until everything is restored, and recovery of a crashed run's
// record at the next start (docs/windows-backend.md, "Leases").
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cordon/windows/plan.h"
#include "windows/launcher/machine_lock.h"
#include "windows/launcher/path_boundary.h"
#include "windows/lease_record.h"

namespace cordon::windows::launcher {

class dacl_lease {
 public:
  // Takes the lease for every ACL change of `plan`, for the AppContainer
  // `appcontainer_sid`: holds the machine-wide lease lock (machine_lock.h;
  // waits at most `lock_wait_ms`, nullopt: as long as it takes), creates {run_tmp}, opens each path through the boundary,
  // writes the record to `lease_directory`, applies each change and reads it
  // back. On error everything applied so far is restored before returning.
  // `read_back` is false when some change did not read back as applied
  // (`lines` says which); the lease is still held and must be released.
  static result<std::unique_ptr<dacl_lease>> take(const windows_plan& plan, const std::string& appcontainer_name,
                                                  const std::string& appcontainer_sid,
                                                  const std::string& lease_directory,
                                                  std::optional<std::uint32_t> lock_wait_ms, bool& read_back,
                                                  std::vector<std::string>& lines);

  // Restores every entry (last first, three attempts each), removes the
  // AppContainer SID from what the run created, removes {run_tmp}, then
  // deletes the record (or rewrites it with what is still pending). One
  // line per step: "<step>: ok" or "<step>: failed: <why>".
  std::vector<std::string> release();
  bool complete() const noexcept { return record_.complete(); }

  dacl_lease(const dacl_lease&) = delete;
  dacl_lease& operator=(const dacl_lease&) = delete;
  ~dacl_lease();

 private:
  dacl_lease() = default;
  std::optional<machine_lock> lock_;  // destroyed last: after the record and the handles
  detail::lease_record record_;
  std::string record_path_;
  std::vector<opened_path> opened_;  // one per entry, held until restored
  std::vector<std::string> writable_roots_;
  bool released_ = false;
};

// Writes `text` to `path` durably: a temporary file written through and
// flushed, then renamed over `path` (MoveFileEx, write-through).
result<void> write_durably(const std::string& path, const std::string& text);

// The default lease directory: %LOCALAPPDATA%\cordon\leases (created).
result<std::string> default_lease_directory();

}  // namespace cordon::windows::launcher
