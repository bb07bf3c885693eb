// src/windows/command_line.h — finding the executable and quoting its
// command line. Windows passes one string; the child's C runtime splits it
// (CommandLineToArgvW rules), so the quoting must invert exactly that split.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cordon/windows/compile.h"
#include "cordon/windows/host_facts.h"
#include "cordon/windows/plan.h"

namespace cordon::windows::detail {

// Quotes one argument so that CommandLineToArgvW returns it unchanged:
// arguments without space, tab, newline or '"' stay bare; others are wrapped
// in quotes, with backslashes doubled before a quote and before the closing
// quote. An empty argument becomes "".
std::string quote_argument(const std::string& arg);

// The whole command line: quoted arguments joined by one space. argv[0] is
// quoted too (the child sees it as its own name).
std::string build_command_line(const std::vector<std::string>& argv);

// The paths resolve_command() tries for argv[0], in its order.
std::vector<std::string> command_candidates(const std::string& argv0, const std::string& working_directory,
                                            const std::string& path_variable);

// Finds argv[0] as CreateProcess would not: explicitly, in this order, with no
// current-directory search. A name with a separator or drive is taken as a
// path (relative to `working_directory`); a bare name is searched in the
// plan environment's PATH (';'-separated), trying the name as given when it
// has an extension, then each PATHEXT extension of .COM and .EXE. Batch files
// (.bat, .cmd) are refused: cmd.exe re-parses their arguments with other
// quoting rules. Problems are appended to `blockers`.
std::optional<std::string> resolve_command(const std::string& argv0, const std::string& working_directory,
                                           const std::string& path_variable, const host_facts& facts,
                                           std::vector<blocker>& blockers);

}  // namespace cordon::windows::detail
