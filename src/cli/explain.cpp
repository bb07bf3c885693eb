// `cordon policy explain` and `cordon probe --human`: readable tables of what
// each control will be (for one policy) or can be (on this host), and why.
#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "cli/backends.h"
#include "cli/command.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/plan_details.h"
#include "cli/profile_dirs.h"
#include "cli/report_view.h"
#include "cli/table.h"
#include "cli/workspace.h"
#include "cordon/cordon.h"

namespace cordon::cli {
namespace {

struct explain_options {
  std::string file;
  std::string profile;
  std::string workspace;
  std::string cgroup_parent;  // --cgroup-parent, as `cordon run` takes it
  policy_overrides overrides;
  std::string platform{running_platform()};  // --platform: whose backend compiles it
  std::string facts_file;                    // --facts: a recorded host facts file of that platform
  bool show_profile = false;                 // --show-profile: the plan's profile text only
};

// The mechanism, with the detail as "why" under it (or alone when nothing acts).
table_row status_row(std::vector<std::string> cells, const control_status& status) {
  table_row row;
  if (status.mechanism.empty()) {
    cells.push_back(status.detail.empty() ? "-" : "why: " + status.detail);
  } else {
    cells.push_back(status.mechanism);
    if (!status.detail.empty()) row.notes.push_back("why: " + status.detail);
  }
  row.cells = std::move(cells);
  return row;
}

void print_blockers(const std::vector<blocker>& blockers) {
  std::vector<table_row> rows;
  for (const auto& b : blockers) {
    // A backend's stable cause (the Windows backend's root_missing, ...) leads its reason.
    rows.push_back({{b.subject_name(), b.required_name(), b.available_name(),
                     b.cause.empty() ? b.reason : b.cause + ": " + b.reason},
                    {}});
  }
  print_table({"BLOCKER", "REQUIRED", "AVAILABLE", "WHY"}, rows);
}

// What the sandbox's root is made of, and what the command's environment
// would be if it ran from this shell (names only: values may be secrets).
void print_mounts_and_environment(const sandbox_plan& plan) {
  const auto mounts = plan_mounts(plan);
  if (!mounts.empty()) {
    std::cout << "\nmounts (in the order they are made):\n";
    for (const auto& m : mounts) std::cout << "  " << m << "\n";
  }
  const auto environment = plan_environment(plan, host_environment());
  std::cout << "\nenvironment (from this shell; names only):\n";
  if (environment.empty()) std::cout << "  (empty)\n";
  for (const auto& e : environment) std::cout << "  " << e << "\n";
}

// The workspace to compile for: on this host's facts as `cordon run` chooses
// it; for another host's, --workspace in that platform's spelling, else the
// facts' own, else as here.
result<workspace_choice> workspace_for(const explain_options& options, const platform_facts& facts,
                                       const std::string& cwd, const std::string& home) {
  if (facts.source != facts_source::this_host && !options.workspace.empty()) {
    return workspace_choice{options.workspace, options.workspace, "--workspace"};
  }
  if (facts.source != facts_source::this_host && !facts.facts.workspace.empty()) {
    return workspace_choice{facts.facts.workspace, facts.facts.workspace, "the facts' workspace"};
  }
  return choose_workspace(facts.source == facts_source::this_host ? options.workspace : std::string(), cwd, home);
}

void print_refusal(const compile_failure& f) {
  std::cout << "\nresult:     refused (" << to_string(f.code) << "): " << f.message << "\n";
  if (!f.errors.empty()) {
    std::cout << "\n";
    std::vector<table_row> rows;
    for (const auto& e : f.errors) rows.push_back({{e.location.empty() ? "(document)" : e.location, e.reason}, {}});
    print_table({"LOCATION", "PROBLEM"}, rows);
  }
  if (!f.blockers.empty()) {
    std::cout << "\n";
    print_blockers(f.blockers);
  }
}

// The controls a plan gets, with the requirement each is held to.
void print_controls(const sandbox_plan& plan) {
  const auto required = required_enforcement(plan.policy(), plan.platform());
  std::vector<table_row> rows;
  for (const auto& [which, status] : plan.contract()) {
    std::string needed = "-";
    if (auto it = required.find(which); it != required.end()) {
      needed = std::string(to_string(it->second));
      if (plan.policy().enforcement.contains(which)) needed += " (set)";
      const auto entries = plan.policy().platform_enforcement.find(plan.platform());
      if (!plan.policy().enforcement.contains(which) && entries != plan.policy().platform_enforcement.end() &&
          entries->second.contains(which)) {
        needed += " (set for " + plan.platform() + ")";
      }
    }
    rows.push_back(status_row({std::string(to_string(which)), std::string(to_string(status.level)), needed}, status));
  }
  print_table({"CONTROL", "LEVEL", "REQUIRED", "MECHANISM AND WHY"}, rows);
}

int explain_policy(const explain_options& options) {
  const std::string cwd = current_directory();
  const char* home = std::getenv("HOME");
  auto chosen = load_policy_or_profile(options.file, options.profile);
  if (!chosen) {
    print_policy_file_error(options.file, chosen.error_value());
    // An invalid policy is a refusal (1), whether the reader or the compile finds it; text that is
    // not JSON, or no file or profile, cannot be explained (125): kExplainHelp.
    return chosen.error_value().code == error_code::invalid_policy ? 1 : exit_cordon_failed;
  }
  const std::string source = chosen->source;
  sandbox_policy* policy = &chosen->policy;
  if (auto applied = apply_overrides(*policy, options.overrides, cwd); !applied) {
    print_error(applied.error_value());
    return exit_cordon_failed;
  }
  // The platform's backend from the registry, on this host's facts, its
  // reference facts or a recorded facts file: the one driver for every platform.
  const auto backend = backend_for_platform(options.platform);
  if (backend == nullptr) {
    print_error(make_error(error_code::usage_error, "this cordon has no backend for " + options.platform));
    return exit_cordon_failed;
  }
  compile_options compile;
  compile.workspace = options.workspace;
  compile.cgroup_parent = options.cgroup_parent;
  auto facts = facts_for(*backend, options.facts_file, compile, false);
  if (!facts) {
    print_error(facts.error_value());
    return exit_cordon_failed;
  }
  auto workspace = workspace_for(options, *facts, cwd, home != nullptr ? home : "");
  if (!workspace) {
    print_error(workspace.error_value());
    return exit_cordon_failed;
  }
  compile.workspace = workspace->workspace;
  const bool here = facts->source == facts_source::this_host;
  auto compiled = backend->compile(*policy, compile, facts->facts);

  if (options.show_profile) {
    if (!compiled) {
      print_compile_failure(compiled.failure());
      return exit_check_failed;
    }
    const plan_payload* payload = compiled.plan()->payload();
    const std::string text = payload != nullptr ? payload->profile_text() : std::string();
    if (text.empty()) {
      print_error(make_error(error_code::usage_error, "--show-profile: plans of " + std::string(backend->name()) +
                                                          " have no profile text (--platform macos: the SBPL)"));
      return exit_cordon_failed;
    }
    std::cout << text;
    return 0;
  }

  std::cout << "policy:     " << (policy->name.empty() ? "(unnamed)" : policy->name) << " (" << source
            << (options.overrides.empty() ? "" : ", edited by flags") << ")\n";
  std::cout << "workspace:  " << workspace->workspace << " (" << workspace->reason << ")\n";
  std::cout << "backend:    " << backend->name();
  if (!here) {
    std::cout << " on " << backend->platform() << "\nfacts:      " << describe_source(facts->source, options.facts_file);
    for (const auto& line : facts->facts.lines) std::cout << "; " << line;
  }
  if (!compiled) {
    print_refusal(compiled.failure());
    return exit_check_failed;
  }
  const sandbox_plan& plan = *compiled.plan();
  if (here) std::cout << " on " << plan.platform();
  std::cout << "\n";
  print_isolation_lines(std::string(to_string(plan.isolation())), std::string(to_string(plan.policy().isolation)),
                        std::cout);
  std::cout << (here ? "result:     compiles; a run gets these controls\n\n"
                     : "result:     compiles; cannot launch on this host (a run there gets these controls)\n\n");
  print_controls(plan);
  std::cout << "\n" << kLevelsNote;
  if (here) print_mounts_and_environment(plan);
  if (plan.payload() != nullptr) {
    for (const auto& section : plan.payload()->explain()) {
      std::cout << "\n" << section.title << ":\n";
      for (const auto& line : section.lines) std::cout << "  " << line << "\n";
    }
  }
  if (!plan.warnings().empty()) {
    std::cout << "\nwarnings (repeated in the run report):\n";
    for (const auto& w : plan.warnings()) std::cout << "  " << w << "\n";
  }
  return 0;
}

constexpr const char* kExplainHelp = R"TXT(Compiles the policy (a file, a built-in profile, or the default profile
workspace-write) on this host, exactly as `cordon run` would with the same
--workspace and flags, without running anything. Prints each control with the
level a run would get, the level the policy requires ("(set)": an explicit
entry in "enforcement"), the mechanism, and why. On refusal it prints the
policy errors or the blockers {control, required, available, why}.

--platform macos|windows runs the same compile with that platform's backend
on its reference facts, or on a recorded host facts file (--facts FILE,
docs/host-facts.md); the plan is shown with the backend's own details (the
SBPL profile, the ACL lease) and can never launch here. No control is above
`unverified` on a platform no proof run has passed on.

Exit status: 0 the policy compiles; 1 compile refuses it (invalid policy
or a gate: backend, isolation, enforcement); 125 it could not be explained
(unreadable file, not JSON, unknown profile, refused workspace, a facts
file that is not a record of that platform, bad usage).)TXT";

// `cordon policy explain [FILE]`.
struct policy_explain_command final : command {
  explain_options options;
  void add_options(CLI::App& app) override {
    CLI::App* explain = &app;
    explain->footer(kExplainHelp);
    auto* file = explain->add_option("file", options.file, "Policy file (JSON, schema v1)")->type_name("FILE");
    explain->add_option("--profile", options.profile, "Profile by name: built-in (workspace-write, read-only, offline) or a user or system profile (cordon profile list)")
        ->type_name("NAME")
        ->excludes(file);
    explain->add_option("--workspace", options.workspace,
                        "Directory that {workspace} names (default: the git repository or current directory)")
        ->type_name("DIR");
    explain->add_option("--cgroup-parent", options.cgroup_parent,
                        "The delegated cgroup v2 DIR a run would be given (cordon run --cgroup-parent): limits "
                        "tree-wide without root")
        ->type_name("DIR");
    add_policy_flags(*explain, options.overrides);
    explain->add_option("--platform", options.platform,
                        "Backend to compile for: this host's platform (the default), or macos or windows on their "
                        "reference facts or --facts (the plan is shown, never launched)")
        ->check(CLI::IsMember(registered_platforms()));
    explain->add_option("--facts", options.facts_file,
                        "Compile on a recorded host facts FILE of that platform instead (docs/host-facts.md)")
        ->type_name("FILE");
    explain->add_flag("--show-profile", options.show_profile,
                      "Print only the profile text the platform's sandbox is given (macos: the SBPL)");
  }
  int execute() override { return explain_policy(options); }
};

}  // namespace

std::unique_ptr<command> make_policy_explain_command() { return std::make_unique<policy_explain_command>(); }

void print_probe_table(const host_capabilities& caps) {
  std::cout << "platform:   " << caps.platform << "\n";
  std::cout << "backend:    " << caps.backend << (caps.available ? " (available)" : " (unavailable)") << "\n";
  print_isolation_lines(std::string(to_string(caps.isolation)), "", std::cout);
  std::cout << "facts:     ";
  for (std::size_t i = 0; i < caps.facts.size(); ++i) std::cout << (i == 0 ? " " : "; ") << caps.facts[i];
  std::cout << "\n\n";
  std::vector<table_row> rows;
  for (const auto& [which, status] : caps.best) {
    rows.push_back(status_row({std::string(to_string(which)), std::string(to_string(status.level))}, status));
  }
  print_table({"CONTROL", "BEST LEVEL", "MECHANISM AND WHY"}, rows);
  std::cout << "\n" << kLevelsNote;
  // A control below `enforced` is already a row above, with its why; only
  // what is not a control (the backend itself) gets a BLOCKER table, and
  // none at all when nothing keeps this host from running a sandbox.
  std::vector<blocker> others;
  for (const auto& b : caps.blockers) {
    if (b.subject != blocker_subject::control || !caps.best.contains(b.control)) others.push_back(b);
  }
  if (!others.empty()) {
    std::cout << "\n";
    print_blockers(others);
  }
}

}  // namespace cordon::cli
