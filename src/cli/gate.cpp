// `cordon gate run MANIFEST.toml`: run a manifest's gates confined
// (docs/gates.md). The runner itself is src/gates/.
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <optional>
#include <nlohmann/json.hpp>

#include "posix/atomic_file.h"

#include "cli/command.h"
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

// `cordon gate run MANIFEST`.
struct gate_run_command final : command {
  gate_run_options options;
  void add_options(CLI::App& app) override {
    app.footer(kGateRunHelp);
    app.add_option("manifest", options.manifest, "The gate manifest")->required();
    app.add_option("--out", options.out_dir, "Directory for the run record (default: ./cordon-gate-run)");
    app.add_option("--jobs,-j", options.jobs, "Gates run at the same time (default 1)")->check(CLI::Range(1u, 256u));
    app.add_option("--only", options.only, "Run only these gates (and the gates they need)");
    app.add_option("--junit", options.junit, "Write JUnit XML here (atomically)");
    app.add_option("--workspace", options.workspace, "Directory that {workspace} names in every gate's policy");
  }
  int execute() override { return gate_run(options); }
};

// `cordon gate render MANIFEST`.
struct gate_render_command final : command {
  gate_render_options options;
  void add_options(CLI::App& app) override {
    app.footer(kGateRenderHelp);
    app.add_option("manifest", options.manifest, "The gate manifest")->required();
    app.add_flag("--kubernetes", options.kubernetes, "One Kubernetes Job per gate (JSON, valid YAML)");
    app.add_option("--image", options.image, "The image the pods run: cordon on PATH, the workspace inside")
        ->required();
    app.add_option("--pod-workspace", options.pod_workspace, "Where the workspace is in the image (/workspace)");
    app.add_option("--seccomp-profile", options.seccomp,
                   "unconfined (default) or localhost/PATH: a node profile that allows user namespaces");
    app.add_option("--namespace", options.namespace_name, "metadata.namespace of every Job");
    app.add_option("--only", options.only, "Render only these gates (and the gates they need)");
    app.add_option("--output,-o", options.output, "Write here (atomically) instead of stdout");
    app.add_option("--workspace", options.workspace, "The workspace the manifest lies in (as for gate run)");
  }
  int execute() override { return gate_render(options); }
};

}  // namespace

std::unique_ptr<command> make_gate_run_command() { return std::make_unique<gate_run_command>(); }
std::unique_ptr<command> make_gate_render_command() { return std::make_unique<gate_render_command>(); }

}  // namespace cordon::cli
