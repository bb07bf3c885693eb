// worker_config.h — what the filesystem worker knows about its sandbox: the
// plan's mount table (the same one its commands get) and its limits. The
// client builds it from the compiled plan and passes it as one JSON argument
// (docs/fs-worker.md, "Starting the worker").
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "fsworker/fs_error.h"

namespace cordon::fsworker {

// One line of the plan's mount table ("rw-bind /ws (writable)").
struct plan_mount {
  std::string kind;  // "ro-rbind", "ro-bind", "rw-bind", "tmpfs", "mask", "proc", "symlink"
  std::string path;  // where it is inside the sandbox (== the host path)
  std::string why;   // "writable", "readable", "platform default", "protected", "vcs", "pin", "denied", ...
};

struct worker_limits {
  std::size_t max_request_bytes = 8u << 20;   // one request line, bytes
  std::size_t max_read_bytes = 16u << 20;     // a read's content, bytes (per request, before base64)
  std::size_t max_file_bytes = 64u << 20;     // a file edit/patch/format_json/grep loads, bytes
  std::size_t max_results = 10000;            // glob/grep/list entries, ceiling of any request's cap
  std::chrono::milliseconds deadline{10000};  // per request
};

struct worker_config {
  std::string workspace;          // the plan's workspace (relative paths start here); may be empty
  std::vector<plan_mount> mounts; // in the order the plan applies them
  worker_limits limits;
};

// Parses the --config JSON (the format worker_config_to_json writes).
fs_result<worker_config> worker_config_from_json(const std::string& text);
std::string worker_config_to_json(const worker_config& config);

// The plan's mount table lines ("mount rw-bind /ws (writable)" from the
// payload's describe()) as plan_mounts; lines that are not mounts are skipped.
std::vector<plan_mount> parse_plan_mounts(const std::string& describe);

}  // namespace cordon::fsworker
