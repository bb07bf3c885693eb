// worker.h — the filesystem worker's protocol loop (docs/fs-worker.md,
// "Protocol"): one JSON request per line on stdin, one JSON response per
// line on stdout, in order; at end of input one final report line.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fsworker/commit.h"
#include "fsworker/resolver.h"
#include "fsworker/worker_config.h"

namespace cordon::fsworker {

class worker {
 public:
  worker(resolver paths, worker_limits limits) : paths_(std::move(paths)), limits_(limits) {}
  // One request line (without its newline) to one response line (without).
  std::string handle_line(std::string_view line);
  // The response to a line longer than max_request_bytes.
  std::string too_large();
  // {"report": {"requests", "failed", "writes": [...]}}: every file a request
  // created, replaced or deleted, in order.
  std::string final_report() const;

 private:
  resolver paths_;
  worker_limits limits_;
  std::uint64_t requests_ = 0, failed_ = 0;
  std::vector<touched_file> writes_;
};

// Reads requests from `in_fd` until end of input, answers on `out_fd`, then
// writes the final report. Returns the process exit status (0; 1 when the
// output cannot be written).
int serve(worker& w, int in_fd, int out_fd, std::size_t max_request_bytes);

}  // namespace cordon::fsworker
