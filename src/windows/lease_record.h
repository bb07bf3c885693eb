// src/windows/lease_record.h — the durable record of a DACL lease: every
// original descriptor, written and flushed before the first change, so that a
// crash mid-run is restored at the next start (docs/windows-backend.md,
// "Leases").
//
// Format (JSON, one object; unknown fields are an error):
//   {"format": "cordon-windows-dacl-lease", "version": 1,
//    "owner": {"pid": 4242, "start_time": 133..., "plan": 7},
//    "appcontainer": {"name": "cordon.run.4242.7", "sid": "S-1-15-2-..."},
//    "created": ["C:\\Users\\u\\AppData\\Local\\Temp\\cordon-run-..."],
//    "entries": [{"path": "C:\\work", "file_id": "0e3a4b1c:0000000000012345",
//                 "original_sddl": "D:AI(A;OICI;FA;;;SY)...", "dacl_protected": false,
//                 "state": "pending", "attempts": 0}]}
// `start_time` is the owner's creation time (FILETIME, 100 ns): with the pid
// it tells a live owner from a crashed one. Entries are restored in reverse
// order. `created` lists directories the launcher made and removes.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/result.h"

namespace cordon::windows::detail {

inline constexpr std::string_view lease_format = "cordon-windows-dacl-lease";
inline constexpr int lease_format_version = 1;
// A failed restore is retried this many times within one cleanup; the entry
// stays in the record (and on disk) until it is restored.
inline constexpr int max_restore_attempts = 3;

enum class lease_state { pending, restored };

struct lease_entry {
  std::string path;
  std::string file_id;        // volume serial and file index, hex: the object the DACL was read from
  // The DACL as SDDL ("D:...", with its protection flag); for a mandatory
  // label change (the low-integrity fallback, plan.h mandatory_label) the
  // original label instead ("S:(ML;...)", or "S:" for none, restored as none).
  std::string original_sddl;
  bool dacl_protected = false;
  lease_state state = lease_state::pending;
  int attempts = 0;           // restore attempts that failed so far
  bool operator==(const lease_entry&) const = default;
};

struct lease_record {
  std::uint32_t owner_pid = 0;
  std::uint64_t owner_start_time = 0;
  std::uint64_t plan_identity = 0;
  std::string appcontainer_name;
  std::string appcontainer_sid;
  std::vector<std::string> created;
  std::vector<lease_entry> entries;
  bool operator==(const lease_record&) const = default;
  // True when every entry is restored: the record may be deleted.
  bool complete() const noexcept;
};

std::string lease_record_to_json(const lease_record& record);

// Strict: a wrong format name or version, a missing or unknown field, or a
// wrong type is error_code::invalid_policy with the JSON pointer.
result<lease_record> lease_record_from_json(std::string_view text);

// Restores every pending entry, last first. `restore` puts one entry's
// original descriptor back (returning an error on failure). Each entry is
// tried up to max_restore_attempts times in this call; one that still fails
// keeps state pending with its attempt count, and the record is not
// complete. Returns the number of entries still pending.
std::size_t restore_entries(lease_record& record, const std::function<result<void>(const lease_entry&)>& restore,
                            std::vector<std::string>& failures);

}  // namespace cordon::windows::detail
