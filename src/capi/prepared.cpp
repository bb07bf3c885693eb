// The C API's pools of prepared sandboxes (ABI minor 2) over
// cordon::prepared_pool (cordon/prepared.h, docs/prepared.md). cordon_c.h
// documents each function.
#include <chrono>
#include <limits>
#include <memory>
#include <new>
#include <string>

#include "capi/capi.h"
#include "cordon/prepared.h"

namespace cordon::capi {
namespace {

constexpr std::int64_t kMaxPoolSize = 64;

// A whole number of milliseconds in [least, 2^40] (about 35 years: beyond it a
// deadline overflows the clock) from field `key`.
result<std::chrono::milliseconds> milliseconds_of(const nlohmann::ordered_json& value, const std::string& key,
                                                  std::int64_t least) {
  const bool whole = value.is_number_integer();
  if (!whole || value.get<std::int64_t>() < least || value.get<std::int64_t>() > (std::int64_t{1} << 40)) {
    return make_error(error_code::usage_error,
                      "options: " + key + " is a whole number of milliseconds from " + std::to_string(least) +
                          " to 2^40",
                      "/" + key);
  }
  return std::chrono::milliseconds(value.get<std::int64_t>());
}

// cordon_pool_new()'s options_json. Unknown fields are refused, as
// cordon_compile()'s are: a misspelt "max_age_ms" must not keep sandboxes
// older than the host asked for.
result<pool_options> read_pool_options(const char* text) {
  pool_options out;
  auto object = options_object(text);
  if (!object) return std::move(object).error_value();
  for (const auto& [key, value] : object->items()) {
    if (key == "size") {
      if (!value.is_number_integer() || value.get<std::int64_t>() < 1 || value.get<std::int64_t>() > kMaxPoolSize) {
        return make_error(error_code::usage_error, "options: size is a whole number from 1 to 64", "/size");
      }
      out.size = static_cast<std::size_t>(value.get<std::int64_t>());
    } else if (key == "supervisor_path") {
      if (!value.is_string()) {
        return make_error(error_code::usage_error, "options: supervisor_path is not a string", "/" + key);
      }
      out.supervisor_path = value.get<std::string>();
    } else {
      std::chrono::milliseconds* field = key == "max_age_ms"        ? &out.max_age
                                         : key == "wait_ms"         ? &out.wait
                                         : key == "refill_after_ms" ? &out.refill_after
                                                                    : nullptr;
      if (field == nullptr) return make_error(error_code::usage_error, "options: unknown field " + key, "/" + key);
      auto ms = milliseconds_of(value, key, key == "max_age_ms" ? 1 : 0);
      if (!ms) return std::move(ms).error_value();
      *field = *ms;
    }
  }
  return out;
}

error out_of_memory() { return make_error(error_code::launch_failed, "out of memory", {}, ENOMEM); }

}  // namespace
}  // namespace cordon::capi

using namespace cordon::capi;
using cordon::error_code;
using cordon::make_error;

extern "C" {

int cordon_pool_new(const cordon_plan* plan, const char* options_json, cordon_pool** pool, char** error_json) {
  try {
    if (pool == nullptr) return fail(make_error(error_code::usage_error, "pool is NULL"), error_json);
    *pool = nullptr;
    if (plan == nullptr) return fail(make_error(error_code::usage_error, "plan is NULL"), error_json);
    if (!plan->plan || plan->plan->backend() == nullptr) {
      return fail(make_error(error_code::plan_null, "the plan has no backend"), error_json);
    }
    auto options = read_pool_options(options_json);
    if (!options) return fail(options.error_value(), error_json);
    *pool = new cordon_pool{plan->backend, std::make_unique<cordon::prepared_pool>(plan->plan, *options)};
    return succeed(error_json);
  } catch (...) {
    return fail(out_of_memory(), error_json);
  }
}

int cordon_pool_start(cordon_pool* pool, const cordon_run_request* request, cordon_run** run, char** error_json) {
  return start_c_run(pool != nullptr, "pool", request, run, error_json,
                     [&](const cordon::run_request& converted) { return pool->pool->start(converted); });
}

int cordon_pool_ready_count(const cordon_pool* pool) {
  if (pool == nullptr) return -1;
  const std::size_t ready = pool->pool->ready_count();
  return ready > static_cast<std::size_t>(std::numeric_limits<int>::max()) ? std::numeric_limits<int>::max()
                                                                          : static_cast<int>(ready);
}

int cordon_pool_refresh(cordon_pool* pool, int* changed, char** error_json) {
  try {
    if (changed != nullptr) *changed = 0;
    if (pool == nullptr) return fail(make_error(error_code::usage_error, "pool is NULL"), error_json);
    auto refreshed = pool->pool->refresh();
    if (!refreshed) return fail(refreshed.error_value(), error_json);
    if (changed != nullptr) *changed = *refreshed ? 1 : 0;
    return succeed(error_json);
  } catch (...) {
    return fail(out_of_memory(), error_json);
  }
}

void cordon_pool_free(cordon_pool* pool) { delete pool; }  // ~prepared_pool gives up what is ready

}  // extern "C"
