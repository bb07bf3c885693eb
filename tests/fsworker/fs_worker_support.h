// fs_worker_support.h — a workspace with every hostile shape the acceptance
// table needs, and a worker started under a real plan over it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "cordon/cordon.h"
#include "cordon/fs_worker.h"

namespace cordon::fsworker_test {

// /var/tmp/cordon-fsw-XXXXXX/{ws,outside}: outside every root of the plan
// (the sandbox's /tmp is private, so the base is not under /tmp).
struct fixture_dirs {
  std::string base, ws, outside;
};
fixture_dirs make_dirs();
void remove_tree(const std::string& path);
void write_text(const std::string& path, const std::string& text, unsigned mode = 0644);
std::string read_text(const std::string& path);

// The workspace-write profile with {workspace}/secret denied (and the
// profile's protect_vcs_metadata), compiled for `ws` with the worker
// readable.
std::shared_ptr<const sandbox_plan> compile_plan(const std::string& ws);

// A JSON request line; `raw_path` is spliced in unescaped when it holds
// bytes that are not UTF-8 (so the worker sees exactly those bytes).
std::string json_string(const std::string& s);

// Sends one request and parses the response.
nlohmann::json call(fs_worker& w, const std::string& line);

}  // namespace cordon::fsworker_test
