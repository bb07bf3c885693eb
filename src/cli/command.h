// command.h — one CLI command as a row of the command table. The table
// (command_table.cpp) is the one list of cordon's commands: main.cpp builds
// the CLI11 tree from it, and --help, the man pages (manpage.cpp) and the
// shell completions (completion.cpp) read that tree. Adding a command is one
// row in command_table.cpp plus one file that defines its struct.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

namespace cordon::cli {

// A command that runs: its options are members of the struct that derives
// from this one, bound to its CLI11 node by add_options().
struct command {
  virtual ~command() = default;
  // Defines the options, positionals, footer (and any option checks) on
  // `app`, the command's own node, which the table has already made with the
  // row's name and description. The options bind to members of `this`, which
  // outlives `app`'s parse.
  virtual void add_options(CLI::App& app) = 0;
  // Runs the command after a successful parse. Returns the process exit
  // status: the only channel a command's exit code comes back through
  // (exit_codes.h lists the codes). May throw: main.cpp's one exception
  // boundary turns any exception into one line on stderr and exit 125.
  virtual int execute() = 0;
};

struct command_row {
  // The words after `cordon`: {"policy", "explain"}. A row's parent path has
  // its own row earlier in the table.
  std::vector<std::string> path;
  std::string description;  // the line --help prints beside the name
  // Makes the command; nullptr for a group (`cordon policy`), which only
  // holds subcommands and needs one of them.
  std::unique_ptr<command> (*make)() = nullptr;
};

// This platform's rows, parents before their subcommands, in --help's order.
// Which rows a build has is the choice of the source file CMake compiles
// for it (command_table.cpp for the Linux CLI), never an #ifdef in a command.
const std::vector<command_row>& command_table();

}  // namespace cordon::cli
