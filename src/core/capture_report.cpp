// capture_report.cpp — what the host kept of a run's output, added to its
// report (include/cordon/capture.h, docs/report.md "output").
#include <nlohmann/json.hpp>

#include "cordon/capture.h"

namespace cordon {
namespace {

nlohmann::ordered_json stream_document(const captured_output& o) {
  return {{"bytes", o.total_bytes}, {"kept", o.data.size()}, {"dropped", o.dropped_bytes}};
}

}  // namespace

std::string report_with_output(const std::string& report_json, const captured_run& run, std::uint64_t max_output) {
  if (report_json.empty()) return report_json;
  auto report = nlohmann::ordered_json::parse(report_json, nullptr, false);
  if (!report.is_object()) return report_json;
  report["output"] = {{"max_output", max_output},
                      {"stdout", stream_document(run.stdout_data)},
                      {"stderr", stream_document(run.stderr_data)}};
  if (run.timed_out && report.contains("outcome")) {
    report["outcome"] = "timed_out";
    report["timeout_fired"] = true;
  }
  return report.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace cordon
