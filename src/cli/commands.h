// commands.h — the subcommands of `cordon`.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/overrides.h"
#include "cordon/backend.h"
#include "cordon/result.h"

namespace cordon::cli {

struct run_options {
  std::string policy_file;
  std::string profile;
  std::string workspace;
  std::string report_file;
  int report_fd = -1;         // --report-fd N: the report goes to descriptor N
  bool force_workspace = false;  // --force-workspace: a workspace inside a system or credential tree
  std::string cgroup_parent;  // --cgroup-parent: compile_options::cgroup_parent
  bool summary = false;       // --summary: print a summary of the report on stderr at the end
  bool no_summary = false;    // --no-summary (without either: a summary when stderr is a terminal)
  policy_overrides overrides;  // --ro, --rw, --deny, --net, --env, --setenv, --memory, --max-procs, --cpu,
                               // --timeout, --accept
  std::vector<std::string> command;
};

// `cordon run [OPTIONS] CMD ARGS...`: everything from the first word that is
// not an option or an option's value is the command, its own options
// included (`cordon run sh -c 'echo hi'`). CLI11 would take "-c" for an
// option of `run`, so this inserts "--" before the command when it is not
// there. `args` are argv[1..] in order.
void separate_command(const CLI::App& app, std::vector<std::string>& args);
// The index in `args` (argv[1..]) of the command word, past cordon's own
// options (-v, -q, --color WHEN) that `app` defines; args.size() if none.
std::size_t command_word_index(const CLI::App& app, const std::vector<std::string>& args);

// usage.cpp: refuses (one line on stderr, returns 125) an unknown command or
// subcommand word, naming it and the choices, and a command that needs a
// subcommand but got none (unless help was asked for); else returns 0.
// `args` are argv[1..] in order. help_command_for() names the help that
// documents the options of the deepest subcommand in `args` ("cordon run --help").
int check_command_words(const CLI::App& app, const std::vector<std::string>& args);
std::string help_command_for(const CLI::App& app, const std::vector<std::string>& args);
// The one-line refusal of the first option word in `args` (argv[1..], in
// order) that names no option of its command or the levels above it:
// "cordon: usage_error: unknown option '--dny' for cordon run (did you mean
// --deny?); see cordon run --help", the hint only when an option is within a
// third of the word's length; "" when every option word is known.
std::string unknown_option_message(const CLI::App& app, const std::vector<std::string>& args);
// One "cordon: hint:" line per blocker whose available level is partial: the
// --accept that would take it, and for a limit the --cgroup-parent that would
// enforce it. A command without those flags (`cordon fs`: `run_flags` false)
// names the policy's "enforcement" entry instead, and no flag.
void print_blocker_hints(const std::vector<blocker>& blockers, bool run_flags = true);

// `cordon run`'s work after its parse (run.cpp): returns the exit status.
int run_confined(const run_options& options);

// Prints an error to stderr: "cordon: <code>: <location>: <message>: <strerror>",
// one line per line of the message.
void print_error(const error& err);

// Every problem of a policy file, one line each on stderr:
// "cordon: <code>: FILE: <pointer or line, column>: <reason>" ("(document)"
// when a problem has no location), as `cordon policy validate` prints them.
void print_policy_errors(const std::string& file, error_code code, const std::vector<policy_error>& errors);

// A load_sandbox_policy(file) failure: each parse or policy error as
// print_policy_errors() prints it; any other error (io_error), or any error
// when `file` is empty (a profile's), as print_error().
void print_policy_file_error(const std::string& file, const error& err);

// One line per problem on stderr: each policy error with its location, or the
// failure's code and message, then each blocker and its hint
// (print_blocker_hints, with `run_flags` passed on). `policy_file`: the
// --policy file the errors' locations point into, printed before each
// location as print_policy_errors() does; empty for a profile, or for a
// policy that flags edited (a location may then point at a flag's change).
void print_compile_failure(const compile_failure& f, bool run_flags = true, const std::string& policy_file = "");

// The current working directory ("/" when it cannot be determined).
std::string current_directory();

// `cordon probe --human`: the capabilities as a readable table (explain.cpp).
void print_probe_table(const host_capabilities& caps);

}  // namespace cordon::cli
