// cordon/governance/shell_split.h — a conservative splitter of shell command
// lines into simple commands, for judging a `shell` request segment by
// segment (docs/governance.md, "Shell commands").
//
// It understands a deliberately small part of POSIX sh, the part whose
// meaning it can know without running anything: words with single quotes,
// double quotes and backslashes; the separators `|`, `|&`, `&&`, `||`, `;`,
// `&` and newlines; subshells `( ... )` and groups `{ ...; }`; `!`;
// redirections (`>`, `>>`, `<`, `>|`, `&>`, `N>`, `N>&M`, `<<<`); here-docs
// whose delimiter is quoted or whose body has no expansion; assignments
// before a command (`A=1 cmd`); `#` comments; the wrappers `env`, `command`,
// `exec`, `nohup`, `time`, `nice`, `timeout`, `stdbuf` (the wrapped command is
// the segment); `sh|bash|dash|zsh|ksh -c SCRIPT` (SCRIPT is split in turn,
// up to 8 levels); and the programs that run a command they are given
// (src/governance/program_commands.h: `xargs`, `eval`, `find -exec`, git's
// `-c` of a program-naming key, `git grep -O`, `git rebase --exec`, ...),
// whose literal command is a segment of its own.
//
// Everything else makes the result `uncertain`, with a reason: command
// substitution `$(...)` and backticks, arithmetic `$((...))`, process
// substitution `<(...)`, here-docs with expansions, `source`/`.`, what those
// programs run where it is not literal (`eval "$X"`, `find -exec "$P"`, sed's
// `e` command, awk's `system()`), `hash -p`, shell keywords (`if`, `for`, `while`, `case`, `coproc`,
// functions, `[[`), a variable or glob in the command word, a command
// substitution inside an array subscript even in quotes (`'a[$(cmd)]'`: bash
// runs it in let, printf -v, read, test -v, declare), unbalanced quotes
// or parentheses, and any operator it does not know. An uncertain command is
// never allowed automatically (capability_policy.h turns it into
// require_approval). The scripts of `$(...)`, backticks, `<(...)` and
// `>(...)`, and the commands in the bodies of `if`/`while`/`until`/`for`/
// `case`/`[[ ]]`/`coproc` and of function definitions, are still split into
// segments (a deny rule sees them). `$'...'` is
// decoded; `env -S` of plain words is split in its place.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace cordon::governance {

// One word of a simple command after quote removal. `dynamic` when part of it
// is expanded at run time (an unquoted or double-quoted `$NAME`, `${...}`, an
// unquoted glob `*?[`, a leading `~`): its value is unknown here.
struct shell_word {
  std::string text;  // the word as written after quote removal (expansions left as written)
  bool dynamic = false;
  bool operator==(const shell_word&) const = default;
};

// A redirection of a segment to or from a file (fd duplications such as
// `2>&1` and `>/dev/null` are not listed).
struct shell_redirect {
  bool writes = false;  // >, >>, >|, &>; false for <
  shell_word target;
  bool operator==(const shell_redirect&) const = default;
};

struct shell_segment {
  std::vector<shell_word> words;           // argv; words[0] is the command
  std::vector<shell_redirect> redirects;
  bool operator==(const shell_segment&) const = default;
};

struct shell_split {
  std::vector<shell_segment> segments;  // every simple command found, in order
  std::vector<std::string> uncertain;   // why the split is not certain; empty = certain
  bool certain() const noexcept { return uncertain.empty(); }
};

// Splits `command` as `sh -c` would parse it. Never throws except
// std::bad_alloc; never fails: what it cannot understand goes to `uncertain`
// (the segments found so far are still listed so that a deny rule can fire).
shell_split split_shell_command(std::string_view command);

// For argv requests: when argv is `SHELL [-flags]c SCRIPT ...` (SHELL one of
// sh, bash, dash, zsh, ksh, by basename) the script is split; otherwise argv
// is one certain segment of literal words (wrappers are unwrapped the same way).
shell_split split_argv(const std::vector<std::string>& argv);

}  // namespace cordon::governance
