// cordon — command-line entry point. Subcommands live in their own files.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/mcp.h"
#include "cordon/version.h"
#include "cli/exit_codes.h"
#include "cli/output.h"

int main(int argc, char** argv) {
  CLI::App app{
      "cordon confines one command tree and reports, control by control, what it enforced.\n"
      "Run `cordon run -- CMD` to confine CMD under the default profile (workspace-write)."};
  app.require_subcommand(1);
  app.fallthrough();  // -v, -q and --color after the subcommand too (subcommands inherit this)
  cordon::cli::add_output_flags(app);
  app.set_version_flag("--version", "cordon " + std::string(cordon::library_version()));
  cordon::cli::run_options run;
  cordon::cli::add_run_command(app, run);
  app.name("cordon");  // in usage lines: the name people type, not the path of this binary
  std::vector<std::string> args(argv + 1, argv + argc);
  // `cordon run` defines only its own command: building the other commands'
  // options costs every confined launch CPU for nothing (docs/benchmarks.md,
  // "Where the time goes"). Help, usage errors and `run`'s parse are the same
  // either way: none of them looks at a sibling command.
  const std::size_t word = cordon::cli::command_word_index(app, args);
  const bool run_only = word < args.size() && args[word] == "run";
  int governance_result = -1, gate_result = 0, sidecar_result = 0, fs_result = 0, mcp_result = 0;
  int generated = -1;  // the hidden generators of the man pages and completions (docs/packaging.md)
  if (!run_only) {
    cordon::cli::add_info_commands(app);
    cordon::cli::add_governance_commands(app, &governance_result);
    cordon::cli::add_gate_commands(app, &gate_result);
    cordon::cli::add_sidecar_command(app, &sidecar_result);
    cordon::cli::add_fs_command(app, &fs_result);
    cordon::cli::add_mcp_command(app, &mcp_result);
    cordon::cli::add_manpage_command(app, &generated);
    cordon::cli::add_completion_command(app, &generated);
  }
  // Set after the commands are added: CLI11 gives a new subcommand its parent's footer.
  app.footer(
      "Exit status: each command's own, listed in its --help and man page (cordon run --help: the command's code, "
      "124 timeout, 125 cordon refused or failed, 126, 127); 125 for bad usage, as with every command.");
  if (int refused = cordon::cli::check_command_words(app, args); refused != 0) return refused;
  const std::string help = cordon::cli::help_command_for(app, args);
  const std::vector<std::string> typed = args;  // before separate_command and the reversal
  cordon::cli::separate_command(app, args);
  std::reverse(args.begin(), args.end());  // CLI11 takes them last first
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    // With fallthrough (-v/-q/--color after the subcommand), CLI11 reports an
    // unknown option of a subcommand as the top level's "arguments were not
    // expected": cordon's own line names the option, its command and a near name.
    if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
      if (auto message = cordon::cli::unknown_option_message(app, typed); !message.empty()) {
        std::cerr << message << "\n";
        return cordon::cli::exit_cordon_failed;
      }
    }
    std::cerr << "cordon: usage_error: " << e.what() << " (see " << help << ")\n";
    return cordon::cli::exit_cordon_failed;
  }
  if (run_only) return cordon::cli::dispatch(app, run);
  if (generated >= 0) return generated;
  if (app.got_subcommand("gate")) return gate_result;
  if (app.got_subcommand("sidecar")) return sidecar_result;
  if (app.got_subcommand("fs")) return fs_result;
  if (app.got_subcommand("mcp")) return mcp_result;
  int code = cordon::cli::dispatch(app, run);
  return governance_result >= 0 ? governance_result : code;
}
