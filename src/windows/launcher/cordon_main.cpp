// src/windows/launcher/cordon_main.cpp — cordon.exe, the Windows CLI:
//   cordon.exe run [--policy FILE | --profile NAME] [--workspace DIR] [--report FILE] -- CMD ARGS...
//   cordon.exe explain [--policy FILE | --profile NAME] [--workspace DIR] [-- CMD ARGS...]
//   cordon.exe recover [--lease-dir DIR]
// Exit status of `run`: the command's; 124 timeout; 125 cordon refused or
// failed (nothing ran); 126 not executable; 127 not found (docs/windows-backend.md).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cordon/policy_json.h"
#include "cordon/profiles.h"
#include "cordon/windows/compile.h"
#include "cordon/windows/launcher.h"
#include "windows/launcher/dacl_lease.h"
#include "windows/launcher/win32.h"

namespace cordon::windows {
namespace {

constexpr int kRefused = 125;

struct cli_options {
  std::string policy_file, profile, workspace, report, lease_dir;
  std::vector<std::string> command;
};

result<sandbox_policy> load(const cli_options& o) {
  if (!o.policy_file.empty()) return load_sandbox_policy(o.policy_file);
  return builtin_profile(o.profile.empty() ? default_profile_name : std::string_view(o.profile));
}

std::string workspace_of(const cli_options& o) {
  if (!o.workspace.empty()) return o.workspace;
  wchar_t buf[MAX_PATH];
  const DWORD n = GetCurrentDirectoryW(MAX_PATH, buf);
  return n == 0 || n >= MAX_PATH ? std::string() : win32::narrow(buf);
}

void print_failure(const error& f) {
  std::cerr << "cordon: " << to_string(f.code) << ": " << f.message << "\n";
  for (const auto& e : f.errors) std::cerr << "cordon:   " << (e.location.empty() ? "(document)" : e.location) << ": " << e.reason << "\n";
  for (const auto& b : f.blockers) {
    std::cerr << "cordon:   " << (b.cause.empty() ? b.subject_name() : b.cause) << " " << b.reason << "\n";
  }
}

nlohmann::json contract_json(const enforcement_contract& k) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [c, s] : k) out[std::string(to_string(c))] = {{"level", to_string(s.level)}, {"mechanism", s.mechanism}, {"detail", s.detail}};
  return out;
}

int run(const cli_options& o, bool launch) {
  auto policy = load(o);
  if (!policy) {
    std::cerr << "cordon: " << policy.error_value().describe() << "\n";
    return kRefused;
  }
  windows_compile_options compile;
  compile.workspace = workspace_of(o);
  compile.argv = o.command;
  const host_facts facts = gather_host_facts(paths_to_probe(*policy, gather_host_facts({}), compile));
  auto compiled = compile_windows_plan(*policy, facts, compile);
  if (!compiled) {
    print_failure(*compiled.failure);
    return kRefused;
  }
  const windows_plan& plan = *compiled.plan;
  if (!launch) {
    std::cout << "plan " << plan_type << " v" << plan.format_version() << " #" << plan.identity() << " on Windows "
              << facts.windows_version << (facts.wine ? " (wine)" : "") << "\n";
    for (const auto& c : plan.acl_changes()) std::cout << "  acl " << to_string(c.role) << " " << c.path << "\n";
    for (const auto& [c, s] : plan.contract()) std::cout << "  " << to_string(c) << ": " << to_string(s.level) << " " << s.mechanism << "\n";
    return 0;
  }
  windows_launch_options options;
  options.lease_directory = o.lease_dir;
  auto ran = launch_windows_plan(plan, options);
  if (!ran) {
    std::cerr << "cordon: " << ran.error_value().describe() << "\n";
    if (ran.error_value().code == error_code::command_not_found) return 127;
    return kRefused;
  }
  std::fwrite(ran->stdout_text.data(), 1, ran->stdout_text.size(), stdout);
  std::fwrite(ran->stderr_text.data(), 1, ran->stderr_text.size(), stderr);
  if (!o.report.empty()) {
    nlohmann::json env_names = nlohmann::json::array();
    for (const auto& [name, value] : plan.environment().entries) env_names.push_back(name);
    nlohmann::json report = {{"schema", 1},
                             {"backend", plan_type},
                             {"policy", plan.policy().name},
                             {"argv", plan.command()->argv},
                             {"application", plan.command()->application},
                             {"environment_names", env_names},
                             {"controls", contract_json(ran->observed)},
                             {"readback", ran->readback},
                             {"cleanup", ran->cleanup},
                             {"warnings", ran->warnings},
                             {"timed_out", ran->timed_out},
                             {"exit_code", ran->exit_code},
                             {"wall_ms", ran->wall_ms}};
    if (auto w = launcher::write_durably(o.report, report.dump(2) + "\n"); !w) {
      std::cerr << "cordon: report: " << w.error_value().describe() << "\n";
      return kRefused;
    }
  }
  if (ran->timed_out) return 124;
  return static_cast<int>(ran->exit_code);
}

int recover(const cli_options& o) {
  std::string dir = o.lease_dir;
  if (dir.empty()) {
    auto d = launcher::default_lease_directory();
    if (!d) {
      std::cerr << "cordon: " << d.error_value().describe() << "\n";
      return kRefused;
    }
    dir = *d;
  }
  std::vector<std::string> report;
  auto r = recover_stale_leases(dir, report);
  for (const auto& line : report) std::cout << line << "\n";
  if (!r) {
    std::cerr << "cordon: " << r.error_value().describe() << "\n";
    return kRefused;
  }
  return 0;
}

}  // namespace
}  // namespace cordon::windows

int wmain(int argc, wchar_t** argv) {
  using namespace cordon::windows;
  std::vector<std::string> args;
  for (int i = argc - 1; i > 0; --i) args.push_back(win32::narrow(argv[i]));  // CLI11 takes them reversed
  CLI::App app{"cordon for Windows: runs a command under a Job Object, a restricted token and an AppContainer"};
  app.require_subcommand(1);
  cli_options o;
  int status = 0;
  for (const char* name : {"run", "explain"}) {
    CLI::App* sub = app.add_subcommand(name, std::string(name) == "run" ? "Run a command under a policy" : "Show the plan");
    auto* file = sub->add_option("--policy", o.policy_file, "Policy file (JSON, schema v1)");
    sub->add_option("--profile", o.profile, "Built-in profile")->excludes(file);
    sub->add_option("--workspace", o.workspace, "Directory that {workspace} names (default: the current one)");
    sub->add_option("--lease-dir", o.lease_dir, "Where lease records are kept (default: %LOCALAPPDATA%\\cordon\\leases)");
    if (std::string(name) == "run") sub->add_option("--report", o.report, "Write the run report (JSON) here");
    sub->add_option("command", o.command, "The command and its arguments (after --)");
    const bool launch = std::string(name) == "run";
    sub->final_callback([&o, &status, launch] { status = run(o, launch); });
  }
  CLI::App* rec = app.add_subcommand("recover", "Restore the DACL leases of crashed runs");
  rec->add_option("--lease-dir", o.lease_dir, "Where lease records are kept");
  rec->final_callback([&o, &status] { status = recover(o); });
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kRefused;
  }
  return status;
}
