// cordon — command-line entry point. The commands are the rows of the
// command table (command.h, command_table.cpp), each in its own file; this
// file builds the CLI11 tree from the table, parses, runs the one command
// that was parsed, and holds the CLI's one exception boundary.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <exception>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/commands.h"
#include "cordon/version.h"
#include "cli/exit_codes.h"
#include "cli/output.h"

namespace cordon::cli {
namespace {

// The commands made from the table's rows, by the CLI11 node each is bound
// to; they outlive the parse that fills their options.
struct command_nodes {
  std::vector<std::unique_ptr<command>> commands;
  std::map<const CLI::App*, command*> by_node;
};

// Adds the table's rows to `app`: every row, or (when `only` is not empty)
// the rows under that first word.
void add_rows(CLI::App& app, command_nodes& nodes, const std::string& only) {
  for (const command_row& row : command_table()) {
    if (!only.empty() && row.path.front() != only) continue;
    CLI::App* parent = &app;
    for (std::size_t i = 0; i + 1 < row.path.size(); ++i) parent = parent->get_subcommand(row.path[i]);
    CLI::App* node = parent->add_subcommand(row.path.back(), row.description);
    if (row.make == nullptr) {
      node->require_subcommand(1);  // a group: `cordon policy` alone is refused (usage.cpp)
      continue;
    }
    std::unique_ptr<command> made = row.make();
    made->add_options(*node);
    nodes.by_node[node] = made.get();
    nodes.commands.push_back(std::move(made));
  }
}

// The command of the deepest subcommand the parse chose; nullptr if none.
command* parsed_command(const CLI::App& app, const command_nodes& nodes) {
  const CLI::App* at = &app;
  for (auto chosen = at->get_subcommands(); !chosen.empty(); chosen = at->get_subcommands()) at = chosen.front();
  auto found = nodes.by_node.find(at);
  return found == nodes.by_node.end() ? nullptr : found->second;
}

int run_cli(int argc, char** argv) {
  CLI::App app{
      "cordon confines one command tree and reports, control by control, what it enforced.\n"
      "Run `cordon run -- CMD` to confine CMD under the default profile (workspace-write)."};
  app.require_subcommand(1);
  app.fallthrough();  // -v, -q and --color after the subcommand too (subcommands inherit this)
  add_output_flags(app);
  app.set_version_flag("--version", "cordon " + std::string(library_version()));
  app.name("cordon");  // in usage lines: the name people type, not the path of this binary
  std::vector<std::string> args(argv + 1, argv + argc);
  // `cordon run` defines only its own command: building the other commands'
  // options costs every confined launch CPU for nothing (docs/benchmarks.md,
  // "Where the time goes"). Help, usage errors and `run`'s parse are the same
  // either way: none of them looks at a sibling command.
  const std::size_t word = command_word_index(app, args);
  const bool run_only = word < args.size() && args[word] == "run";
  command_nodes nodes;
  add_rows(app, nodes, run_only ? "run" : "");
  // Set after the commands are added: CLI11 gives a new subcommand its parent's footer.
  app.footer(
      "Exit status: each command's own, listed in its --help and man page (cordon run --help: the command's code, "
      "124 timeout, 125 cordon refused or failed, 126, 127); 125 for bad usage, as with every command.");
  if (int refused = check_command_words(app, args); refused != 0) return refused;
  const std::string help = help_command_for(app, args);
  const std::vector<std::string> typed = args;  // before separate_command and the reversal
  separate_command(app, args);
  std::reverse(args.begin(), args.end());  // CLI11 takes them last first
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    // With fallthrough (-v/-q/--color after the subcommand), CLI11 reports an
    // unknown option of a subcommand as the top level's "arguments were not
    // expected": cordon's own line names the option, its command and a near name.
    if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
      if (auto message = unknown_option_message(app, typed); !message.empty()) {
        std::cerr << message << "\n";
        return exit_cordon_failed;
      }
    }
    std::cerr << "cordon: usage_error: " << e.what() << " (see " << help << ")\n";
    return exit_cordon_failed;
  }
  command* chosen = parsed_command(app, nodes);
  if (chosen == nullptr) {  // the table's groups all require a subcommand: not reached
    std::cerr << "cordon: usage_error: no command (see " << help << ")\n";
    return exit_cordon_failed;
  }
  return chosen->execute();
}

// The one line an exception that reached main() leaves, "cordon:
// internal_error: WHAT" (WHAT on one line), and exit 125: cordon's own
// failure (docs/errors.md). Writes nothing else, so that it cannot throw
// again when memory ran out.
int uncaught(const char* what) {
  std::cerr << "cordon: internal_error: ";
  for (const char* c = what; *c != '\0'; ++c) std::cerr << (*c == '\n' ? ' ' : *c);
  std::cerr << "\n";
  return exit_cordon_failed;
}

}  // namespace
}  // namespace cordon::cli

// The CLI's one exception boundary: no exception leaves main(). A command
// refuses the bad input it can name with a typed line first; what still
// throws (a bug, or memory that ran out) is one line and exit 125 instead of
// std::terminate's abort.
int main(int argc, char** argv) {
  try {
    return cordon::cli::run_cli(argc, argv);
  } catch (const std::exception& e) {
    return cordon::cli::uncaught(e.what());
  } catch (...) {
    return cordon::cli::uncaught("an exception of unknown type");
  }
}
