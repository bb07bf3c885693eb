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
  bool ui = false;  // every flag of ui_restrictions read back as set
  std::vector<std::string> lines;  // what was read, for the report
};

// The UI restrictions every job gets (JOBOBJECT_BASIC_UI_RESTRICTIONS): no
// other desktop, no display settings, no ExitWindows, no global atoms, no
// USER handles of processes outside the job, no clipboard read or write, no
// system parameters.
inline constexpr DWORD ui_restrictions =
    JOB_OBJECT_UILIMIT_DESKTOP | JOB_OBJECT_UILIMIT_DISPLAYSETTINGS | JOB_OBJECT_UILIMIT_EXITWINDOWS |
    JOB_OBJECT_UILIMIT_GLOBALATOMS | JOB_OBJECT_UILIMIT_HANDLES | JOB_OBJECT_UILIMIT_READCLIPBOARD |
    JOB_OBJECT_UILIMIT_SYSTEMPARAMETERS | JOB_OBJECT_UILIMIT_WRITECLIPBOARD;

// Sets ui_restrictions on `job`. False when the system refuses them (wine
// does), with the step and GetLastError in `why`: the caller warns, since no
// control of the contract stands for the UI (docs/windows-backend.md, "Job").
bool set_ui_restrictions(HANDLE job, std::string& why);

// Creates an unnamed job with `limits` set. Errors: launch_failed when
// CreateJobObjectW or SetInformationJobObject fails.
result<win32::unique_handle> create_job(const job_limits& limits);

// Reads the limits back and says which are in place.
job_readback read_back_job(HANDLE job, const job_limits& limits);

}  // namespace cordon::windows::launcher
