// selection.cpp — the names of gate outcomes and the choice of gates to run
// (runner.h). Portable: the Windows gate runner uses them too.
#include <map>
#include <set>

#include "gates/runner.h"

namespace cordon::gates {

std::string_view to_string(gate_outcome outcome) noexcept {
  switch (outcome) {
    case gate_outcome::passed: return "passed";
    case gate_outcome::failed: return "failed";
    case gate_outcome::timed_out: return "timed_out";
    case gate_outcome::refused: return "refused";
    case gate_outcome::not_applicable: return "not_applicable";
    case gate_outcome::skipped: return "skipped";
    case gate_outcome::interrupted: return "interrupted";
  }
  return "interrupted";
}

std::vector<std::string> below_enforced(const enforcement_contract& contract) {
  std::vector<std::string> out;
  for (const auto& [c, status] : contract) {
    if (status.level != enforcement_level::enforced && status.level != enforcement_level::not_applicable) {
      out.push_back(std::string(to_string(c)) + "=" + std::string(to_string(status.level)));
    }
  }
  return out;
}

result<std::vector<const gate_spec*>> select_gates(const gate_manifest& manifest, const std::vector<std::string>& only) {
  std::map<std::string, const gate_spec*> by_name;
  for (const auto& g : manifest.gates) by_name[g.name] = &g;
  std::set<std::string> chosen;
  std::vector<std::string> todo = only;
  while (!todo.empty()) {
    std::string name = todo.back();
    todo.pop_back();
    auto it = by_name.find(name);
    if (it == by_name.end()) return make_error(error_code::usage_error, "--only " + name + ": no such gate");
    if (chosen.insert(name).second) todo.insert(todo.end(), it->second->needs.begin(), it->second->needs.end());
  }
  std::vector<const gate_spec*> out;
  for (const auto& g : manifest.gates) {
    if (only.empty() || chosen.contains(g.name)) out.push_back(&g);
  }
  return out;
}

}  // namespace cordon::gates
