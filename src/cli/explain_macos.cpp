// `cordon policy explain --platform macos` and `cordon probe --platform macos`:
// what the macOS backend would do with a policy, compiled here with assumed
// facts of a Mac (docs/macos-backend.md). Nothing here launches anything.
#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "macos/macos_plan.h"

namespace cordon::cli {
namespace {

// Left-aligned columns; the last column is free, with `notes` under it.
class column_printer {
 public:
  explicit column_printer(std::vector<std::string> header) { rows_.push_back({std::move(header), {}}); }
  void add(std::vector<std::string> cells, std::vector<std::string> notes = {}) {
    rows_.push_back({std::move(cells), std::move(notes)});
  }
  void print(std::ostream& out) const {
    std::vector<std::size_t> widths;
    for (const auto& r : rows_) {
      for (std::size_t i = 0; i + 1 < r.cells.size(); ++i) {
        if (widths.size() <= i) widths.push_back(0);
        widths[i] = std::max(widths[i], r.cells[i].size());
      }
    }
    std::size_t indent = 0;
    for (auto w : widths) indent += w + 2;
    for (const auto& r : rows_) {
      std::string line;
      for (std::size_t i = 0; i < r.cells.size(); ++i) {
        line += r.cells[i];
        if (i + 1 < r.cells.size()) line.append(widths[i] + 2 - r.cells[i].size(), ' ');
      }
      out << line << "\n";
      for (const auto& n : r.notes) out << std::string(indent, ' ') << n << "\n";
    }
  }

 private:
  struct row {
    std::vector<std::string> cells;
    std::vector<std::string> notes;
  };
  std::vector<row> rows_;
};

std::string home_directory() {
  const char* home = std::getenv("HOME");
  return home != nullptr && home[0] == '/' ? std::string(home) : std::string("/var/empty");
}

macos_impl::macos_host_facts assumed_facts(const std::string& workspace) {
  return macos_impl::example_macos_host_facts(home_directory(), workspace);
}

void print_levels(const macos_impl::macos_plan& plan) {
  const auto required = required_enforcement(plan.policy, "macos");
  const auto macos_entries = plan.policy.platform_enforcement.find("macos");
  column_printer t({"CONTROL", "LEVEL", "DESIGNED", "REQUIRED", "MECHANISM AND WHY"});
  for (const auto& [which, here] : plan.contract) {
    const control_status& mac = plan.on_a_mac.at(which);
    auto it = required.find(which);
    std::string needed = it == required.end() ? "-" : std::string(to_string(it->second));
    if (it != required.end() && plan.policy.enforcement.contains(which)) {
      needed += " (set)";
    } else if (it != required.end() && macos_entries != plan.policy.platform_enforcement.end() &&
               macos_entries->second.contains(which)) {
      needed += " (set for macos)";
    }
    std::vector<std::string> notes;
    if (!mac.detail.empty()) notes.push_back("why: " + mac.detail);
    t.add({std::string(to_string(which)), std::string(to_string(here.level)), std::string(to_string(mac.level)), needed,
           mac.mechanism.empty() ? "-" : mac.mechanism},
          notes);
  }
  t.print(std::cout);
}

void print_profile(const macos_impl::macos_plan& plan) {
  for (const auto& p : plan.parameters) {
    std::cout << ";; -D" << p.key << "=" << p.value << (p.at_launch ? "   (chosen at launch)" : "") << "\n";
  }
  std::cout << plan.profile;
}

}  // namespace

int explain_macos(const sandbox_policy& policy, const std::string& source, const std::string& workspace,
                  const std::string& workspace_reason, bool show_profile) {
  const auto facts = assumed_facts(workspace);
  auto compiled = macos_impl::compile_macos_plan(policy, facts);
  if (!compiled) {
    if (show_profile) {
      print_compile_failure(compiled.failure());
      return 1;
    }
    std::cout << "policy:     " << (policy.name.empty() ? "(unnamed)" : policy.name) << " (" << source << ")\n";
    std::cout << "backend:    " << macos_impl::macos_backend_name << " (macOS)\n";
    std::cout << "result:     refused (" << to_string(compiled.failure().code) << "): " << compiled.failure().message << "\n";
    for (const auto& e : compiled.failure().errors) std::cout << "  " << e.location << ": " << e.reason << "\n";
    if (!compiled.failure().blockers.empty()) {
      std::cout << "\nblockers (accept a lower level with --accept CONTROL=LEVEL, or change the policy):\n";
      column_printer t({"BLOCKER", "REQUIRED", "AVAILABLE", "WHY"});
      for (const auto& b : compiled.failure().blockers) {
        t.add({b.subject_name(), b.required_name(), b.available_name(), b.reason});
      }
      t.print(std::cout);
    }
    return 1;
  }
  const macos_impl::macos_plan& plan = *compiled.plan();
  if (show_profile) {
    print_profile(plan);
    return 0;
  }
  std::cout << "policy:     " << (plan.policy.name.empty() ? "(unnamed)" : plan.policy.name) << " (" << source << ")\n";
  std::cout << "workspace:  " << plan.facts.workspace << " (" << workspace_reason << ")\n";
  std::cout << "backend:    " << macos_impl::macos_backend_name << " for macOS " << plan.facts.os_version
            << (plan.facts.native ? "" : " (assumed facts: this host is not a Mac)") << ", isolation os_sandbox\n";
  std::cout << "result:     compiles" << (plan.facts.native ? "" : "; cannot launch on this host") << "\n";
  std::cout << "profile:    deny-default SBPL, " << std::count(plan.profile.begin(), plan.profile.end(), '\n')
            << " lines, " << plan.parameters.size() << " parameters (--show-profile prints it)\n";
  std::cout << "launcher:   " << plan.facts.sandbox_exec << " -p PROFILE -DKEY=VALUE... -- COMMAND; new session "
            << "(setsid), descriptors above 2 closed, environment from the policy";
  if (plan.rlimit_cpu_seconds) std::cout << ", RLIMIT_CPU " << *plan.rlimit_cpu_seconds << " s";
  if (plan.timeout_ms) std::cout << ", timeout " << *plan.timeout_ms << " ms";
  std::cout << "\n\n";
  print_levels(plan);
  if (!plan.platform_defaults.empty()) {
    std::cout << "\nplatform defaults (denied paths still win over them):\n";
    for (const auto& line : plan.platform_defaults) std::cout << "  " << line << "\n";
  }
  std::cout << "\nparameters:\n";
  for (const auto& p : plan.parameters) {
    std::cout << "  " << p.key << "=" << p.value << (p.at_launch ? " (chosen at launch)" : "") << "  — " << p.meaning
              << "\n";
  }
  if (!plan.warnings.empty()) {
    std::cout << "\nwarnings (repeated in the run report):\n";
    for (const auto& w : plan.warnings) std::cout << "  " << w << "\n";
  }
  return 0;
}

host_capabilities macos_capabilities() {
  std::string cwd = current_directory();
  return macos_impl::probe_macos(assumed_facts(cwd));
}

}  // namespace cordon::cli
