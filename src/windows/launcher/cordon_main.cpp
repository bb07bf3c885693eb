// src/windows/launcher/cordon_main.cpp — cordon.exe, the Windows CLI:
//   cordon.exe run [--policy FILE | --profile NAME] [--workspace DIR] [--report FILE] -- CMD ARGS...
//   cordon.exe explain [--policy FILE | --profile NAME] [--workspace DIR] [--reference-host] [-- CMD ARGS...]
//   cordon.exe recover [--lease-dir DIR]
//   cordon.exe gate run MANIFEST [--out DIR] [--only NAME]... [--junit FILE] [--workspace DIR] [--lease-dir DIR]
//   cordon.exe sidecar ...: refused (backend_unavailable), see sidecar() below
// Exit status of `run`: the command's; 124 timeout; 125 cordon refused or
// failed (nothing ran); 126 not executable; 127 not found (docs/windows-backend.md).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cordon/policy_json.h"
#include "cordon/profiles.h"
#include "cordon/windows/compile.h"
#include "cordon/windows/launcher.h"
#include "gates/manifest.h"
#include "windows/launcher/dacl_lease.h"
#include "windows/launcher/gate_runner.h"
#include "windows/launcher/win32.h"
#include "windows/report.h"

namespace cordon::windows {
namespace {

constexpr int kRefused = 125;

struct cli_options {
  std::string policy_file, profile, workspace, report, lease_dir;
  std::vector<std::string> command;
  bool reference_host = false;  // explain: the reference shape, not this host
  // gate run
  std::string manifest, out_dir = "cordon-gate-run", junit;
  std::vector<std::string> only;
};

// An absolute Windows path ("" when `path` is empty or GetFullPathNameW fails).
std::string full_path(const std::string& path) {
  if (path.empty()) return {};
  wchar_t buf[MAX_PATH];
  const DWORD n = GetFullPathNameW(win32::widen(path).c_str(), MAX_PATH, buf, nullptr);
  return n == 0 || n >= MAX_PATH ? std::string() : win32::narrow(buf);
}

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

// Writes `text` to --report when one was given (schemas/report.v1.schema.json,
// src/windows/report.h). Returns `status`, or kRefused when the report cannot
// be written (a run whose report is lost is not reported as a success).
int with_report(const cli_options& o, const std::string& text, int status) {
  if (o.report.empty()) return status;
  if (auto w = launcher::write_durably(o.report, text); !w) {
    std::cerr << "cordon: report: " << w.error_value().describe() << "\n";
    return kRefused;
  }
  return status;
}

int run(const cli_options& o, bool launch) {
  auto policy = load(o);
  if (!policy) {
    std::cerr << "cordon: " << policy.error_value().describe() << "\n";
    if (!launch) return kRefused;
    return with_report(o, windows_refused_report_json("", o.command, policy.error_value()), kRefused);
  }
  windows_compile_options compile;
  compile.workspace = workspace_of(o);
  compile.argv = o.command;
  // --reference-host: the recorded shape `cordon policy explain --platform
  // windows` uses (its workspace C:\Users\user\work unless --workspace).
  if (o.reference_host && o.workspace.empty()) compile.workspace = "C:\\Users\\user\\work";
  const host_facts facts = o.reference_host ? reference_host_facts()
                                            : gather_host_facts(paths_to_probe(*policy, gather_host_facts({}), compile));
  auto compiled = compile_windows_plan(*policy, facts, compile);
  if (!compiled) {
    print_failure(*compiled.failure);
    if (!launch) return kRefused;
    return with_report(o, windows_refused_report_json(policy->name, o.command, *compiled.failure), kRefused);
  }
  const windows_plan& plan = *compiled.plan;
  if (!launch) {
    std::cout << "plan " << plan_type << " v" << plan.format_version() << " #" << plan.identity() << " on Windows "
              << facts.windows_version << (facts.wine ? " (wine)" : "") << "\n";
    for (const auto& c : plan.acl_changes()) std::cout << "  acl " << to_string(c.role) << " " << c.path << "\n";
    for (const auto& [c, s] : plan.contract()) std::cout << "  " << to_string(c) << ": " << to_string(s.level) << " " << s.mechanism << "\n";
    for (const auto& w : plan.warnings()) std::cout << "  warning: " << w << "\n";
    return 0;
  }
  windows_launch_options options;
  options.lease_directory = o.lease_dir;
  auto ran = launch_windows_plan(plan, options);
  if (!ran) {
    std::cerr << "cordon: " << ran.error_value().describe() << "\n";
    const int status = ran.error_value().code == error_code::command_not_found ? 127 : kRefused;
    return with_report(o, windows_launch_failed_report_json(plan, ran.error_value(), {}), status);
  }
  std::fwrite(ran->stdout_text.data(), 1, ran->stdout_text.size(), stdout);
  std::fwrite(ran->stderr_text.data(), 1, ran->stderr_text.size(), stderr);
  const int status = ran->timed_out ? 124 : static_cast<int>(ran->exit_code);
  return with_report(o, windows_run_report_json(plan, *ran), status);
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

// `cordon.exe gate run` (src/windows/launcher/gate_runner.h): the workspace
// is --workspace, else the manifest's directory (no git lookup on Windows).
int gate_run(const cli_options& o) {
  std::string manifest = full_path(o.manifest);
  if (manifest.empty()) {
    std::cerr << "cordon: usage_error: manifest " << o.manifest << ": no such path\n";
    return kRefused;
  }
  std::replace(manifest.begin(), manifest.end(), '\\', '/');  // manifest.h resolves relative paths at '/'
  const gates::manifest_result loaded = gates::load_manifest(manifest);
  if (!loaded.manifest) {
    for (const auto& e : loaded.errors) {
      std::cerr << "cordon: invalid_manifest: " << (e.line > 0 ? o.manifest + ":" + std::to_string(e.line) + ": " : "")
                << e.message << "\n";
    }
    return kRefused;
  }
  windows_gate_settings settings;
  settings.workspace = full_path(o.workspace.empty() ? loaded.manifest->directory : o.workspace);
  settings.out_dir = full_path(o.out_dir);
  settings.junit_file = full_path(o.junit);
  settings.only = o.only;
  settings.lease_directory = o.lease_dir;
  while (settings.workspace.size() > 3 && settings.workspace.back() == '\\') settings.workspace.pop_back();
  if (settings.workspace.empty() || settings.out_dir.empty()) {
    std::cerr << "cordon: usage_error: the workspace or --out is not a usable path\n";
    return kRefused;
  }
  return run_windows_gates(*loaded.manifest, settings, std::cout, std::cerr);
}

// `cordon sidecar` needs the sidecar's stdin and stdout as a live channel
// (docs/sidecars.md). This launcher gives the child NUL as stdin and collects
// its output until it exits, so it cannot confine a sidecar: refused, nothing runs.
int sidecar() {
  std::cerr << "cordon: backend_unavailable: cordon sidecar is not available on Windows: the Windows launcher gives "
               "the command NUL as stdin and collects its output until it exits, so it cannot carry a sidecar's "
               "protocol channel (docs/windows-backend.md); nothing ran\n";
  return kRefused;
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
    if (std::string(name) == "explain") {
      sub->add_flag("--reference-host", o.reference_host,
                    "Compile on the reference Windows shape (C:\\Users\\user, AppContainer available), not this host");
    }
    sub->add_option("command", o.command, "The command and its arguments (after --)");
    const bool launch = std::string(name) == "run";
    sub->final_callback([&o, &status, launch] { status = run(o, launch); });
  }
  CLI::App* rec = app.add_subcommand("recover", "Restore the DACL leases of crashed runs");
  rec->add_option("--lease-dir", o.lease_dir, "Where lease records are kept");
  rec->final_callback([&o, &status] { status = recover(o); });
  CLI::App* gate = app.add_subcommand("gate", "Run CI gates, each confined by its own policy");
  gate->require_subcommand(1);
  CLI::App* gate_run_app = gate->add_subcommand("run", "Run the gates of a manifest (TOML, docs/gates.md), one at a time");
  gate_run_app->add_option("manifest", o.manifest, "The gate manifest")->required();
  gate_run_app->add_option("--out", o.out_dir, "Directory for the run record (default: .\\cordon-gate-run)");
  gate_run_app->add_option("--only", o.only, "Run only these gates (and the gates they need)");
  gate_run_app->add_option("--junit", o.junit, "Write JUnit XML here");
  gate_run_app->add_option("--workspace", o.workspace, "Directory that {workspace} names (default: the manifest's)");
  gate_run_app->add_option("--lease-dir", o.lease_dir, "Where lease records are kept");
  gate_run_app->final_callback([&o, &status] { status = gate_run(o); });
  CLI::App* side = app.add_subcommand("sidecar", "Refused on Windows: the launcher cannot carry a protocol channel");
  side->allow_extras();
  side->prefix_command();
  side->final_callback([&status] { status = sidecar(); });
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kRefused;
  }
  return status;
}
