// sandbox_notes.cpp — what the sandbox did that a command's own output may
// not explain, as lines a model can act on (docs/governance.md, "The
// tool-use call"). One implementation for the tool-use call of the library,
// the C API and the bindings, and for cordon mcp's shell results.
#include <nlohmann/json.hpp>

#include "cordon/governance/runtime.h"

namespace cordon::governance {

std::vector<std::string> sandbox_notes(std::string_view report_json) {
  std::vector<std::string> out;
  const auto report = nlohmann::json::parse(report_json, nullptr, false);
  if (!report.is_object()) return out;
  const auto violations = report.value("violations", nlohmann::json::array());
  for (const auto& v : violations) {
    if (!v.is_object()) continue;
    out.push_back("[cordon] blocked by the sandbox: " + v.value("kind", std::string()) + " " +
                  v.value("target", std::string()) + " (x" + std::to_string(v.value("count", 0)) +
                  "); the policy refuses it, retrying will not help");
  }
  const auto warnings = report.value("warnings", nlohmann::json::array());
  for (const auto& w : warnings) {
    const std::string text = w.is_string() ? w.get<std::string>() : std::string();
    // The view diagnoses (linux/view_diagnosis.h): a host path the command
    // named that is outside the sandbox's view, with the flag that adds it.
    if (text.find("not visible inside the sandbox") != std::string::npos ||
        text.find("outside the sandbox's view") != std::string::npos) {
      out.push_back("[cordon] " + text);
    }
  }
  return out;
}

}  // namespace cordon::governance
