// Usage errors that name what was typed and what would have been accepted:
// CLI11 alone says "A subcommand is required" for `cordon rnu` and prints the
// main help for `cordon rnu --help`.
#include <algorithm>
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

// Whether `arg` ("--net", "--net=x", "-v") names an option of `level` or of
// a level above it (cordon's own -v, -q, --color fall through to every level).
const CLI::Option* option_for(const command_path& path, std::size_t depth, const std::string& arg) {
  const std::string name = arg.substr(0, arg.find('='));
  for (std::size_t i = depth + 1; i-- > 0;) {
    if (const CLI::Option* o = path.apps[i]->get_option_no_throw(name)) return o;
  }
  return nullptr;
}

// Levenshtein distance, for the "did you mean" hint (option names are short).
std::size_t distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The option name of `level` closest to `typed`, when it is close enough to
// be a typo (at most a third of the name differs); "" otherwise.
std::string nearest_option(const CLI::App& level, const std::string& typed) {
  std::string best;
  std::size_t best_distance = typed.size() / 3 + 1;
  for (const CLI::Option* o : level.get_options()) {
    std::vector<std::string> names;
    for (const auto& l : o->get_lnames()) names.push_back("--" + l);
    for (const auto& s : o->get_snames()) names.push_back("-" + s);
    for (const auto& n : names) {
      const std::size_t d = distance(typed, n);
      if (d < best_distance) {
        best = n;
        best_distance = d;
      }
    }
  }
  return best;
}

}  // namespace

std::string unknown_option_message(const CLI::App& app, const std::vector<std::string>& args) {
  const command_path path = walk(app, args);
  // The first word before "--" that looks like an option and names none: the
  // walk skips the subcommand words; a known option's value is skipped too.
  std::size_t depth = 0;
  bool value_next = false;
  for (const auto& arg : args) {
    if (arg == "--") break;
    if (value_next) {
      value_next = false;
      continue;
    }
    if (depth + 1 < path.apps.size() && path.apps[depth + 1]->check_name(arg)) {
      ++depth;
      continue;
    }
    if (arg.size() < 2 || arg.front() != '-') {
      if (depth + 1 == path.apps.size()) break;  // the leaf's positionals (a command) start here
      continue;
    }
    if (const CLI::Option* known = option_for(path, depth, arg)) {
      value_next = arg.find('=') == std::string::npos && known->get_items_expected_min() > 0;
      continue;
    }
    const std::string typed = arg.substr(0, arg.find('='));
    const std::string hint = nearest_option(*path.apps[depth], typed);
    const std::string command = spelled({{path.apps.begin(), path.apps.begin() + static_cast<std::ptrdiff_t>(depth) + 1}, {}});
    return "cordon: usage_error: unknown option '" + typed + "' for " + command +
           (hint.empty() ? "" : " (did you mean " + hint + "?)") + "; see " + command + " --help";
  }
  return "";
}

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

void print_blocker_hints(const std::vector<blocker>& blockers, bool run_flags) {
  if (output().level == verbosity::quiet) return;
  for (const auto& b : blockers) {
    if (b.subject != blocker_subject::control || b.available != enforcement_level::partial) continue;
    if (!run_flags) {
      // Only the policy file can say it: this command has neither --accept nor --cgroup-parent.
      std::cerr << "cordon: hint: \"enforcement\": {\"" << b.subject_name()
                << "\": \"partial\"} in the policy runs with the partial level (docs/policy.md, \"Enforcement requirements\")\n";
      continue;
    }
    std::cerr << "cordon: hint: --accept " << b.subject_name() << "=partial runs with the partial level (listed in the "
              << "report's warnings)";
    if (b.control == control::memory || b.control == control::cpu || b.control == control::process_count) {
      std::cerr << "; --cgroup-parent DIR (a delegated cgroup v2 directory) makes the limit tree-wide";
    }
    std::cerr << "\n";
  }
}

}  // namespace cordon::cli
