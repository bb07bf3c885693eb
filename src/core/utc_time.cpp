// src/core/utc_time.cpp — see utc_time.h.
#include "core/utc_time.h"

#include <chrono>
#include <cstdio>
#include <ctime>

namespace cordon::detail {

std::string utc_timestamp_ms_now() {
  const auto now = std::chrono::system_clock::now();
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  const std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  std::tm utc{};
#if defined(_WIN32)
  ::gmtime_s(&utc, &seconds);  // the Windows C runtime has no gmtime_r (the mingw-w64 gate runner)
#else
  ::gmtime_r(&seconds, &utc);
#endif
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900, utc.tm_mon + 1,
                utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, static_cast<int>(ms % 1000));
  return buffer;
}

}  // namespace cordon::detail
