// src/windows/explain.cpp — a Windows plan as a person reads it
// (windows_plan::explain, cordon/plan.h): the token, the job, the
// environment block and the DACL lease, for `cordon policy explain`.
#include <iomanip>
#include <sstream>

#include "core/columns.h"
#include "cordon/windows/plan.h"

namespace cordon::windows {
namespace {

std::string hex_mask(std::uint32_t mask) {
  std::ostringstream s;
  s << "0x" << std::hex << std::setw(6) << std::setfill('0') << mask;
  return s.str();
}

// "AC" the run's AppContainer, "AAP"/"ARAP" the two package groups (legend in the section).
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
      // Appended piece by piece: "+" + std::string trips GCC 12's -Wrestrict at -O3 (the mingw build).
      who += '+';
      who += short_name(aces[j].who);
    }
    if (!out.empty()) out += "; ";
    out += aces[i].allow ? "allow " : "deny ";
    out += who;
    out += ' ';
    out += hex_mask(aces[i].mask);
    if (aces[i].inherit) out += aces[i].inherit_only ? " OI CI IO" : " OI CI";
    i = j;
  }
  return out;
}

std::string optional_number(const std::optional<std::uint64_t>& v, const char* unit) {
  return v ? std::to_string(*v) + unit : "-";
}

plan_section token_section(const token_spec& token) {
  std::string line = "restricted token";
  if (token.disable_max_privilege) line += ", DISABLE_MAX_PRIVILEGE (SeChangeNotifyPrivilege only)";
  for (const auto& sid : token.deny_only_sids) line += ", " + sid + " deny-only";
  if (token.appcontainer) {
    return {"token", {line, "AppContainer profile " + token.appcontainer_name + ", " +
                                std::to_string(token.capabilities.size()) + " capabilities (no network)"}};
  }
  std::string restricting = "restricting SIDs:";
  for (const auto& sid : token.restricting_sids) restricting += " " + sid;
  return {"token",
          {line, restricting,
           std::string("no AppContainer: low-integrity fallback") +
               (token.low_integrity ? ", TokenIntegrityLevel S-1-16-4096 (read back in the child)" : "")}};
}

plan_section process_section(const windows_plan& plan) {
  const job_limits& l = plan.limits();
  plan_section s{"job and environment", {}};
  s.lines.push_back(std::string("job: kill on close") + (l.die_on_unhandled_exception ? ", die on unhandled exception" : "") +
                    "; active processes " + (l.active_processes ? std::to_string(*l.active_processes) : "-") +
                    ", job memory " + optional_number(l.job_memory_bytes, " bytes") + ", job CPU time " +
                    optional_number(l.cpu_time_100ns, " x 100 ns") + ", timeout " +
                    optional_number(l.timeout_ms, " ms") + " (upper bounds for every request)");
  std::string env = "environment: " + std::to_string(plan.environment().entries.size()) +
                    " variables, block built from scratch:";
  for (const auto& [name, value] : plan.environment().entries) env += " " + name;
  s.lines.push_back(env);
  std::string defaults = "platform defaults: " + plan.platform_defaults() + " (every AppContainer may read";
  for (const auto& root : plan.intrinsic_readable()) defaults += " " + root;
  s.lines.push_back(defaults + ")");
  if (plan.run_tmp()) s.lines.push_back("{run_tmp}: " + *plan.run_tmp() + " (created at launch, removed after)");
  return s;
}

plan_section acl_section(const windows_plan& plan) {
  plan_section s{"ACL changes (a lease: originals recorded first, applied in this order, restored in reverse)",
                 {"AC = the run's AppContainer SID, AAP/ARAP = ALL (RESTRICTED) APPLICATION PACKAGES; OI CI = inherited,",
                  "IO = by descendants only; protected = inheritance stops here, package-group allows removed"}};
  if (!plan.token().appcontainer) {
    s.title = "mandatory labels (a lease: originals recorded first, applied in this order, restored in reverse)";
    s.lines = {"low = S-1-16-4096, medium = S-1-16-8192; each NO_WRITE_UP, OI CI on directories"};
  }
  std::vector<std::vector<std::string>> rows{{"ROLE", "PATH", "DACL", "ACES"}};
  if (!plan.token().appcontainer) rows = {{"ROLE", "PATH", "LABEL"}};
  for (const auto& c : plan.acl_changes()) {
    if (!plan.token().appcontainer) {
      rows.push_back({std::string(to_string(c.role)), c.path, std::string(to_string(c.label))});
      continue;
    }
    rows.push_back({std::string(to_string(c.role)), c.path, c.protect_dacl ? "protected" : "inherits", describe_aces(c.aces)});
  }
  for (auto& line : core::format_columns(rows)) s.lines.push_back(std::move(line));
  return s;
}

}  // namespace

std::vector<plan_section> windows_plan::explain() const {
  std::vector<plan_section> sections;
  sections.push_back({"plan", {std::string(plan_type) + " v" + std::to_string(plan_format_version) +
                               (reference_shape_ ? ", from a reference host shape: it cannot launch" : "")}});
  sections.push_back(token_section(token_));
  sections.push_back(process_section(*this));
  sections.push_back(acl_section(*this));
  if (!acl_notes_.empty()) {
    std::vector<std::vector<std::string>> notes{{"ENTRY", "SOURCE", "WHY"}};
    for (const auto& n : acl_notes_) notes.push_back({n.entry, n.source, n.reason});
    sections.push_back({"entries without a change of their own", core::format_columns(notes)});
  }
  return sections;
}

}  // namespace cordon::windows
