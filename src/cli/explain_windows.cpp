// `cordon policy explain --platform windows`: the Windows plan a policy
// compiles to (ACL changes, job limits, token, environment) and each
// control's level, compiled here from a reference host shape
// (docs/windows-backend.md, "Host facts"). Nothing here can
// prove a Windows mechanism, so no level is above `unverified`.
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cordon/windows/compile.h"

namespace cordon::cli {
namespace {

using namespace cordon::windows;

std::string hex_mask(std::uint32_t mask) {
  std::ostringstream s;
  s << "0x" << std::hex << std::setw(6) << std::setfill('0') << mask;
  return s.str();
}

// "AC" the run's AppContainer, "AAP"/"ARAP" the two package groups (legend printed).
std::string short_name(trustee t) {
  switch (t) {
    case trustee::appcontainer: return "AC";
    case trustee::all_application_packages: return "AAP";
    case trustee::all_restricted_application_packages: return "ARAP";
  }
  return "?";
}

// One change's ACEs on one line; ACEs that differ only in trustee are merged.
std::string describe_aces(const std::vector<ace_spec>& aces) {
  std::string out;
  for (std::size_t i = 0; i < aces.size();) {
    std::string who = short_name(aces[i].who);
    std::size_t j = i + 1;
    for (; j < aces.size() && aces[j].allow == aces[i].allow && aces[j].mask == aces[i].mask &&
           aces[j].inherit == aces[i].inherit && aces[j].inherit_only == aces[i].inherit_only;
         ++j) {
      who += "+" + short_name(aces[j].who);
    }
    if (!out.empty()) out += "; ";
    out += std::string(aces[i].allow ? "allow " : "deny ") + who + " " + hex_mask(aces[i].mask);
    if (aces[i].inherit) out += aces[i].inherit_only ? " OI CI IO" : " OI CI";
    i = j;
  }
  return out;
}

std::string optional_number(const std::optional<std::uint64_t>& v, const char* unit) {
  return v ? std::to_string(*v) + unit : "-";
}

// Columns padded to their widest cell, the last one free.
void print_columns(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width;
  for (const auto& row : rows) {
    for (std::size_t i = 0; i + 1 < row.size(); ++i) {
      if (width.size() <= i) width.resize(i + 1, 0);
      width[i] = std::max(width[i], row[i].size());
    }
  }
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(width[i] + 2 - row[i].size(), ' ');
    }
    std::cout << line << "\n";
  }
}

void print_blockers(const std::vector<blocker>& blockers) {
  std::vector<std::vector<std::string>> rows{{"BLOCKER", "CONTROL", "REQUIRED", "AVAILABLE", "SUBJECT AND WHY"}};
  for (const auto& b : blockers) {
    const bool is_control = b.subject == blocker_subject::control;
    rows.push_back({b.cause.empty() ? "requirement_not_met" : b.cause, is_control ? b.subject_name() : "-",
                    is_control ? b.required_name() : "-", is_control ? b.available_name() : "-", b.reason});
  }
  print_columns(rows);
}

void print_plan(const windows_plan& plan) {
  const token_spec& token = plan.token();
  std::cout << "token:      restricted token"
            << (token.disable_max_privilege ? ", DISABLE_MAX_PRIVILEGE (SeChangeNotifyPrivilege only)" : "");
  for (const auto& sid : token.deny_only_sids) std::cout << ", " << sid << " deny-only";
  std::cout << "\n            "
            << (token.appcontainer ? "AppContainer profile " + token.appcontainer_name + ", " +
                                         std::to_string(token.capabilities.size()) + " capabilities (no network)"
                                   : std::string("no AppContainer"))
            << "\n";
  const job_limits& l = plan.limits();
  std::cout << "job:        kill on close" << (l.die_on_unhandled_exception ? ", die on unhandled exception" : "")
            << "; active processes " << (l.active_processes ? std::to_string(*l.active_processes) : "-")
            << ", job memory " << optional_number(l.job_memory_bytes, " bytes") << ", job CPU time "
            << optional_number(l.cpu_time_100ns, " x 100 ns") << ", timeout " << optional_number(l.timeout_ms, " ms")
            << " (upper bounds for every request)\n";
  std::cout << "environment: " << plan.environment().entries.size() << " variables, block built from scratch:";
  for (const auto& [name, value] : plan.environment().entries) std::cout << " " << name;
  std::cout << "\nplatform defaults: " << plan.platform_defaults() << " (every AppContainer may read";
  for (const auto& root : plan.intrinsic_readable()) std::cout << " " << root;
  std::cout << ")\n";
  if (plan.run_tmp()) std::cout << "{run_tmp}:  " << *plan.run_tmp() << " (created at launch, removed after)\n";

  std::cout << "\nACL changes (a lease: originals recorded first, applied in this order, restored in reverse)\n"
            << "AC = the run's AppContainer SID, AAP/ARAP = ALL (RESTRICTED) APPLICATION PACKAGES; OI CI = inherited,\n"
            << "IO = by descendants only; protected = inheritance stops here, package-group allows removed\n";
  std::vector<std::vector<std::string>> rows{{"ROLE", "PATH", "DACL", "ACES"}};
  for (const auto& c : plan.acl_changes()) {
    rows.push_back({std::string(to_string(c.role)), c.path, c.protect_dacl ? "protected" : "inherits", describe_aces(c.aces)});
  }
  print_columns(rows);
  if (!plan.acl_notes().empty()) {
    std::cout << "\nentries without a change of their own\n";
    std::vector<std::vector<std::string>> notes{{"ENTRY", "SOURCE", "WHY"}};
    for (const auto& n : plan.acl_notes()) notes.push_back({n.entry, n.source, n.reason});
    print_columns(notes);
  }

  std::cout << "\n";
  const auto required = required_enforcement(plan.policy());
  std::vector<std::vector<std::string>> controls{{"CONTROL", "LEVEL", "REQUIRED", "MECHANISM AND WHY"}};
  for (const auto& [which, status] : plan.contract()) {
    auto it = required.find(which);
    std::string why = status.mechanism.empty() ? status.detail : status.mechanism + "; " + status.detail;
    controls.push_back({std::string(to_string(which)), std::string(to_string(status.level)),
                        it == required.end() ? "-" : std::string(to_string(it->second)), why});
  }
  print_columns(controls);
  if (!plan.warnings().empty()) {
    std::cout << "\nwarnings (repeated in the run report):\n";
    for (const auto& w : plan.warnings()) std::cout << "  " << w << "\n";
  }
}

}  // namespace

int explain_windows(const sandbox_policy& policy, const std::string& source, const std::string& workspace) {
  const windows::host_facts facts = reference_host_facts();
  windows_compile_options options;
  options.workspace = workspace.empty() ? facts.user_profile + "\\work" : workspace;
  std::cout << "policy:     " << (policy.name.empty() ? "(unnamed)" : policy.name) << " (" << source << ")\n";
  std::cout << "platform:   windows, plan " << plan_type << " v" << plan_format_version << ", compiled on this host\n";
  std::cout << "host:       reference shape: Windows " << facts.windows_version << ", " << facts.volumes.front().root << " "
            << facts.volumes.front().filesystem << " with persistent ACLs, AppContainer available, profile "
            << facts.user_profile << "; every named path taken to exist as a plain directory\n";
  std::cout << "workspace:  " << options.workspace << (workspace.empty() ? " (reference; --workspace C:\\... chooses)" : "")
            << "\n";
  // The one driver on the reference shape (docs/windows-backend.md).
  const windows_compile_result compiled = compile_windows_plan(policy, facts, options);
  if (compiled.failure) {
    const error& f = *compiled.failure;
    std::cout << "result:     refused (" << to_string(f.code) << "): " << f.message << "\n\n";
    if (!f.errors.empty()) {
      std::vector<std::vector<std::string>> rows{{"LOCATION", "PROBLEM"}};
      for (const auto& e : f.errors) rows.push_back({e.location.empty() ? "(document)" : e.location, e.reason});
      print_columns(rows);
    }
    if (!f.blockers.empty()) print_blockers(f.blockers);
    return 1;
  }
  std::cout << "result:     compiles; a run on such a host gets this plan\n\n";
  print_plan(*compiled.plan);
  return 0;
}

}  // namespace cordon::cli
