// program_commands.h — programs that run other commands, read for what they
// run (docs/governance.md, "Default rules for coding agents"): xargs, eval, find
// -exec/-execdir/-ok/-okdir, git's -c of a key that names a program, git grep
// -O, git rebase --exec, git bisect run, git submodule foreach, npx -c /
// npm exec --call; python's options before -m (the segment becomes "python
// -m MODULE ..."); git -c remote.*.push / remote.*.mirror on a push (the
// refspec or --mirror joins the segment); and the
// programs whose scripts can run commands the splitter cannot see: sed (the e
// command, the s///e flag), awk (system(), pipes, getline from a command).
// The splitter (shell_split.cpp) judges a literal command as a segment of its
// own and turns what is not literal into a doubt (require_approval).
#pragma once

#include <string>
#include <vector>

#include "cordon/governance/shell_split.h"

namespace cordon::governance::detail {

struct program_run {
  bool script = false;            // true: `text` is a shell command line; false: `words` is an argv
  std::vector<shell_word> words;  // an argv ("{}" stands for a path find found)
  std::string text;
};

struct program_reading {
  std::vector<program_run> runs;    // the literal commands the program runs
  std::vector<std::string> doubts;  // what it runs that is not literal, why
  bool replaced = false;            // xargs: the segment now holds the command it runs; read it again
  bool launcher = false;            // eval: the segment is nothing but what it runs
};

// Reads `segment` (wrappers already unwrapped; its command word literal). May
// rewrite it: xargs becomes the command it runs, with one dynamic word for
// the input it appends; find loses its -exec clauses, which become runs.
program_reading read_program(shell_segment& segment);

// The commands of a sed script: does one of them run a command (`e`, the
// `e` flag of `s`)? Also true for a script this reader cannot follow.
bool sed_script_runs_commands(const std::string& script);

// Does an awk program run a command (system(), `|` into or from a command,
// `|&`, `@load`)? Conservative: a `|` it cannot place counts.
bool awk_program_runs_commands(const std::string& program);

}  // namespace cordon::governance::detail
