// `cordon policy explain` and `cordon probe --human`: readable tables of what
// each control will be (for one policy) or can be (on this host), and why.
#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

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
  std::string platform = "linux";  // --platform: whose backend compiles it
  bool show_profile = false;       // --show-profile (macos): the SBPL only
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
  for (const auto& b : blockers) rows.push_back({{b.subject_name(), b.required_name(), b.available_name(), b.reason}, {}});
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
  if (options.show_profile && options.platform != "macos") {
    print_error(make_error(error_code::usage_error, "--show-profile needs --platform macos"));
    return exit_cordon_failed;
  }
  if (options.platform == "windows") return explain_windows(*policy, source, options.workspace);
  auto workspace = choose_workspace(options.workspace, cwd, home != nullptr ? home : "");
  if (!workspace) {
    print_error(workspace.error_value());
    return exit_cordon_failed;
  }

  if (options.platform == "macos") return explain_macos(*policy, source, workspace->workspace, workspace->reason, options.show_profile);
  auto backend = make_host_backend();
  compile_options compile;
  compile.workspace = workspace->workspace;
  compile.cgroup_parent = options.cgroup_parent;
  auto compiled = backend->compile(*policy, compile);

  std::cout << "policy:     " << (policy->name.empty() ? "(unnamed)" : policy->name) << " (" << source
            << (options.overrides.empty() ? "" : ", edited by flags") << ")\n";
  std::cout << "workspace:  " << workspace->workspace << " (" << workspace->reason << ")\n";
  std::cout << "backend:    " << backend->name();
  if (!compiled) {
    const compile_failure& f = compiled.failure();
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
    return exit_check_failed;
  }
  const sandbox_plan& plan = *compiled.plan();
  std::cout << " on " << plan.platform() << "\n";
  print_isolation_lines(std::string(to_string(plan.isolation())), std::string(to_string(plan.policy().isolation)),
                        std::cout);
  std::cout << "result:     compiles; a run gets these controls\n\n";

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
  std::cout << "\n" << kLevelsNote;
  print_mounts_and_environment(plan);
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

Exit status: 0 the policy compiles here; 1 compile refuses it (invalid policy
or a gate: backend, isolation, enforcement); 125 it could not be explained
(unreadable file, not JSON, unknown profile, refused workspace, bad usage).)TXT";

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
    explain->add_option("--platform", options.platform, "Backend to compile for: linux (this host), macos or windows")
        ->check(CLI::IsMember({"linux", "macos", "windows"}));
    explain->add_flag("--show-profile", options.show_profile, "With --platform macos: print the SBPL profile only");
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
