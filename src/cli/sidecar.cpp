// `cordon sidecar`: run a protocol sidecar (an MCP server, a language server)
// confined, with its stdin/stdout as the protocol channel (docs/sidecars.md).
// The work is in src/sidecars/.
#include <cmath>
#include <cstdlib>
#include <iostream>

#include "cli/command.h"
#include "cli/commands.h"
#include "cli/workspace.h"
#include "cordon/enforcement.h"
#include "sidecars/launcher.h"

extern char** environ;

namespace cordon::cli {
namespace {

constexpr const char* kSidecarHelp = R"(The sidecar's stdin and stdout carry its protocol; cordon adds nothing to them.
Before the first protocol byte is forwarded, the launch report (every
control's level, pid, start time) is written to --report and/or --report-fd;
the final report, with how the sidecar ended, replaces it at the end. A
--require that the plan does not meet refuses the launch.

Framing (--protocol): mcp = one JSON-RPC 2.0 message per line; lsp =
Content-Length frames; raw = bytes as they come. Output on the sidecar's
stdout that is not a frame is never forwarded: it is discarded and counted in
the report. For mcp and lsp the host's initialize request must be answered
within --handshake-timeout.

Shutdown (the host closed cordon's stdin, the handshake timed out, cordon got
SIGINT/SIGTERM/SIGHUP): the sidecar's stdin is closed, then after
--stdin-grace SIGTERM goes to the tree, then after --term-grace SIGKILL.

With --manifest EXT.toml the command, policy and protocol come from the
extension manifest; its files' SHA-256 digests are checked before launch and
its protocol grants are judged by --capability-rules.

Exit status:
  the sidecar's own exit code, or 128+N when signal N ended it
  124  the handshake timed out
  125  refused (policy, --require, extension files or grants) or cordon failed)";

struct sidecar_options {
  std::string policy;
  std::string protocol = "mcp";
  double handshake_timeout = 30;
  double stdin_grace = 2;
  double term_grace = 1;
  std::vector<std::string> require;
  std::string report;
  int report_fd = -1;
  std::string manifest;
  std::string capability_rules;
  std::string workspace;
  std::vector<std::string> command;
};

std::string absolute(const std::string& path) {
  return path.empty() || path.front() == '/' ? path : current_directory() + "/" + path;
}

std::chrono::milliseconds to_ms(double seconds) {
  return std::chrono::milliseconds(static_cast<long long>(std::llround(seconds * 1000.0)));
}

int usage(const std::string& message) {
  std::cerr << "cordon: usage_error: " << message << " (see cordon sidecar --help)\n";
  return sidecars::sidecar_exit_refused;
}

int run_sidecar(const sidecar_options& o) {
  sidecars::sidecar_request request;
  for (const auto& r : o.require) {
    auto eq = r.find('=');
    auto c = control_from_string(r.substr(0, eq));
    auto level = eq == std::string::npos ? std::nullopt : enforcement_level_from_string(r.substr(eq + 1));
    if (!c || !level) return usage("--require takes CONTROL=LEVEL (e.g. network_deny=enforced), not '" + r + "'");
    request.requirements.push_back({*c, *level});
  }
  std::optional<sidecars::extension_manifest> extension;
  std::string start = current_directory();
  if (!o.manifest.empty()) {
    if (!o.command.empty() || !o.policy.empty()) return usage("--manifest names the command and policy: give neither");
    auto loaded = sidecars::load_extension_manifest(absolute(o.manifest));
    if (!loaded.manifest) {
      for (const auto& e : loaded.errors) {
        std::cerr << "cordon: invalid_manifest: " << o.manifest << ":" << e.line << ": " << e.message << "\n";
      }
      return sidecars::sidecar_exit_refused;
    }
    extension = std::move(loaded.manifest);
    request.argv = extension->command;
    request.session.proto = extension->proto;
    if (extension->handshake_timeout_sec) request.session.handshake_timeout = to_ms(*extension->handshake_timeout_sec);
    start = extension->directory;
    request.extension = &*extension;
  } else {
    if (o.policy.empty()) return usage("--policy (a profile or a policy file) or --manifest is required");
    if (o.command.empty()) return usage("the sidecar's command goes after --");
    auto p = sidecars::protocol_from_string(o.protocol);
    if (!p) return usage("--protocol must be mcp, lsp or raw");
    request.session.proto = *p;
    request.argv = o.command;
    request.policy_ref = o.policy;
    request.policy_base = current_directory();
    request.session.handshake_timeout = to_ms(o.handshake_timeout);
  }
  request.session.stdin_grace = to_ms(o.stdin_grace);
  request.session.term_grace = to_ms(o.term_grace);
  const char* home = std::getenv("HOME");
  auto workspace = choose_workspace(o.workspace, start, home != nullptr ? home : "");
  if (!workspace) {
    print_error(workspace.error_value());
    return sidecars::sidecar_exit_refused;
  }
  request.workspace = workspace->workspace;
  request.working_directory = workspace->working_directory;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) request.host_environment.emplace_back(*e);
  request.report_file = absolute(o.report);
  request.report_fd = o.report_fd;
  request.capability_rules = absolute(o.capability_rules);
  return sidecars::run_sidecar(request, std::cerr);
}

// `cordon sidecar [OPTIONS] -- CMD ARGS...`.
struct sidecar_command final : command {
  sidecar_options options;
  void add_options(CLI::App& app) override {
    app.footer(kSidecarHelp);
    app.add_option("--policy", options.policy, "Built-in profile or policy file (JSON)");
    app.add_option("--protocol", options.protocol, "mcp (default), lsp or raw")->check(CLI::IsMember({"mcp", "lsp", "raw"}));
    app.add_option("--handshake-timeout", options.handshake_timeout, "Seconds for initialize to be answered (default 30)")
        ->check(CLI::Range(0.001, 86400.0));
    app.add_option("--require", options.require, "CONTROL=LEVEL the plan must meet, else the launch is refused");
    app.add_option("--report", options.report, "Write the sidecar report here (launch, then final; atomically)");
    app.add_option("--report-fd", options.report_fd, "Also write each report as one JSON line on this descriptor")
        ->check(CLI::Range(3, 1 << 20));
    app.add_option("--manifest", options.manifest, "Extension manifest (TOML): command, policy, protocol, grants, files");
    app.add_option("--capability-rules", options.capability_rules,
                  "Capability rules (JSON, docs/governance.md) that judge the extension's grants");
    app.add_option("--workspace", options.workspace, "Directory that {workspace} names");
    app.add_option("--stdin-grace", options.stdin_grace, "Seconds between closing stdin and SIGTERM (default 2)")
        ->check(CLI::Range(0.0, 600.0));
    app.add_option("--term-grace", options.term_grace, "Seconds between SIGTERM and SIGKILL (default 1)")
        ->check(CLI::Range(0.0, 600.0));
    app.add_option("command", options.command, "The sidecar and its arguments (after --)");
    app.prefix_command();
  }
  int execute() override { return run_sidecar(options); }
};

}  // namespace

std::unique_ptr<command> make_sidecar_command() { return std::make_unique<sidecar_command>(); }

}  // namespace cordon::cli
