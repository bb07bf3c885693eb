// record.h — the run record (run.json) and the JUnit XML of a gate run
// (docs/gates.md, "Run record").
#pragma once

#include <string>
#include <vector>

#include "cordon/result.h"
#include "gates/manifest.h"
#include "gates/runner.h"

namespace cordon::gates {

inline constexpr int run_record_schema_version = 1;

struct run_header {
  const gate_manifest* manifest = nullptr;
  std::string workspace;
  std::string backend;
  std::string started_at;     // RFC 3339, UTC
  std::string state;          // "running", "finished", "interrupted"
  std::uint64_t elapsed_ms = 0;
  unsigned jobs = 1;
};

// run.json. Every gate that is not finished is written with outcome
// `interrupted` and its phase ("pending" or "running"), so that the file a
// killed runner leaves behind is already the truth.
std::string run_record_json(const run_header& header, const std::vector<gate_state>& gates);

// JUnit XML: one <testcase> per gate; failed and timed_out are <failure>,
// refused and interrupted are <error>, skipped and not_applicable are
// <skipped> (with the outcome as message). None of these is a pass.
std::string junit_xml(const run_header& header, const std::vector<gate_state>& gates);

// Replaces `path` by `contents` with a temporary file and rename(2), without
// fsync: a reader, or the file a killed runner leaves, is the old or the new
// whole file, never half. The intermediate records use it (an fsync each
// cost 5-10 ms per state change on a busy disk); the final record and the
// JUnit file use write_file_atomically (include/cordon/report.h), which also
// survives a power cut. Errors: io_error with errno.
result<void> replace_file(const std::string& path, const std::string& contents);

// The current time, RFC 3339 UTC with milliseconds.
std::string utc_now();

}  // namespace cordon::gates
