// output.h — cordon's own options for what it prints: -v/--verbose,
// -q/--quiet, --color=auto|always|never (and NO_COLOR). They are options of
// `cordon` itself, accepted before or after the subcommand.
#pragma once

#include <CLI/CLI.hpp>
#include <ostream>
#include <string>

namespace cordon::cli {

enum class verbosity { quiet, normal, verbose };

struct output_settings {
  verbosity level = verbosity::normal;
  bool color_stdout = false;  // decided by resolve_output()
  bool color_stderr = false;
};

// The settings of this process (set once, after parsing).
const output_settings& output();

// Registers -v/--verbose, -q/--quiet and --color on `app` (the root).
void add_output_flags(CLI::App& app);

// After parsing: --color=always or never decides; auto (the default) means
// colour on a terminal unless NO_COLOR is set and not empty (no-color.org).
void resolve_output();

// `text` in the SGR colour `code` ("1" bold, "31" red, "33" yellow, "32"
// green) when `enabled`, else as it is.
std::string paint(const std::string& text, const char* code, bool enabled);

// "cordon: verbose: " lines on stderr, only with -v.
bool verbose();
std::ostream& verbose_line();

}  // namespace cordon::cli
