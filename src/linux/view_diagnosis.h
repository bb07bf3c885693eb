// view_diagnosis.h — naming the host path a run could not see (docs/workloads.md,
// "Toolchains outside the view").
//
// A command that exists on the host can still be missing inside: it, a
// symlink on the way to it (a venv's bin/python into ~/.pyenv), the
// interpreter of its #! line, the base interpreter a venv's pyvenv.cfg names,
// or the PATH entry it lives in may lie outside the mount table. The tool then
// only says "not found"; these functions say which host path is missing and
// which flag adds it. They only read the host (lstat, readlink, the first
// line of a file) and run after a launch failed, or once per argument.
#pragma once

#include <string>
#include <vector>

#include "linux/mount_table.h"

namespace cordon::linux_impl {

// Whether the host path `path` (absolute, symlinks in its directories
// resolved) is visible inside a sandbox built from `table`: the base (host
// root when full_root), then each op in order, the last covering one winning
// (a bind shows it, a mask or a private tmpfs hides it).
bool visible_in_view(const mount_table& table, const std::string& path);

// For a command the sandbox reported as not found: `argv0` looked up as the
// sandbox would (a name through `path_variable`, the sandbox's PATH; a path
// against `working_directory`), on the host. Returns "" when nothing on the
// host explains it (the command does not exist there either), else one
// sentence such as "/root/.pyenv/versions/3.12.1/bin/python3.12 (the
// interpreter that the symlink /w/venv/bin/python points to) is outside the
// sandbox's view; add it with --ro /root/.pyenv/versions/3.12.1". When the
// name is found on the host only in PATH entries that are not visible, those
// entries are named.
std::string explain_missing_command(const mount_table& table, const std::string& argv0,
                                    const std::string& path_variable, const std::string& working_directory);

// One warning per argument of `argv` (after argv[0]; for a shell's -c
// script, also each word of the script, split at blanks, quotes and shell
// operators without expansion: a tool call's "sh -c 'ls /srv/x'") that is an
// absolute path, or ends in one after '=' (--dir=/srv/x), that exists on the
// host but is outside the view: "argument /srv/remote.git exists on the host but is
// not visible inside the sandbox; add it with --ro /srv/remote.git"; for a
// path the policy denies, only that it is denied. Paths under /dev and /proc
// are the sandbox's own and never named. At most eight.
std::vector<std::string> arguments_outside_view(const mount_table& table, const std::vector<std::string>& argv);

}  // namespace cordon::linux_impl
