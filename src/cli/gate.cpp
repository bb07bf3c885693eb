// `cordon gate run MANIFEST.toml`: run a manifest's gates confined
// (docs/gates.md). The runner itself is src/gates/.
#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "cli/commands.h"
#include "cli/output.h"
#include "cli/workspace.h"
#include "gates/manifest.h"
#include "gates/runner.h"

namespace cordon::cli {
namespace {

constexpr const char* kGateRunHelp = R"(Every gate's policy is compiled before any gate runs. A gate for another OS is
not_applicable, a gate whose policy this host cannot enforce is refused (with
its blockers); neither counts as a pass and neither ever runs unconfined.
The workspace ({workspace} of every policy) is --workspace, else the git
repository that holds the manifest, else the manifest's directory.
DIR gets run.json (rewritten at every state change; a gate not finished is
recorded as interrupted) and gate/<name>.{policy.json,sandbox.json,stdout,stderr}.

Exit status:
  0    every selected gate passed
  1    at least one selected gate did not pass
  125  the manifest or the command line is wrong, or the record cannot be written
  130, 143  stopped by SIGINT or SIGTERM (the running gates are interrupted))";

struct gate_run_options {
  std::string manifest;
  std::string out_dir = "cordon-gate-run";
  unsigned jobs = 1;
  std::vector<std::string> only;
  std::string junit;
  std::string workspace;
};

std::string absolute(const std::string& path) {
  return !path.empty() && path.front() == '/' ? path : current_directory() + "/" + path;
}

int gate_run(const gate_run_options& options) {
  auto loaded = gates::load_manifest(absolute(options.manifest));
  if (!loaded.manifest) {
    for (const auto& e : loaded.errors) {
      std::cerr << "cordon: invalid_manifest: " << options.manifest << ":" << e.line << ": " << e.message << "\n";
    }
    return gates::gate_exit_runner_failed;
  }
  const char* home = std::getenv("HOME");
  auto workspace = choose_workspace(options.workspace, loaded.manifest->directory, home != nullptr ? home : "");
  if (!workspace) {
    print_error(workspace.error_value());
    return gates::gate_exit_runner_failed;
  }
  gates::run_settings settings;
  settings.out_dir = absolute(options.out_dir);
  settings.jobs = options.jobs;
  settings.only = options.only;
  settings.junit_file = options.junit.empty() ? "" : absolute(options.junit);
  settings.workspace = workspace->workspace;
  settings.color = output().color_stdout;  // --color, NO_COLOR (cli/output.h)
  return gates::run_gates(*loaded.manifest, settings, std::cout, std::cerr);
}

}  // namespace

void add_gate_commands(CLI::App& app, int* result) {
  static gate_run_options options;
  CLI::App* gate = app.add_subcommand("gate", "Run CI gates, each confined by its own policy");
  gate->require_subcommand(1);
  CLI::App* run = gate->add_subcommand("run", "Run the gates of a manifest (TOML, docs/gates.md)");
  run->footer(kGateRunHelp);
  run->add_option("manifest", options.manifest, "The gate manifest")->required();
  run->add_option("--out", options.out_dir, "Directory for the run record (default: ./cordon-gate-run)");
  run->add_option("--jobs,-j", options.jobs, "Gates run at the same time (default 1)")->check(CLI::Range(1u, 256u));
  run->add_option("--only", options.only, "Run only these gates (and the gates they need)");
  run->add_option("--junit", options.junit, "Write JUnit XML here (atomically)");
  run->add_option("--workspace", options.workspace, "Directory that {workspace} names in every gate's policy");
  run->final_callback([result] { *result = gate_run(options); });
}

}  // namespace cordon::cli
