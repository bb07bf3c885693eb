// src/windows/launcher/job_object.h — the Job Object that holds the tree:
// kill on close, limits, and what QueryInformationJobObject reads back.
#pragma once

#include <string>
#include <vector>

#include "cordon/windows/plan.h"
#include "windows/launcher/win32.h"

namespace cordon::windows::launcher {

struct job_readback {
  bool kill_on_close = false;
  bool active_processes = false;  // each true when the limit read back as set
  bool memory = false;
  bool cpu = false;
  std::vector<std::string> lines;  // what was read, for the report
};

// Creates an unnamed job with `limits` set. Errors: launch_failed when
// CreateJobObjectW or SetInformationJobObject fails.
result<win32::unique_handle> create_job(const job_limits& limits);

// Reads the limits back and says which are in place.
job_readback read_back_job(HANDLE job, const job_limits& limits);

}  // namespace cordon::windows::launcher
