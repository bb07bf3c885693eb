// capped_run.h — `cordon run --max-output` and `cordon exec --max-output`:
// the command's stdout and stderr pass through cordon, which writes the head
// of each stream as it comes, keeps the tail, and says how much it dropped
// between them (include/cordon/capture.h, docs/cli.md).
#pragma once

#include <cstdint>

#include "cordon/capture.h"
#include "cordon/governance/runtime.h"
#include "cordon/plan.h"
#include "cordon/run.h"

namespace cordon::cli {

// Streams a run's output to this process's stdout and stderr within a cap:
// the first max_output/2 bytes of each stream as they are read, the last
// max_output/2 at the end, after a line on stderr naming what was dropped.
class capped_relay {
 public:
  explicit capped_relay(std::uint64_t max_output) : max_output_(max_output) {}
  // The options for capture_run (the on_output callback writes the heads).
  capture_options options();
  // Writes the tails and the note about what was dropped.
  void finish(const captured_output& out, const captured_output& err);

 private:
  std::uint64_t max_output_;
  std::uint64_t written_[2] = {0, 0};
};

// Runs `request` under `plan` through the run API (a helper supervises it)
// with stdin inherited and stdout/stderr relayed by capped_relay; the report
// carries "output". Launch errors come back in run_report::failure.
run_report run_capped(const sandbox_plan& plan, const launch_request& request, std::uint64_t max_output);

// `cordon exec --max-output`: the runtime's tool-use call with this process's
// stdin and the output relayed by capped_relay.
governance::execution_result execute_capped(governance::execution_runtime& runtime,
                                            const governance::capability_request& request,
                                            const governance::execution_context& context, std::uint64_t max_output);

}  // namespace cordon::cli
