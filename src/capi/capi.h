// capi.h — what the C API's files share (include/cordon/cordon_c.h): the
// handles behind the opaque types, and errors as the C API returns them.
// Nothing here crosses the C boundary.
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "cordon/backend.h"
#include "cordon/cordon_c.h"
#include "cordon/result.h"
#include "cordon/run.h"

struct cordon_plan {
  // The backend that compiled the plan: the plan points at it, so it lives as
  // long as the plan.
  std::unique_ptr<cordon::sandbox_backend> backend;
  std::shared_ptr<const cordon::sandbox_plan> plan;
};

struct cordon_run {
  cordon::run_handle handle;
  std::optional<cordon::run_report> report;  // set once the run ended
};

namespace cordon::capi {

// A copy of `text` in memory the caller frees with cordon_string_free(); NULL
// when memory ran out.
char* copy_string(const std::string& text) noexcept;

// The error JSON of docs/library.md ("Error JSON" in cordon_c.h).
nlohmann::ordered_json error_json(const error& err);

// The C code of an error: its error_code's value + 1.
int code_of(const error& err) noexcept;

// Stores err's JSON in *out (when out is not NULL) and returns its code.
int fail(const error& err, char** out) noexcept;

// Sets *out to NULL (when out is not NULL) and returns CORDON_OK.
int succeed(char** out) noexcept;

}  // namespace cordon::capi
