// command_tree.h — the CLI's commands and options as plain data, read from
// the CLI11 definitions that also print --help: the one source of the man
// pages (manpage.cpp) and the shell completions (completion.cpp), so that
// neither can drift from --help (tests/packaging/check_docs.py checks it).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace cordon::cli {

struct option_doc {
  std::vector<std::string> names;  // "-h", "--help": short names first, with their dashes
  std::string value;               // the value's name ("PATH", "auto|always|never"); empty for a flag
  std::string description;
  std::string group;               // "Options", or the section --help prints it under
  // The values it takes when --help spells them as "a|b|c" (for completion); else empty.
  std::vector<std::string> choices;
};

struct command_doc {
  std::vector<std::string> path;  // {"cordon", "policy", "explain"}
  std::string description;
  std::string footer;                   // the text after the options in --help
  std::vector<option_doc> options;      // in --help's order
  std::vector<option_doc> positionals;  // names without dashes
  std::vector<command_doc> subcommands; // visible ones only (hidden: group "")
  // "cordon policy explain": the words typed.
  std::string spelled() const;
  // "cordon-policy-explain": the man page's name.
  std::string page_name() const;
};

// The visible tree under `app` (whose own name is the first word of every path).
command_doc describe_commands(const CLI::App& app);

// Every command of the tree, parents before their subcommands.
std::vector<const command_doc*> flatten(const command_doc& root);

}  // namespace cordon::cli
