// `cordon probe`, `cordon profile list|show`, `cordon policy validate|normalize|explain`.
#include <fstream>
#include <iostream>
#include <sstream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/output.h"
#include "cli/profile_dirs.h"
#include "cli/table.h"
#include "cli/report_view.h"
#include "cordon/cordon.h"

namespace cordon::cli {
namespace {

using json = nlohmann::ordered_json;

int g_info_result = 0;  // set by the info subcommands' callbacks

int probe_command(bool human, const std::string& platform) {
  host_capabilities caps = platform == "macos" ? macos_capabilities() : make_host_backend()->probe();
  if (human) {
    print_probe_table(caps);
    return caps.available ? 0 : 1;
  }
  json j;
  j["platform"] = caps.platform;
  j["backend"] = caps.backend;
  j["available"] = caps.available;
  j["isolation"] = std::string(to_string(caps.isolation));
  json best = json::object();
  for (const auto& [which, status] : caps.best) {
    json c = {{"level", std::string(to_string(status.level))}};
    if (!status.mechanism.empty()) c["mechanism"] = status.mechanism;
    if (!status.detail.empty()) c["detail"] = status.detail;
    best[std::string(to_string(which))] = c;
  }
  j["best"] = best;
  json blockers = json::array();
  for (const auto& b : caps.blockers) {
    blockers.push_back(
        {{"control", b.subject_name()}, {"required", b.required_name()}, {"available", b.available_name()}, {"reason", b.reason}});
  }
  j["blockers"] = blockers;
  j["facts"] = caps.facts;
  std::cout << j.dump(2) << "\n";
  return caps.available ? 0 : 1;
}

int profile_show(const std::string& name) {
  auto text = named_profile_json(name);
  if (!text) {
    print_error(text.error_value());
    return exit_cordon_failed;
  }
  std::cout << *text;
  return 0;
}

// NAME, ORIGIN, FILE (and why one is not used); with -q only the names --profile takes.
int profile_list() {
  const auto entries = list_profiles();
  if (output().level == verbosity::quiet) {
    for (const auto& e : entries) {
      if (e.note.empty()) std::cout << e.name << "\n";
    }
    return 0;
  }
  std::vector<table_row> rows;
  for (const auto& e : entries) {
    table_row row{{e.name, e.origin, e.file.empty() ? "(in cordon)" : e.file}, {}};
    if (!e.note.empty()) row.notes.push_back(e.note);
    rows.push_back(row);
  }
  print_table({"NAME", "FROM", "FILE"}, rows);
  std::cout << "\nuser profiles: " << (user_profile_dir().empty() ? "(no HOME)" : user_profile_dir())
            << "/NAME.json\nsystem profiles: " << system_profile_dir() << "/NAME.json\n";
  return 0;
}

int policy_check(const std::string& file, bool print_normalized) {
  auto policy = load_sandbox_policy(file);
  if (!policy) {
    const error& err = policy.error_value();
    if (err.code != error_code::invalid_policy && err.code != error_code::parse_error) {
      print_error(err);
      return exit_cordon_failed;
    }
    // The reader stops short of meaning: read again for every problem.
    std::ifstream in(file, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    // Not JSON at all is parse_error, as `cordon run --policy` says of the same file.
    print_policy_errors(file, err.code, sandbox_policy_errors(text.str()));
    return exit_cordon_failed;
  }
  validation_result validated = validate_sandbox_policy(*policy);
  if (!validated.ok()) {
    print_policy_errors(file, error_code::invalid_policy, validated.errors);
    return exit_cordon_failed;
  }
  if (print_normalized) {
    std::cout << sandbox_policy_to_json(validated.policy);
  } else {
    std::cout << file << ": valid\n";
  }
  return 0;
}

}  // namespace

void add_info_commands(CLI::App& app) {
  static bool probe_human = false;
  CLI::App* probe = app.add_subcommand("probe", "Print this host's capabilities for the Linux backend (JSON)");
  probe->add_flag("--human", probe_human, "A readable table instead of JSON");
  static std::string probe_platform = "linux";
  probe->add_option("--platform", probe_platform, "Backend to probe: linux (this host) or macos (as a Mac would be)")
      ->check(CLI::IsMember({"linux", "macos"}));
  probe->footer("Exit status: 0 the backend is available; 1 it is not; 125 bad usage.");
  probe->final_callback([] { g_info_result = probe_command(probe_human, probe_platform); });

  CLI::App* profile = app.add_subcommand("profile", "Profiles by name: built-in, user and system ones");
  profile->require_subcommand(1);
  profile->add_subcommand("list", "List the profiles and where each comes from (-q: the names --profile takes)")
      ->footer("Exit status: 0 listed; 125 bad usage.")
      ->final_callback([] { g_info_result = profile_list(); });
  static std::string profile_name;
  profile->add_subcommand("show", "Print a profile's JSON")
      ->footer("Exit status: 0 printed; 125 no such profile, an unreadable or invalid profile file, or bad usage.")
      ->final_callback([] { g_info_result = profile_show(profile_name); })
      ->add_option("name", profile_name, "Profile name")
      ->required();

  CLI::App* policy = app.add_subcommand("policy", "Check policy files");
  policy->require_subcommand(1);
  static std::vector<std::string> policy_files;
  policy->add_subcommand("validate", "Check policy files; print every error with its location")
      ->footer("Exit status: 0 every file is valid; 125 a file is invalid, not JSON or unreadable, or bad usage.")
      ->final_callback([] {
        g_info_result = 0;
        for (const auto& file : policy_files) {
          if (policy_check(file, false) != 0) g_info_result = exit_cordon_failed;
        }
      })
      ->add_option("files", policy_files, "Policy files")
      ->required();
  static std::string policy_file;
  policy->add_subcommand("normalize", "Print the normalized form of a valid policy file")
      ->footer("Exit status: 0 printed; 125 the file is invalid, not JSON or unreadable, or bad usage.")
      ->final_callback([] { g_info_result = policy_check(policy_file, true); })
      ->add_option("file", policy_file, "Policy file")
      ->required();
  add_explain_command(*policy, &g_info_result);
  add_report_command(app, &g_info_result);
}

int dispatch(CLI::App& app, const run_options& run) {
  if (app.got_subcommand("run")) {
    // `run` stops at its command (prefix_command), and CLI11 then keeps an
    // unknown option such as "--dny=secret" aside instead of failing. A
    // misspelt flag must never run the command with less confinement.
    for (const auto& extra : app.get_subcommand("run")->remaining()) {
      if (extra == "--") continue;  // the separator before the command
      std::cerr << "cordon: usage_error: unknown option " << extra << " for run (see cordon run --help)\n";
      return exit_cordon_failed;
    }
    return run_command(run);
  }
  return g_info_result;
}

}  // namespace cordon::cli
