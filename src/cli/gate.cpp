// `cordon gate run MANIFEST.toml`: run a manifest's gates confined
// (docs/gates.md). The runner itself is src/gates/.
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <optional>
#include <nlohmann/json.hpp>

#include "posix/atomic_file.h"

#include "cli/commands.h"
#include "cli/output.h"
#include "cli/workspace.h"
#include "gates/kubernetes.h"
#include "gates/live_table.h"
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

// The manifest and its workspace, as every gate subcommand reads them; false
// (after saying why on stderr) when either cannot be had.
bool load_with_workspace(const std::string& manifest, const std::string& requested_workspace,
                         gates::manifest_result& loaded, std::optional<workspace_choice>& workspace) {
  loaded = gates::load_manifest(absolute(manifest));
  if (!loaded.manifest) {
    for (const auto& e : loaded.errors) {
      // Line 0 is the whole file (unreadable, no gate): its message names the file itself.
      std::cerr << "cordon: invalid_manifest: "
                << (e.line > 0 ? manifest + ":" + std::to_string(e.line) + ": " : std::string()) << e.message << "\n";
    }
    return false;
  }
  const char* home = std::getenv("HOME");
  auto chosen = choose_workspace(requested_workspace, loaded.manifest->directory, home != nullptr ? home : "");
  if (!chosen) {
    print_error(chosen.error_value());
    return false;
  }
  workspace = std::move(*chosen);
  return true;
}

int gate_run(const gate_run_options& options) {
  gates::manifest_result loaded;
  std::optional<workspace_choice> workspace;
  if (!load_with_workspace(options.manifest, options.workspace, loaded, workspace)) {
    return gates::gate_exit_runner_failed;
  }
  gates::run_settings settings;
  settings.out_dir = absolute(options.out_dir);
  settings.jobs = options.jobs;
  settings.only = options.only;
  settings.junit_file = options.junit.empty() ? "" : absolute(options.junit);
  settings.workspace = workspace->workspace;
  const bool terminal = ::isatty(1) == 1;
  const char* term = std::getenv("TERM");
  settings.color = output().color_stdout;  // --color, NO_COLOR (cli/output.h)
  settings.live_table = terminal && (term == nullptr || std::string_view(term) != "dumb");
  settings.table_width = gates::terminal_width(1);
  return gates::run_gates(*loaded.manifest, settings, std::cout, std::cerr);
}

constexpr const char* kGateRenderHelp = R"(Writes one Kubernetes Job per gate (a v1 List, as JSON, which kubectl reads as
YAML) to --output or stdout. Each Job runs `cordon gate run MANIFEST --only
NAME` in a pod of --image, where the workspace is at --pod-workspace; the gate's
needs run first in the same pod. Gates whose env is another OS than linux are
not rendered (named on stderr). The pods ask for what cordon's mechanisms
need: user namespaces (hostUsers: false, an unmasked /proc, a seccomp profile
and AppArmor profile that allow them) and no privilege. docs/gates.md says
what the gate's report says when a cluster does not allow them.

Exit status:
  0    written
  125  the manifest, the workspace or the command line is wrong, or the output cannot be written)";

struct gate_render_options {
  std::string manifest;
  bool kubernetes = false;
  std::string image;
  std::string pod_workspace = "/workspace";
  std::string seccomp = "unconfined";
  std::string namespace_name;
  std::string output;
  std::vector<std::string> only;
  std::string workspace;
};

int gate_render(const gate_render_options& options) {
  if (!options.kubernetes) {
    std::cerr << "cordon: usage_error: say which scheduler to render for (--kubernetes)\n";
    return gates::gate_exit_runner_failed;
  }
  gates::manifest_result loaded;
  std::optional<workspace_choice> workspace;
  if (!load_with_workspace(options.manifest, options.workspace, loaded, workspace)) {
    return gates::gate_exit_runner_failed;
  }
  // The manifest's place in the workspace is its place in the pod's copy of it.
  const std::string& root = workspace->workspace;
  const std::string& path = loaded.manifest->path;
  if (path.compare(0, root.size() + 1, root + "/") != 0) {
    std::cerr << "cordon: usage_error: the manifest " << path << " is not inside the workspace " << root << "\n";
    return gates::gate_exit_runner_failed;
  }
  gates::kubernetes_settings settings;
  settings.image = options.image;
  settings.pod_workspace = options.pod_workspace;
  settings.manifest_in_pod = options.pod_workspace + path.substr(root.size());
  settings.seccomp = options.seccomp;
  settings.namespace_name = options.namespace_name;
  settings.only = options.only;
  std::vector<std::string> not_rendered;
  auto rendered = gates::render_kubernetes(*loaded.manifest, settings, not_rendered);
  if (!rendered) {
    print_error(rendered.error_value());
    return gates::gate_exit_runner_failed;
  }
  for (const auto& n : not_rendered) std::cerr << "cordon: not rendered: " << n << "\n";
  const std::string text = rendered->dump(2) + "\n";
  if (options.output.empty()) {
    std::cout << text;
    return 0;
  }
  if (auto written = write_file_atomically(absolute(options.output), text); !written) {
    print_error(written.error_value());
    return gates::gate_exit_runner_failed;
  }
  return 0;
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

  static gate_render_options render_options;
  CLI::App* render = gate->add_subcommand("render", "Write a manifest's gates as jobs for a scheduler (Kubernetes)");
  render->footer(kGateRenderHelp);
  render->add_option("manifest", render_options.manifest, "The gate manifest")->required();
  render->add_flag("--kubernetes", render_options.kubernetes, "One Kubernetes Job per gate (JSON, valid YAML)");
  render->add_option("--image", render_options.image, "The image the pods run: cordon on PATH, the workspace inside")
      ->required();
  render->add_option("--pod-workspace", render_options.pod_workspace, "Where the workspace is in the image (/workspace)");
  render->add_option("--seccomp-profile", render_options.seccomp,
                     "unconfined (default) or localhost/PATH: a node profile that allows user namespaces");
  render->add_option("--namespace", render_options.namespace_name, "metadata.namespace of every Job");
  render->add_option("--only", render_options.only, "Render only these gates (and the gates they need)");
  render->add_option("--output,-o", render_options.output, "Write here (atomically) instead of stdout");
  render->add_option("--workspace", render_options.workspace, "The workspace the manifest lies in (as for gate run)");
  render->final_callback([result] { *result = gate_render(render_options); });
}

}  // namespace cordon::cli
