// -v, -q, --color and NO_COLOR: see output.h.
#include "cli/output.h"

#include <unistd.h>

#include <cstdlib>
#include <iostream>

namespace cordon::cli {
namespace {

output_settings g_output;
bool g_verbose = false, g_quiet = false;
std::string g_color = "auto";

bool colour_for(int fd) {
  if (g_color == "always") return true;
  if (g_color == "never") return false;
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color != nullptr && *no_color != '\0') return false;
  return ::isatty(fd) == 1;
}

}  // namespace

const output_settings& output() { return g_output; }

void add_output_flags(CLI::App& app) {
  auto* v = app.add_flag("-v,--verbose", g_verbose,
                         "Say what cordon decided and why: the policy's source, the workspace, the plan's controls, "
                         "mounts and environment (on stderr)");
  app.add_flag("-q,--quiet", g_quiet, "Print only errors and what was asked for: no summary, no hints; lists print names only")
      ->excludes(v);
  app.add_option("--color", g_color, "Colour: auto (on a terminal, unless NO_COLOR is set), always, never")
      ->type_name("auto|always|never")
      // No description: the value name already lists the choices (else --help says them twice).
      ->check(CLI::IsMember({"auto", "always", "never"}).description(""));
  // Before any subcommand's callback prints anything.
  app.parse_complete_callback(resolve_output);
}

void resolve_output() {
  g_output.level = g_quiet ? verbosity::quiet : g_verbose ? verbosity::verbose : verbosity::normal;
  g_output.color_stdout = colour_for(STDOUT_FILENO);
  g_output.color_stderr = colour_for(STDERR_FILENO);
}

std::string paint(const std::string& text, const char* code, bool enabled) {
  if (!enabled) return text;
  return std::string("\033[") + code + "m" + text + "\033[0m";
}

bool verbose() { return g_output.level == verbosity::verbose; }

std::ostream& verbose_line() { return std::cerr << paint("cordon: verbose:", "2", g_output.color_stderr) << " "; }

}  // namespace cordon::cli
