// Usage errors that name what was typed and what would have been accepted:
// CLI11 alone says "A subcommand is required" for `cordon rnu` and prints the
// main help for `cordon rnu --help`.
#include <iostream>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/output.h"

namespace cordon::cli {
namespace {

// The visible ones: a hidden generator (`__manpage`) is not a choice to offer.
std::vector<const CLI::App*> visible_subcommands_of(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App* sub) { return !sub->get_group().empty(); });
}
std::vector<const CLI::App*> subcommands_of(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App*) { return true; });
}

std::string names_of(const CLI::App& app) {
  std::string out;
  for (const CLI::App* sub : visible_subcommands_of(app)) out += (out.empty() ? "" : ", ") + sub->get_name();
  return out;
}

bool is_help(const std::string& arg) { return arg == "--help" || arg == "-h" || arg == "--help-all"; }

// The subcommands the words of `args` name, in order ("cordon", "policy",
// "explain"), up to the first word that is not a subcommand (returned in
// `unknown` when the level it appears at only takes subcommands).
struct command_path {
  std::vector<const CLI::App*> apps;
  std::string unknown;
};

command_path walk(const CLI::App& app, const std::vector<std::string>& args) {
  command_path path;
  path.apps.push_back(&app);
  bool value_next = false;
  for (const auto& arg : args) {
    if (arg == "--") break;
    if (value_next) {  // "--color always": the value of cordon's own option
      value_next = false;
      continue;
    }
    if (!arg.empty() && arg.front() == '-') {
      // Only cordon's own options (-v, -q, --color) take values at the levels walked here.
      const CLI::Option* own = arg.find('=') == std::string::npos ? app.get_option_no_throw(arg) : nullptr;
      value_next = own != nullptr && own->get_items_expected_min() > 0;
      continue;
    }
    const CLI::App* level = path.apps.back();
    if (subcommands_of(*level).empty()) break;  // a leaf: the rest are its arguments
    const CLI::App* next = nullptr;
    for (const CLI::App* sub : subcommands_of(*level)) {
      if (sub->check_name(arg)) next = sub;
    }
    if (next == nullptr) {
      path.unknown = arg;
      break;
    }
    path.apps.push_back(next);
  }
  return path;
}

std::string spelled(const command_path& path) {
  std::string out;
  for (const CLI::App* a : path.apps) out += (out.empty() ? "" : " ") + a->get_name();
  return out;
}

}  // namespace

std::string help_command_for(const CLI::App& app, const std::vector<std::string>& args) {
  return spelled(walk(app, args)) + " --help";
}

int check_command_words(const CLI::App& app, const std::vector<std::string>& args) {
  const command_path path = walk(app, args);
  const CLI::App& level = *path.apps.back();
  const std::string name = spelled(path);
  if (!path.unknown.empty()) {
    std::cerr << "cordon: usage_error: unknown " << (path.apps.size() == 1 ? "command" : "subcommand") << " '"
              << path.unknown << "'" << (path.apps.size() == 1 ? "" : " for " + name) << " (choices: "
              << names_of(level) << "; see " << name << " --help)\n";
    return exit_cordon_failed;
  }
  bool help = false;
  for (const auto& arg : args) {
    if (arg == "--") break;
    help = help || is_help(arg) || arg == "--version";
  }
  if (!help && !subcommands_of(level).empty() && level.get_require_subcommand_min() > 0) {
    std::cerr << "cordon: usage_error: " << name << " needs a " << (path.apps.size() == 1 ? "command" : "subcommand")
              << ": " << names_of(level) << " (see " << name << " --help)\n";
    return exit_cordon_failed;
  }
  return 0;
}

}  // namespace cordon::cli

namespace cordon::cli {

void print_blocker_hints(const std::vector<blocker>& blockers) {
  if (output().level == verbosity::quiet) return;
  for (const auto& b : blockers) {
    if (b.subject != blocker_subject::control || b.available != enforcement_level::partial) continue;
    std::cerr << "cordon: hint: --accept " << b.subject_name() << "=partial runs with the partial level (listed in the "
              << "report's warnings)";
    if (b.control == control::memory || b.control == control::cpu || b.control == control::process_count) {
      std::cerr << "; --cgroup-parent DIR (a delegated cgroup v2 directory) makes the limit tree-wide";
    }
    std::cerr << "\n";
  }
}

}  // namespace cordon::cli
