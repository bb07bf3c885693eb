// commands.h — the subcommands of `cordon`.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cordon/result.h"

namespace cordon::cli {

struct run_options {
  std::string policy_file;
  std::string profile;
  std::string workspace;
  std::string report_file;
  std::optional<double> timeout_seconds;
  std::vector<std::string> command;
};

void add_run_command(CLI::App& app, run_options& options);
void add_info_commands(CLI::App& app);

// Runs the subcommand that was parsed; returns the process exit code.
int dispatch(CLI::App& app, const run_options& run);

int run_command(const run_options& options);

// Prints an error to stderr: "cordon: <code>: <location>: <message>: <strerror>",
// one line per line of the message.
void print_error(const error& err);

}  // namespace cordon::cli
