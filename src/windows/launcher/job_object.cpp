// src/windows/launcher/job_object.cpp — see job_object.h.
#include "windows/launcher/job_object.h"

#include <cstdio>

namespace cordon::windows::launcher {

result<win32::unique_handle> create_job(const job_limits& limits) {
  win32::unique_handle job(CreateJobObjectW(nullptr, nullptr));
  if (!job) return win32::last_error("CreateJobObjectW");
  JOBOBJECT_EXTENDED_LIMIT_INFORMATION info{};
  DWORD flags = 0;
  if (limits.kill_on_close) flags |= JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
  if (limits.die_on_unhandled_exception) flags |= JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION;
  if (limits.active_processes) {
    flags |= JOB_OBJECT_LIMIT_ACTIVE_PROCESS;
    info.BasicLimitInformation.ActiveProcessLimit = *limits.active_processes;
  }
  if (limits.job_memory_bytes) {
    flags |= JOB_OBJECT_LIMIT_JOB_MEMORY;
    info.JobMemoryLimit = static_cast<SIZE_T>(*limits.job_memory_bytes);
  }
  if (limits.cpu_time_100ns) {
    flags |= JOB_OBJECT_LIMIT_JOB_TIME;
    info.BasicLimitInformation.PerJobUserTimeLimit.QuadPart = static_cast<LONGLONG>(*limits.cpu_time_100ns);
  }
  info.BasicLimitInformation.LimitFlags = flags;
  if (!SetInformationJobObject(job.get(), JobObjectExtendedLimitInformation, &info, sizeof info)) {
    return win32::last_error("SetInformationJobObject(JobObjectExtendedLimitInformation)");
  }
  return job;
}

bool set_ui_restrictions(HANDLE job, std::string& why) {
  JOBOBJECT_BASIC_UI_RESTRICTIONS ui{};
  ui.UIRestrictionsClass = ui_restrictions;
  if (SetInformationJobObject(job, JobObjectBasicUIRestrictions, &ui, sizeof ui)) return true;
  why = win32::last_error("SetInformationJobObject(JobObjectBasicUIRestrictions)").message;
  return false;
}

job_readback read_back_job(HANDLE job, const job_limits& limits) {
  job_readback r;
  JOBOBJECT_BASIC_UI_RESTRICTIONS ui{};
  if (QueryInformationJobObject(job, JobObjectBasicUIRestrictions, &ui, sizeof ui, nullptr)) {
    r.ui = (ui.UIRestrictionsClass & ui_restrictions) == ui_restrictions;
    char line[64];
    std::snprintf(line, sizeof line, "job: ui restrictions 0x%lx", static_cast<unsigned long>(ui.UIRestrictionsClass));
    r.lines.push_back(line);
  } else {
    r.lines.push_back("job: ui restrictions unreadable (error " + std::to_string(GetLastError()) + ")");
  }
  JOBOBJECT_EXTENDED_LIMIT_INFORMATION info{};
  DWORD size = 0;
  if (!QueryInformationJobObject(job, JobObjectExtendedLimitInformation, &info, sizeof info, &size)) {
    r.lines.push_back("job: QueryInformationJobObject failed (error " + std::to_string(GetLastError()) + ")");
    return r;
  }
  const DWORD flags = info.BasicLimitInformation.LimitFlags;
  r.kill_on_close = (flags & JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE) != 0;
  r.active_processes = limits.active_processes && (flags & JOB_OBJECT_LIMIT_ACTIVE_PROCESS) != 0 &&
                       info.BasicLimitInformation.ActiveProcessLimit == *limits.active_processes;
  r.memory = limits.job_memory_bytes && (flags & JOB_OBJECT_LIMIT_JOB_MEMORY) != 0 &&
             info.JobMemoryLimit == static_cast<SIZE_T>(*limits.job_memory_bytes);
  r.cpu = limits.cpu_time_100ns && (flags & JOB_OBJECT_LIMIT_JOB_TIME) != 0 &&
          info.BasicLimitInformation.PerJobUserTimeLimit.QuadPart == static_cast<LONGLONG>(*limits.cpu_time_100ns);
  char line[160];
  std::snprintf(line, sizeof line, "job: limit flags 0x%lx, active %lu, job memory %llu, job time %lld",
                static_cast<unsigned long>(flags), static_cast<unsigned long>(info.BasicLimitInformation.ActiveProcessLimit),
                static_cast<unsigned long long>(info.JobMemoryLimit),
                static_cast<long long>(info.BasicLimitInformation.PerJobUserTimeLimit.QuadPart));
  r.lines.push_back(line);
  return r;
}

}  // namespace cordon::windows::launcher
