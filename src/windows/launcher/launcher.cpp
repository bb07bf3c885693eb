// src/windows/launcher/launcher.cpp — the launch driver: each step of
// cordon/windows/launcher.h in its order. The mechanisms live in their own
// files; this one only sequences them and lowers levels by what it read back.
// windows.h (through win32.h) must precede the other Windows headers.
#include "windows/launcher/win32.h"

#include <sddl.h>

#include <chrono>
#include <thread>

#include "cordon/windows/compile.h"
#include "cordon/windows/launcher.h"
#include "cordon/windows/network_check.h"
#include "windows/launcher/dacl_lease.h"
#include "windows/launcher/job_object.h"
#include "windows/launcher/network_probe.h"
#include "windows/launcher/restricted_token.h"

namespace cordon::windows {
namespace {

using win32::unique_handle;

void lower(enforcement_contract& k, control c, const std::string& why) {
  auto& s = k[c];
  if (s.level == enforcement_level::not_applicable) return;
  s.level = enforcement_level::not_enforced;
  s.detail = "not read back: " + why;
}

// A pipe whose write end the child inherits (through the handle list only).
struct pipe_pair {
  unique_handle read, write;
};
result<pipe_pair> make_pipe(const char* what) {
  SECURITY_ATTRIBUTES sa{sizeof sa, nullptr, TRUE};
  HANDLE r = nullptr, w = nullptr;
  if (!CreatePipe(&r, &w, &sa, 0)) return win32::last_error(std::string("CreatePipe(") + what + ")");
  pipe_pair p{unique_handle(r), unique_handle(w)};
  if (!SetHandleInformation(p.read.get(), HANDLE_FLAG_INHERIT, 0)) return win32::last_error("SetHandleInformation");
  return p;
}

void drain(HANDLE h, std::string& out) {
  char buf[4096];
  DWORD n = 0;
  while (ReadFile(h, buf, sizeof buf, &n, nullptr) && n > 0) out.append(buf, n);
}

// The attribute list for CreateProcess: the inherited handles, and the
// AppContainer's security capabilities. Every update that fails is fatal:
// wine, for one, refuses SECURITY_CAPABILITIES and would otherwise start the
// child outside any AppContainer.
class attribute_list {
 public:
  result<void> init(DWORD count) {
    SIZE_T size = 0;
    InitializeProcThreadAttributeList(nullptr, count, 0, &size);
    storage_.resize(size);
    list_ = reinterpret_cast<LPPROC_THREAD_ATTRIBUTE_LIST>(storage_.data());
    if (!InitializeProcThreadAttributeList(list_, count, 0, &size)) {
      list_ = nullptr;
      return win32::last_error("InitializeProcThreadAttributeList");
    }
    return ok;
  }
  result<void> update(DWORD_PTR attribute, void* value, SIZE_T size, const char* name) {
    if (!UpdateProcThreadAttribute(list_, 0, attribute, value, size, nullptr, nullptr)) {
      return win32::last_error(std::string("UpdateProcThreadAttribute(") + name + ")");
    }
    return ok;
  }
  LPPROC_THREAD_ATTRIBUTE_LIST get() const { return list_; }
  ~attribute_list() {
    if (list_ != nullptr) DeleteProcThreadAttributeList(list_);
  }

 private:
  std::vector<unsigned char> storage_;
  LPPROC_THREAD_ATTRIBUTE_LIST list_ = nullptr;
};

// The AppContainer profile for one run; deleted as a reported cleanup step.
struct appcontainer_run {
  const appcontainer_provider* provider = nullptr;
  std::string name, sid_text;
  win32::local_ptr<void> sid;
};

result<void> check_plan(const windows_plan& plan) {
  if (plan.format_version() != plan_format_version || plan.process_token() != windows_process_token()) {
    return make_error(error_code::plan_stale, "plan has format version " + std::to_string(plan.format_version()) +
                                                  " or comes from another process; recompile the policy");
  }
  if (plan.from_reference_shape()) {
    return make_error(error_code::backend_unavailable, "the plan was compiled for a reference host shape, not this host");
  }
  if (plan.from_recorded_facts()) {
    return make_error(error_code::plan_recorded_facts,
                      "the plan was compiled on recorded host facts, which describe a host and never prove this one");
  }
  if (!plan.command()) return make_error(error_code::plan_null, "the plan was compiled without a command");
  return ok;
}

// The command image, opened for the run without write or delete sharing (no
// one can change, rename or delete it until the run ends) and checked to be
// the object the plan was compiled for. Errors: command_not_found;
// launch_failed for another object, a sharing violation (someone has it open
// for writing) or another failure.
result<unique_handle> hold_command_image(const command_spec& command) {
  unique_handle image(CreateFileW(win32::widen(command.application).c_str(), GENERIC_READ, FILE_SHARE_READ, nullptr,
                                  OPEN_EXISTING, FILE_FLAG_OPEN_REPARSE_POINT, nullptr));
  if (!image) {
    const DWORD code = GetLastError();
    if (code == ERROR_FILE_NOT_FOUND || code == ERROR_PATH_NOT_FOUND) {
      return make_error(error_code::command_not_found, command.application + " is gone since the plan was compiled");
    }
    return win32::last_error("CreateFileW(" + command.application + ", hold the command image)", code);
  }
  BY_HANDLE_FILE_INFORMATION info{};
  if (!GetFileInformationByHandle(image.get(), &info)) return win32::last_error("GetFileInformationByHandle(command image)");
  const std::uint64_t index = (static_cast<std::uint64_t>(info.nFileIndexHigh) << 32) | info.nFileIndexLow;
  const bool known = command.volume_serial != 0 || command.file_index != 0;
  if (known && (info.dwVolumeSerialNumber != command.volume_serial || index != command.file_index)) {
    return make_error(error_code::launch_failed, "the command image " + command.application +
                                                     " is another file than the one the plan was compiled for "
                                                     "(replaced since); recompile");
  }
  return image;
}

std::int64_t ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

result<windows_run_result> launch_windows_plan(const windows_plan& plan, const windows_launch_options& options) {
  if (auto c = check_plan(plan); !c) return std::move(c).error_value();
  const command_spec& command = *plan.command();
  // Held until the run ends (destroyed last): the image that runs is the one compiled.
  auto image = hold_command_image(command);
  if (!image) return std::move(image).error_value();
  windows_run_result run;
  run.observed = plan.contract();
  const bool wants_lease = !plan.acl_changes().empty();

  std::string lease_dir = options.lease_directory;
  if (lease_dir.empty() && wants_lease) {
    auto d = launcher::default_lease_directory();
    if (!d) return std::move(d).error_value();
    lease_dir = *d;
  }
  if (!lease_dir.empty()) {
    std::vector<std::string> recovered;
    auto r = recover_stale_leases(lease_dir, recovered, options.lease_wait_ms);
    run.cleanup.insert(run.cleanup.end(), recovered.begin(), recovered.end());
    if (!r) return std::move(r).error_value();
  }

  // The AppContainer profile, then the lease for its SID.
  // Cleanup runs on every path out, in reverse order of these declarations:
  // the lease first, then the profile, whose deletion is attempted even when
  // ACL cleanup failed. A run that completes reports each step.
  appcontainer_run ac;
  struct profile_cleanup {
    appcontainer_run& ac;
    windows_run_result& run;
    void now() {
      if (ac.provider == nullptr) return;
      auto removed = ac.provider->remove(ac.name);
      run.cleanup.push_back("delete AppContainer profile " + ac.name +
                            (removed ? ": ok" : ": failed: " + removed.error_value().message));
      ac.provider = nullptr;
    }
    ~profile_cleanup() { now(); }
  } delete_profile_at_exit{ac, run};
  if (plan.token().appcontainer) {
    const appcontainer_provider& provider =
        options.appcontainer != nullptr ? *options.appcontainer : system_appcontainer_provider();
    auto sid = provider.create(plan.token().appcontainer_name);
    if (!sid) return std::move(sid).error_value();
    ac.provider = &provider;
    ac.name = plan.token().appcontainer_name;
    ac.sid_text = *sid;
    PSID raw = nullptr;
    if (!ConvertStringSidToSidW(win32::widen(*sid).c_str(), &raw)) return win32::last_error("ConvertStringSidToSidW(AppContainer)");
    ac.sid.reset(raw);
  }
  std::unique_ptr<launcher::dacl_lease> lease;
  struct lease_cleanup {
    std::unique_ptr<launcher::dacl_lease>& lease;
    windows_run_result& run;
    void now() {
      if (!lease) return;
      auto lines = lease->release();
      run.cleanup.insert(run.cleanup.end(), lines.begin(), lines.end());
      lease.reset();
    }
    ~lease_cleanup() { now(); }
  } release_lease_at_exit{lease, run};
  if (wants_lease) {
    bool read_back = false;
    auto taken = launcher::dacl_lease::take(plan, ac.name, ac.sid_text, lease_dir, options.lease_wait_ms, read_back,
                                             run.readback);
    if (!taken) return std::move(taken).error_value();
    lease = std::move(*taken);
    if (!read_back) {
      for (control c : {control::filesystem_read, control::filesystem_write, control::filesystem_deny}) {
        lower(run.observed, c, "a DACL change did not read back");
      }
    }
  }

  // The job, read back.
  const job_limits limits = limits_for_request(plan, options.limits);
  auto job = launcher::create_job(limits);
  if (!job) return std::move(job).error_value();
  std::string ui_refused;
  launcher::set_ui_restrictions(job->get(), ui_refused);
  const launcher::job_readback jr = launcher::read_back_job(job->get(), limits);
  run.readback.insert(run.readback.end(), jr.lines.begin(), jr.lines.end());
  if (!jr.ui) {
    run.warnings.push_back("UI limits not in place (" + (ui_refused.empty() ? "they did not read back" : ui_refused) +
                           "): the command may use other desktops, the clipboard, global atoms and USER handles "
                           "of other processes");
  }
  if (!jr.kill_on_close) lower(run.observed, control::process_tree_cleanup, "KILL_ON_JOB_CLOSE");
  if (limits.active_processes && !jr.active_processes) lower(run.observed, control::process_count, "ACTIVE_PROCESS");
  if (limits.job_memory_bytes && !jr.memory) lower(run.observed, control::memory, "JOB_MEMORY");
  if (limits.cpu_time_100ns && !jr.cpu) lower(run.observed, control::cpu, "JOB_TIME");

  // The token, read back before use.
  auto token = launcher::create_restricted_token(plan.token());
  if (!token) return std::move(token).error_value();
  const launcher::token_readback before = launcher::read_back_token(token->get());
  run.readback.insert(run.readback.end(), before.lines.begin(), before.lines.end());

  // The network check (cordon/windows/network_check.h): network_deny is
  // claimed only when a connect from this AppContainer, under this token, fails.
  if (plan.token().appcontainer) {
    control_status& deny = run.observed[control::network_deny];
    if (deny.level != enforcement_level::not_applicable && deny.level != enforcement_level::not_enforced) {
      const connect_probe_observation probed = launcher::probe_appcontainer_connect(token->get(), ac.sid.get());
      run.readback.push_back("network check: " + describe(probed));
      deny = network_deny_after_probe(deny, probed);
    }
  }

  // Standard handles: stdin NUL, stdout and stderr pipes; nothing else inherits.
  SECURITY_ATTRIBUTES inherit{sizeof inherit, nullptr, TRUE};
  unique_handle null_in(CreateFileW(L"NUL", GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE, &inherit, OPEN_EXISTING, 0, nullptr));
  if (!null_in) return win32::last_error("CreateFileW(NUL)");
  auto out = make_pipe("stdout");
  if (!out) return std::move(out).error_value();
  auto err = make_pipe("stderr");
  if (!err) return std::move(err).error_value();
  HANDLE handles[3] = {null_in.get(), out->write.get(), err->write.get()};

  attribute_list attributes;
  if (auto i = attributes.init(plan.token().appcontainer ? 2 : 1); !i) return std::move(i).error_value();
  if (auto u = attributes.update(PROC_THREAD_ATTRIBUTE_HANDLE_LIST, handles, sizeof handles, "HANDLE_LIST"); !u) {
    return std::move(u).error_value();
  }
  SECURITY_CAPABILITIES caps{};
  if (plan.token().appcontainer) {
    caps.AppContainerSid = ac.sid.get();
    caps.Capabilities = nullptr;  // no network, no libraries: the plan grants none
    caps.CapabilityCount = 0;
    if (auto u = attributes.update(PROC_THREAD_ATTRIBUTE_SECURITY_CAPABILITIES, &caps, sizeof caps, "SECURITY_CAPABILITIES");
        !u) {
      return std::move(u).error_value();
    }
  }

  STARTUPINFOEXW si{};
  si.StartupInfo.cb = sizeof si;
  si.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
  si.StartupInfo.hStdInput = handles[0];
  si.StartupInfo.hStdOutput = handles[1];
  si.StartupInfo.hStdError = handles[2];
  si.lpAttributeList = attributes.get();
  std::wstring app = win32::widen(command.application);
  std::wstring line = win32::widen(command.command_line);
  std::wstring cwd = win32::widen(command.working_directory);
  std::wstring env(plan.environment().block.begin(), plan.environment().block.end());
  PROCESS_INFORMATION pi{};
  const DWORD flags = CREATE_SUSPENDED | CREATE_UNICODE_ENVIRONMENT | EXTENDED_STARTUPINFO_PRESENT | CREATE_NO_WINDOW;
  if (!CreateProcessAsUserW(token->get(), app.c_str(), line.data(), nullptr, nullptr, TRUE, flags, env.data(), cwd.c_str(),
                            &si.StartupInfo, &pi)) {
    const DWORD code = GetLastError();
    if (code == ERROR_FILE_NOT_FOUND || code == ERROR_PATH_NOT_FOUND) {
      return make_error(error_code::command_not_found, command.application + " could not be started: not found");
    }
    return win32::last_error("CreateProcessAsUserW(" + command.application + ")", code);
  }
  unique_handle process(pi.hProcess), thread(pi.hThread);
  // From here a failure terminates the suspended child: it never ran.
  const auto refuse = [&](error e) -> result<windows_run_result> {
    TerminateProcess(process.get(), 1);
    WaitForSingleObject(process.get(), 5000);
    return e;
  };
  if (!AssignProcessToJobObject(job->get(), process.get())) return refuse(win32::last_error("AssignProcessToJobObject"));
  BOOL in_job = FALSE;
  if (!IsProcessInJob(process.get(), job->get(), &in_job) || !in_job) {
    return refuse(make_error(error_code::launch_failed, "the child is not in its job after AssignProcessToJobObject"));
  }
  HANDLE child_token_raw = nullptr;
  if (!OpenProcessToken(process.get(), TOKEN_QUERY, &child_token_raw)) return refuse(win32::last_error("OpenProcessToken(child)"));
  unique_handle child_token(child_token_raw);
  const launcher::token_readback tr = launcher::read_back_token(child_token.get());
  for (const auto& l : tr.lines) run.readback.push_back("child " + l);
  if (!tr.read) lower(run.observed, control::privilege, "the child's token could not be queried");
  if (!tr.only_change_notify) lower(run.observed, control::privilege, "the child's token keeps privileges");
  if (!tr.administrators_deny_only) lower(run.observed, control::privilege, "Administrators is enabled in the child's token");
  if (plan.token().low_integrity) {
    // The fallback's writes are confined only at low integrity (no-write-up).
    if (tr.integrity_rid > SECURITY_MANDATORY_LOW_RID) {
      lower(run.observed, control::filesystem_write, "the child runs above low integrity");
      lower(run.observed, control::privilege, "the child runs above low integrity");
    }
    if (!tr.restricted) lower(run.observed, control::privilege, "the child's token has no restricting SIDs");
  }
  if (plan.token().appcontainer) {
    if (!tr.appcontainer) {
      return refuse(make_error(error_code::launch_failed, "the child is not in an AppContainer (TokenIsAppContainer is 0)"));
    }
    if (tr.integrity_rid > SECURITY_MANDATORY_LOW_RID) {
      return refuse(make_error(error_code::launch_failed, "the AppContainer child runs above low integrity"));
    }
  }
  // The policy's requirements on Windows (its "windows" entries included), against what was read back:
  // the driver's own gate 4 check (the one rule for `unverified`).
  if (const auto unmet = unmet_policy_requirements(plan.policy(), "windows", run.observed); !unmet.empty()) {
    const blocker& b = unmet.front();
    return refuse(make_error(error_code::enforcement_unavailable, b.subject_name() + " read back as " +
                                                                      b.available_name() + " but the policy requires " +
                                                                      b.required_name() + ": " + b.reason));
  }

  // Run: close our copies of the child's ends, capture, wait with the deadline.
  null_in.reset();
  out->write.reset();
  err->write.reset();
  std::thread read_out(drain, out->read.get(), std::ref(run.stdout_text));
  std::thread read_err(drain, err->read.get(), std::ref(run.stderr_text));
  const auto started = std::chrono::steady_clock::now();
  if (ResumeThread(thread.get()) == static_cast<DWORD>(-1)) {
    TerminateJobObject(job->get(), 1);
    read_out.join();
    read_err.join();
    return win32::last_error("ResumeThread");
  }
  const DWORD wait = limits.timeout_ms ? static_cast<DWORD>(std::min<std::uint64_t>(*limits.timeout_ms, INFINITE - 1)) : INFINITE;
  const DWORD waited = WaitForSingleObject(process.get(), wait);
  if (waited == WAIT_TIMEOUT) {
    run.timed_out = true;
    TerminateJobObject(job->get(), 124);
    WaitForSingleObject(process.get(), INFINITE);
  }
  DWORD code = 0;
  GetExitCodeProcess(process.get(), &code);
  run.exit_code = code;
  run.exited = !run.timed_out;
  run.wall_ms = ms_since(started);
  // The run ends with its command: what it left running dies with the job.
  TerminateJobObject(job->get(), 1);
  job->reset();
  read_out.join();
  read_err.join();
  release_lease_at_exit.now();
  delete_profile_at_exit.now();
  return run;
}

}  // namespace cordon::windows
