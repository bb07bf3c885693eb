// src/core/utc_time.h — the wall clock as an ISO 8601 UTC timestamp with
// milliseconds ("2026-12-01T10:53:14.123Z"), for records that order events
// closer than a second apart (audit events, gate run records).
#pragma once

#include <string>

namespace cordon::detail {

// Now, from the system clock (not monotonic: for records, not for timing).
std::string utc_timestamp_ms_now();

}  // namespace cordon::detail
