// `cordon probe`, `cordon profile list|show`, `cordon policy validate|normalize|explain`.
#include <fstream>
#include <iostream>
#include <sstream>
#include <nlohmann/json.hpp>

#include "cli/backends.h"
#include "cli/command.h"
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

// The probe of `platform`'s backend from the registry on this host's facts,
// the platform's reference facts or a recorded facts file. Facts that are not
// this host's never make the backend available here.
int probe_host(bool human, const std::string& platform, const std::string& facts_file, bool record) {
  const auto backend = backend_for_platform(platform);
  if (backend == nullptr) {
    print_error(make_error(error_code::usage_error, "this cordon has no backend for " + platform));
    return exit_cordon_failed;
  }
  auto facts = facts_for(*backend, facts_file, {}, true);
  if (!facts) {
    print_error(facts.error_value());
    return exit_cordon_failed;
  }
  if (record) {
    // The facts themselves, as a record --facts reads back (docs/host-facts.md).
    auto written = backend->record_host_facts(facts->facts);
    if (!written) {
      print_error(written.error_value());
      return exit_cordon_failed;
    }
    std::cout << *written;
    return exit_ok;
  }
  host_capabilities caps = backend->probe(facts->facts);
  if (facts->source != facts_source::this_host) {
    caps.available = false;
    caps.blockers.insert(caps.blockers.begin(),
                         blocker::for_backend(describe_source(facts->source, facts_file) +
                                              ": plans for it compile and can be inspected here, never launched"));
  }
  if (human) {
    print_probe_table(caps);
    return caps.available ? exit_ok : exit_check_failed;
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
  j["facts_source"] = facts->source == facts_source::this_host ? "this_host"
                      : facts->source == facts_source::reference ? "reference"
                                                                   : "recorded";
  std::cout << j.dump(2) << "\n";
  return caps.available ? exit_ok : exit_check_failed;
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

// `cordon probe`.
struct probe_command final : command {
  bool human = false;
  std::string platform{running_platform()};
  std::string facts_file;
  bool record = false;
  void add_options(CLI::App& app) override {
    auto* human_flag = app.add_flag("--human", human, "A readable table instead of JSON");
    app.add_flag("--record", record,
                 "Print the host facts themselves as a recorded facts file (JSON) that --facts reads back, "
                 "instead of the probe (docs/host-facts.md)")
        ->excludes(human_flag);
    app.add_option("--platform", platform,
                   "Backend to probe: this host's platform (the default), or macos or windows on their reference "
                   "facts or --facts")
        ->check(CLI::IsMember(registered_platforms()));
    app.add_option("--facts", facts_file, "Probe a recorded host facts FILE of that platform (docs/host-facts.md)")
        ->type_name("FILE");
    app.footer(
        "Facts that are not this host's (another platform's, or a --facts file) show what that host would offer; "
        "the backend is never available here then.\n\nExit status: 0 the backend is available (--record: the record "
        "is printed); 1 it is not; 125 a facts file that cannot be read or is not a record of that platform, or bad "
        "usage.");
  }
  int execute() override { return probe_host(human, platform, facts_file, record); }
};

// `cordon profile list`.
struct profile_list_command final : command {
  void add_options(CLI::App& app) override { app.footer("Exit status: 0 listed; 125 bad usage."); }
  int execute() override { return profile_list(); }
};

// `cordon profile show NAME`.
struct profile_show_command final : command {
  std::string name;
  void add_options(CLI::App& app) override {
    app.footer("Exit status: 0 printed; 125 no such profile, an unreadable or invalid profile file, or bad usage.");
    app.add_option("name", name, "Profile name")->required();
  }
  int execute() override { return profile_show(name); }
};

// `cordon policy validate FILES...`.
struct policy_validate_command final : command {
  std::vector<std::string> files;
  void add_options(CLI::App& app) override {
    app.footer("Exit status: 0 every file is valid; 125 a file is invalid, not JSON or unreadable, or bad usage.");
    app.add_option("files", files, "Policy files")->required();
  }
  int execute() override {
    int code = 0;
    for (const auto& file : files) {
      if (policy_check(file, false) != 0) code = exit_cordon_failed;
    }
    return code;
  }
};

// `cordon policy normalize FILE`.
struct policy_normalize_command final : command {
  std::string file;
  void add_options(CLI::App& app) override {
    app.footer("Exit status: 0 printed; 125 the file is invalid, not JSON or unreadable, or bad usage.");
    app.add_option("file", file, "Policy file")->required();
  }
  int execute() override { return policy_check(file, true); }
};

}  // namespace

std::unique_ptr<command> make_probe_command() { return std::make_unique<probe_command>(); }
std::unique_ptr<command> make_profile_list_command() { return std::make_unique<profile_list_command>(); }
std::unique_ptr<command> make_profile_show_command() { return std::make_unique<profile_show_command>(); }
std::unique_ptr<command> make_policy_validate_command() { return std::make_unique<policy_validate_command>(); }
std::unique_ptr<command> make_policy_normalize_command() { return std::make_unique<policy_normalize_command>(); }

}  // namespace cordon::cli
