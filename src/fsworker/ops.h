// ops.h — the worker's operations (docs/fs-worker.md, "Operations"). Each
// takes the parsed request and returns its result object or an fs_error;
// what it touched goes to `touched`. Pure functions of the filesystem as the
// resolver shows it: the protocol loop (worker.cpp) does the framing.
#pragma once

#include <chrono>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "fsworker/commit.h"
#include "fsworker/fs_error.h"
#include "fsworker/resolver.h"
#include "fsworker/worker_config.h"

namespace cordon::fsworker {

struct op_context {
  const resolver* paths = nullptr;
  const worker_limits* limits = nullptr;
  std::chrono::steady_clock::time_point deadline;
  std::vector<touched_file> touched;  // filled by the operation
  bool expired() const { return std::chrono::steady_clock::now() >= deadline; }
};

using op_result = fs_result<nlohmann::json>;

op_result op_read(op_context& ctx, const nlohmann::json& req);
op_result op_write(op_context& ctx, const nlohmann::json& req);
op_result op_edit(op_context& ctx, const nlohmann::json& req);
op_result op_format_json(op_context& ctx, const nlohmann::json& req);
op_result op_stat(op_context& ctx, const nlohmann::json& req);
op_result op_list(op_context& ctx, const nlohmann::json& req);
op_result op_apply_patch(op_context& ctx, const nlohmann::json& req);
op_result op_glob(op_context& ctx, const nlohmann::json& req);
op_result op_grep(op_context& ctx, const nlohmann::json& req);

// Request helpers (invalid_request on a wrong type or an unknown key).
fs_status check_keys(const nlohmann::json& req, std::initializer_list<const char*> allowed);
fs_result<std::string> string_field(const nlohmann::json& req, const char* key, bool required,
                                    const std::string& fallback = {});
fs_result<std::uint64_t> number_field(const nlohmann::json& req, const char* key, std::uint64_t fallback);
fs_result<bool> bool_field(const nlohmann::json& req, const char* key, bool fallback);

nlohmann::json touched_to_json(const touched_file& t);
// Text is binary when it has a NUL in its first 8 KiB or is not UTF-8.
bool looks_binary(const std::string& data);
// True when JSON `text` nests arrays and objects deeper than `limit` (strings
// are skipped). nlohmann parses any depth, but copies, compares and dumps
// recursively: a document a million levels deep overflows the stack.
bool json_nesting_exceeds(std::string_view text, std::size_t limit) noexcept;
std::string base64_encode(const std::string& data);
fs_result<std::string> base64_decode(const std::string& text);

}  // namespace cordon::fsworker
