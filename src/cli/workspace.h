// workspace.h — choosing and checking the workspace of `cordon run`.
#pragma once

#include <string>

#include "cordon/result.h"

namespace cordon::cli {

struct workspace_choice {
  std::string workspace;          // absolute, lexically normalized, exists
  std::string working_directory;  // where the command starts
  std::string reason;             // "current directory", "git repository root", "--workspace"
};

// The workspace for a run. With --workspace: that directory (made absolute
// against `cwd`, normalized, and required to exist). Without: the top of the
// git work tree that contains `cwd`, when there is one that is not a refused
// directory, else `cwd` itself. The command starts in `cwd` when that lies
// inside the workspace, else in the workspace.
// Errors (usage_error): the directory does not exist or is not a directory; it
// is "/", a system directory (/etc, /usr, /var, ...), a shared temporary root
// (/tmp, /var/tmp, /dev/shm) or the user's home directory itself, which a
// built-in profile would make writable as a whole. Also (unless `force`,
// the CLI's --force-workspace) any directory inside a system tree (/etc,
// /usr, /var/lib, /run, ...) or inside a home's credential and start-up
// folders (~/.ssh, ~/.gnupg, ~/.aws, ~/.config/systemd, ~/.local/bin, ...,
// for the caller's home and /root).
result<workspace_choice> choose_workspace(const std::string& requested, const std::string& cwd,
                                          const std::string& home, bool force = false);

}  // namespace cordon::cli
