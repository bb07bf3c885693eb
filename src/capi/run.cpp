// The C API's runs: cordon_run_start() and the handle's accessors over the
// run API (cordon/run.h). cordon_c.h documents each function.
#include <fcntl.h>

#include <chrono>
#include <new>

#include "capi/capi.h"

extern char** environ;

namespace cordon::capi {
namespace {

result<stdio_spec> stdio_of(const cordon_stdio& io, const char* stream) {
  switch (io.mode) {
    case CORDON_STDIO_INHERIT: return stdio_spec::inherit();
    case CORDON_STDIO_PIPE: return stdio_spec::pipe();
    case CORDON_STDIO_FD:
      // Checked here so that a closed descriptor is a usage error before any process exists.
      if (io.fd < 0 || ::fcntl(io.fd, F_GETFD) < 0) {
        return make_error(error_code::usage_error, std::string(stream) + ": descriptor " + std::to_string(io.fd) +
                                                       " is not open", {}, EBADF);
      }
      return stdio_spec::from(io.fd);
    default: return make_error(error_code::usage_error, std::string(stream) + ": unknown stdio mode " + std::to_string(io.mode));
  }
}

std::vector<std::string> strings_of(const char* const* list) {
  std::vector<std::string> out;
  for (; list != nullptr && *list != nullptr; ++list) out.emplace_back(*list);
  return out;
}


// Records the report once the run API has it.
int ended(cordon_run& run, std::optional<run_report> report) {
  if (!report) return CORDON_RUN_GOING;
  run.report = std::move(report);
  return CORDON_RUN_ENDED;
}

}  // namespace

result<run_request> request_of(const cordon_run_request& c) {
  run_request request;
  request.launch.argv = strings_of(c.argv);
  if (request.launch.argv.empty() || request.launch.argv[0].empty()) {
    return make_error(error_code::usage_error, "argv is empty");
  }
  if (c.cwd != nullptr) request.launch.working_directory = c.cwd;
  request.launch.host_environment = strings_of(c.env != nullptr ? c.env : environ);
  auto in = stdio_of(c.stdin_io, "stdin");
  if (!in) return std::move(in).error_value();
  auto out = stdio_of(c.stdout_io, "stdout");
  if (!out) return std::move(out).error_value();
  auto err = stdio_of(c.stderr_io, "stderr");
  if (!err) return std::move(err).error_value();
  request.stdin_spec = *in;
  request.stdout_spec = *out;
  request.stderr_spec = *err;
  if (c.supervisor_path != nullptr) request.supervisor_path = c.supervisor_path;
  return request;
}

}  // namespace cordon::capi

using namespace cordon::capi;
using cordon::error_code;
using cordon::make_error;

extern "C" {

int cordon_run_start(const cordon_plan* plan, const cordon_run_request* request, cordon_run** run, char** error_json) {
  return start_c_run(plan != nullptr, "plan", request, run, error_json,
                     [&](const cordon::run_request& converted) { return cordon::start_run(*plan->plan, converted); });
}

int cordon_run_pid(const cordon_run* run) { return run != nullptr ? run->handle.pid() : -1; }

int cordon_run_fd(const cordon_run* run, int stream) {
  if (run == nullptr) return -1;
  switch (stream) {
    case 0: return run->handle.stdin_fd();
    case 1: return run->handle.stdout_fd();
    case 2: return run->handle.stderr_fd();
    default: return -1;
  }
}

int cordon_run_take_fd(cordon_run* run, int stream) {
  if (run == nullptr) return -1;
  switch (stream) {
    case 0: return run->handle.take_stdin();
    case 1: return run->handle.take_stdout();
    case 2: return run->handle.take_stderr();
    default: return -1;
  }
}

int cordon_run_wait_fd(const cordon_run* run) { return run != nullptr ? run->handle.completion_fd() : -1; }

int cordon_run_wait(cordon_run* run, int64_t timeout_ms) {
  if (run == nullptr) return -1;
  if (run->report) return CORDON_RUN_ENDED;
  try {
    // Past ~30 years a deadline would overflow the clock: that is no deadline.
    if (timeout_ms < 0 || timeout_ms > (std::int64_t{1} << 40)) return ended(*run, run->handle.wait());
    return ended(*run, run->handle.wait_for(std::chrono::milliseconds(timeout_ms)));
  } catch (...) {
    // Out of memory while reading the report: the run is still there; the caller may wait again.
    return CORDON_RUN_GOING;
  }
}

void cordon_run_cancel(cordon_run* run) {
  if (run != nullptr) run->handle.cancel();
}

int cordon_run_status_get(const cordon_run* run, cordon_run_status* status) {
  if (run == nullptr || status == nullptr) return code_of(make_error(error_code::usage_error, "NULL argument"));
  if (!run->report) return code_of(make_error(error_code::usage_error, "the run has not ended"));
  const cordon::run_report& r = *run->report;
  *status = cordon_run_status{};
  status->exit_code = cordon::exit_code_for(r);
  status->cancelled = r.cancelled ? 1 : 0;
  status->error_code = r.failure ? code_of(*r.failure) : CORDON_OK;
  if (r.outcome) {
    status->ran = 1;
    status->exited = r.outcome->exited ? 1 : 0;
    status->signal = r.outcome->signal;
    status->timed_out = r.outcome->timed_out ? 1 : 0;
    status->wall_ms = r.outcome->wall_ms;
  }
  return CORDON_OK;
}

char* cordon_run_report_json(const cordon_run* run) {
  if (run == nullptr || !run->report) return nullptr;
  return copy_string(run->report->json);
}

char* cordon_run_error_json(const cordon_run* run) {
  if (run == nullptr || !run->report || !run->report->failure) return nullptr;
  try {
    return copy_string(error_json(*run->report->failure).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  } catch (...) {
    return nullptr;
  }
}

void cordon_run_free(cordon_run* run) { delete run; }  // ~run_handle cancels and waits a run still going

}  // extern "C"
