// capi.h — what the C API's files share (include/cordon/cordon_c.h): the
// handles behind the opaque types, and errors as the C API returns them.
// Nothing here crosses the C boundary.
#pragma once

#include <cerrno>
#include <exception>
#include <memory>
#include <new>
#include <string>

#include <nlohmann/json.hpp>

#include "cordon/backend.h"
#include "cordon/prepared.h"
#include "cordon/cordon_c.h"
#include "cordon/result.h"
#include "cordon/run.h"

struct cordon_plan {
  // The backend that compiled the plan: the plan points at it, so it lives as
  // long as the plan.
  // Shared with the pools prepared from the plan (prepared.cpp).
  std::shared_ptr<cordon::sandbox_backend> backend;
  std::shared_ptr<const cordon::sandbox_plan> plan;
};

struct cordon_run {
  cordon::run_handle handle;
  std::optional<cordon::run_report> report;  // set once the run ended
};

struct cordon_pool {
  // Declared first, so destroyed last: the pool's plan points at its backend,
  // which the caller's cordon_plan may no longer hold.
  std::shared_ptr<cordon::sandbox_backend> backend;
  std::unique_ptr<cordon::prepared_pool> pool;
};

namespace cordon::capi {

// A copy of `text` in memory the caller frees with cordon_string_free(); NULL
// when memory ran out.
char* copy_string(const std::string& text) noexcept;

// The error JSON of docs/library.md ("Error JSON" in cordon_c.h).
nlohmann::ordered_json error_json(const error& err);

// A JSON document (a report) embedded as JSON: null for "", a string for
// text that is not JSON.
nlohmann::ordered_json embedded(const std::string& text);

// The C code of an error: its error_code's value + 1.
int code_of(const error& err) noexcept;

// Stores err's JSON in *out (when out is not NULL) and returns its code.
int fail(const error& err, char** out) noexcept;

// An options_json argument as a JSON object: empty for NULL or "";
// parse_error when it is not JSON, usage_error for a duplicated field or a
// document that is no object (compile.cpp). Every options reader of the C
// API starts here, so that all of them refuse the same things alike.
result<nlohmann::ordered_json> options_object(const char* text);

// Reads cordon_compile()'s options_json (NULL or "" = none), selects the
// backend and compiles `policy` (compile.cpp). compile_plan() reads the
// policy JSON first (usage_error when it is NULL).
result<cordon_plan> compile_policy(const sandbox_policy& policy, const char* options_json);
result<cordon_plan> compile_plan(const char* policy_json, const char* options_json);

// Applies the bindings' "shortcuts" object (core::shortcuts_from_json: the
// CLI's shortcut flags, same meaning, relative paths against the current
// directory; "git_identity" first) to `policy`; `home` ("" = $HOME) is where
// caches and the git identity are found. Errors: usage_error (location
// "/shortcuts/KEY"), those of core::apply_shortcuts.
result<void> apply_shortcuts_json(sandbox_policy& policy, const nlohmann::json& shortcuts, const std::string& home);

// cordon_run_request as the run API's request (run.cpp): usage_error for an
// empty argv, a descriptor that is not open or an unknown stdio mode.
result<run_request> request_of(const cordon_run_request& c);

// Sets *out to NULL (when out is not NULL) and returns CORDON_OK.
int succeed(char** out) noexcept;

// The one shape of a C function with a string output: runs `body` (which
// returns result<std::string>), gives its text in *out or its error JSON in
// *error_out, and lets no exception cross the C boundary.
template <typename F>
int answer(char** out, char** error_out, F&& body) noexcept {
  if (out == nullptr) return fail(make_error(error_code::usage_error, "no output pointer"), error_out);
  *out = nullptr;
  try {
    result<std::string> text = body();
    if (!text) return fail(text.error_value(), error_out);
    *out = copy_string(*text);
    if (*out == nullptr) return fail(make_error(error_code::launch_failed, "out of memory", {}, ENOMEM), error_out);
    return succeed(error_out);
  } catch (const std::bad_alloc&) {
    return fail(make_error(error_code::launch_failed, "out of memory", {}, ENOMEM), error_out);
  } catch (const std::exception& e) {
    return fail(make_error(error_code::usage_error, e.what()), error_out);
  }
}

// The one shape of cordon_run_start() and cordon_pool_start(): checks the
// pointers (`source` names what `have_source` is about), converts the
// request, starts it with `start` (run_request -> result<run_handle>) and
// gives the handle in *run; no exception crosses the C boundary.
template <typename F>
int start_c_run(bool have_source, const char* source, const cordon_run_request* request, cordon_run** run,
                char** error_out, F&& start) noexcept {
  try {
    if (run == nullptr) return fail(make_error(error_code::usage_error, "run is NULL"), error_out);
    *run = nullptr;
    if (!have_source || request == nullptr) {
      return fail(make_error(error_code::usage_error, std::string(source) + " or request is NULL"), error_out);
    }
    auto converted = request_of(*request);
    if (!converted) return fail(converted.error_value(), error_out);
    auto started = start(*converted);
    if (!started) return fail(started.error_value(), error_out);
    *run = new cordon_run{std::move(*started), std::nullopt};
    return succeed(error_out);
  } catch (...) {
    return fail(make_error(error_code::launch_failed, "out of memory", {}, ENOMEM), error_out);
  }
}

}  // namespace cordon::capi
