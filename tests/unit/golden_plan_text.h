// golden_plan_text.h — a compiled plan (or the driver's refusal) as the text
// the golden files of tests/golden/plans/ hold: backend, isolation, the
// contract control by control, warnings, then the payload's describe() lines.
// Used by the golden tests of all three backends
// (unit/linux/golden_plan_test.cpp, unit/core/golden_three_backends_test.cpp).
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>

#include "cordon/backend.h"
#include "cordon/enforcement.h"
#include "cordon/result.h"

namespace cordon::test {

// `keep_payload_line` drops payload lines that differ from host to host
// (Linux: the binds' device and inode numbers); null keeps every line.
inline std::string golden_plan_text(const compile_result<std::shared_ptr<const sandbox_plan>>& compiled,
                                    const std::function<bool(const std::string&)>& keep_payload_line = nullptr) {
  std::ostringstream out;
  if (!compiled) {
    const error& f = compiled.failure();
    out << "refused " << to_string(f.code) << ": " << f.message << "\n";
    for (const auto& e : f.errors) out << "error " << e.location << ": " << e.reason << "\n";
    for (const auto& b : f.blockers) {
      out << "blocker " << b.subject_name() << " required " << b.required_name() << " available "
          << b.available_name() << ": " << b.reason << "\n";
    }
    return out.str();
  }
  const sandbox_plan& plan = *compiled.value();
  out << "backend " << plan.backend_name() << " " << plan.platform() << " isolation " << to_string(plan.isolation())
      << "\n";
  for (const auto& [which, status] : plan.contract()) {
    out << "control " << to_string(which) << " " << to_string(status.level)
        << (status.mechanism.empty() ? "" : " [" + status.mechanism + "]")
        << (status.detail.empty() ? "" : " (" + status.detail + ")") << "\n";
  }
  for (const auto& w : plan.warnings()) out << "warning " << w << "\n";
  std::istringstream payload(plan.payload()->describe());
  for (std::string line; std::getline(payload, line);) {
    if (!keep_payload_line || keep_payload_line(line)) out << line << "\n";
  }
  return out.str();
}

// Compares `actual` with the golden file, or writes it when
// CORDON_UPDATE_GOLDEN is set. Returns an empty string when they are equal
// (or the file was written), else why not.
inline std::string compare_with_golden(const std::filesystem::path& file, const std::string& actual) {
  if (std::getenv("CORDON_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(file, std::ios::binary) << actual;
    return "";
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) return "missing golden file " + file.string() + " (CORDON_UPDATE_GOLDEN=1 writes it)";
  std::stringstream expected;
  expected << in.rdbuf();
  if (expected.str() == actual) return "";
  return "plan differs from " + file.string() + "\n--- expected\n" + expected.str() + "--- actual\n" + actual;
}

}  // namespace cordon::test
