// The C API's filesystem worker (ABI minor 1): a confined cordon-fs-worker
// for a workspace, one request line at a time (cordon/fs_worker.h,
// docs/fs-worker.md). cordon_c.h documents each function.
#include <optional>

#include "capi/capi.h"
#include "cordon/fs_worker.h"
#include "cordon/policy_json.h"
#include "cordon/profiles.h"
#include "core/strict_json.h"

struct cordon_fs {
  cordon_plan plan;  // the worker's run keeps what it needs; kept for pid and symmetry with runs
  std::optional<cordon::fs_worker> worker;
};

namespace cordon::capi {
namespace {

using json = nlohmann::ordered_json;

// options_json split in two: the worker's own fields, and cordon_compile()'s
// options (everything else, checked by the compile as usual).
struct fs_start_options {
  fs_worker_options worker;
  std::string compile_options;
};

result<fs_start_options> read_fs_options(const char* text) {
  fs_start_options out;
  if (text == nullptr || text[0] == '\0') return out;
  auto parsed = detail::parse_strict_json(text);
  if (!parsed.syntax_ok) return make_error(error_code::parse_error, "options: " + parsed.syntax_error, parsed.syntax_location);
  if (!parsed.root.is_object()) return make_error(error_code::usage_error, "options: not a JSON object");
  json rest = json::object();
  for (const auto& [key, value] : parsed.root.items()) {
    if (key == "deadline_ms") {
      if (!value.is_number_integer() || value.get<long long>() < 1 || value.get<long long>() > 3600000) {
        return make_error(error_code::usage_error, "options: deadline_ms is an integer from 1 to 3600000", "/deadline_ms");
      }
      out.worker.request_deadline = std::chrono::milliseconds(value.get<long long>());
    } else if (key == "worker" || key == "supervisor") {
      if (!value.is_string()) return make_error(error_code::usage_error, "options: " + key + " is not a string", "/" + key);
      (key == "worker" ? out.worker.worker_path : out.worker.supervisor_path) = value.get<std::string>();
    } else {
      rest[key] = value;
    }
  }
  out.compile_options = rest.dump();
  return out;
}

// Compiles and starts, as `cordon fs` does (src/cli/fs.cpp): the worker's one
// file is added read-only when the plan would not show it.
result<std::unique_ptr<cordon_fs>> start(const char* policy_json, const char* options_json) {
  auto options = read_fs_options(options_json);
  if (!options) return std::move(options).error_value();
  result<sandbox_policy> policy = policy_json != nullptr ? sandbox_policy_from_json(policy_json)
                                                         : builtin_profile(default_profile_name);
  if (!policy) return std::move(policy).error_value();
  const std::string worker = find_fs_worker(options->worker.worker_path);
  if (worker.empty()) {
    return make_error(error_code::usage_error, "no cordon-fs-worker executable (options.worker or $CORDON_FS_WORKER)");
  }
  options->worker.worker_path = worker;
  auto compiled = compile_policy(*policy, options->compile_options.c_str());
  if (compiled && !fs_worker_visible(*compiled->plan, worker)) {
    compiled = compile_policy(with_fs_worker_readable(*policy, worker), options->compile_options.c_str());
  }
  if (!compiled) return std::move(compiled).error_value();
  auto started = fs_worker::start(*compiled->plan, options->worker);
  if (!started) return std::move(started).error_value();
  auto fs = std::make_unique<cordon_fs>();
  fs->plan = std::move(*compiled);
  fs->worker.emplace(std::move(*started));
  return fs;
}

}  // namespace
}  // namespace cordon::capi

using namespace cordon;
using namespace cordon::capi;

extern "C" {

int cordon_fs_start(const char* policy_json, const char* options_json, cordon_fs** fs, char** error_json) {
  if (fs == nullptr) return fail(make_error(error_code::usage_error, "no output pointer"), error_json);
  *fs = nullptr;
  try {
    auto started = start(policy_json, options_json);
    if (!started) return fail(started.error_value(), error_json);
    *fs = started->release();
    return succeed(error_json);
  } catch (const std::bad_alloc&) {
    return fail(make_error(error_code::launch_failed, "out of memory", {}, ENOMEM), error_json);
  }
}

int cordon_fs_call(cordon_fs* fs, const char* request_json, char** response_json, char** error_json) {
  return answer(response_json, error_json, [&]() -> result<std::string> {
    if (fs == nullptr || request_json == nullptr) return make_error(error_code::usage_error, "no worker or request");
    if (!fs->worker) return make_error(error_code::usage_error, "the worker has finished");
    return fs->worker->call(request_json);
  });
}

int cordon_fs_pid(const cordon_fs* fs) {
  return fs != nullptr && fs->worker ? static_cast<int>(fs->worker->pid()) : -1;
}

int cordon_fs_finish(cordon_fs* fs, char** report_json, char** error_json) {
  return answer(report_json, error_json, [&]() -> result<std::string> {
    if (fs == nullptr) return make_error(error_code::usage_error, "no worker");
    if (!fs->worker) return make_error(error_code::usage_error, "the worker has finished");
    auto report = fs->worker->finish();
    fs->worker.reset();
    // The worker's last line is {"report": {...}}: the C API gives what it wraps.
    json worker = embedded(report.report_json);
    if (worker.is_object() && worker.contains("report")) worker = worker["report"];
    json out = {{"worker", worker}, {"run", embedded(report.run.json)}};
    return out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  });
}

void cordon_fs_free(cordon_fs* fs) { delete fs; }

}  // extern "C"
