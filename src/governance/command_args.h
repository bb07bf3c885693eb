// command_args.h — a segment's argv read as its program reads it: getopt_long
// (clusters of short options, long options, their unique abbreviations,
// `--opt=value`, options after operands, `--`), and git's global options
// before the subcommand. Used by the rules' command matching
// (capability_policy.cpp) and by the splitter's reading of programs that run
// other commands (program_commands.cpp). docs/governance.md, "Rules".
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/governance/capability_policy.h"
#include "cordon/governance/shell_split.h"

namespace cordon::governance::detail {

// What a program's option parser knows. Names are written with their dashes:
// "-x" (a short option), "--name" (a long one), "-name" (a one-dash word
// option such as find's "-delete", read as one option, never as a cluster).
struct option_syntax {
  std::vector<std::string> with_value;      // the value is the rest of the word, after "=", or the next word
  std::vector<std::string> optional_value;  // the value is only the rest of the word or after "="
  std::vector<std::string> long_names;      // other long options (to resolve abbreviations)
  bool stop_at_operand = false;             // POSIX order (xargs): the first operand ends the options
  bool abbreviations = true;                // "--rec" stands for the one long option it starts
};

struct argument {
  enum class kind { option, operand, unknown };  // unknown: a dynamic word before "--"
  kind what = kind::operand;
  std::string name;     // an option's name ("-R", "--recursive" when "--rec" resolved to it, else as written)
  std::string written;  // the option as written, up to "=" ("--rec"); an operand's text
  std::optional<std::string> value;
  bool dynamic = false;  // the operand or the value is expanded at run time
  std::size_t index = 0;
};

// The arguments of `words` from `from` on. `end` (optional): the index of the
// first word not read as an option or its value (stop_at_operand), or
// words.size().
std::vector<argument> read_arguments(const std::vector<shell_word>& words, std::size_t from, const option_syntax& syntax,
                                     std::size_t* end = nullptr);

// git's global options before the subcommand ("-C dir", "-c key=value",
// "--git-dir=x", "--no-pager", ...).
struct git_globals {
  std::size_t subcommand = 0;            // index of the subcommand word (words.size() when there is none)
  std::vector<shell_word> configs;       // the values of -c (key=value)
  std::vector<shell_word> config_envs;   // the values of --config-env (key=VARIABLE)
  bool dynamic = false;                  // a dynamic word among them: the subcommand is unknown
};
git_globals read_git_globals(const std::vector<shell_word>& words);

// Does a command pattern ("git reset") match the start of the segment's
// words? The first word is compared with argv[0]'s basename when it has no
// "/"; after "git", git's global options are skipped. `next`: the index after
// the matched words. `cautious` (deny and require_approval rules): a dynamic
// word matches the rest of the pattern, and `next` is then words.size().
bool command_words_match(std::string_view pattern, const shell_segment& segment, bool cautious, std::size_t& next);

// Does a command form (capability_rule::command_forms) match the segment?
bool command_form_matches(const command_form& form, const shell_segment& segment, bool cautious);

// Checks a form's names (invalid_policy at `where`).
result<void> check_command_form(const command_form& form, const std::string& where);

}  // namespace cordon::governance::detail
