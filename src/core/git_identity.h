// git_identity.h — the user's git identity inside a built-in profile
// (docs/workloads.md, "Environment").
//
// Inside the sandbox HOME is /tmp, so git finds no ~/.gitconfig and `git
// commit` fails with "Author identity unknown". Showing the whole file would
// show what else it holds (credential helpers, url.insteadOf rewrites and
// http.extraHeader lines that carry tokens, core.sshCommand), so only the
// identity is passed: user.name and user.email become GIT_AUTHOR_* and
// GIT_COMMITTER_* in environment.set.
#pragma once

#include <string>

#include "cordon/policy.h"

namespace cordon::core {

// Reads user.name and user.email from the [user] section of `home`/.gitconfig
// and, if absent there, of $XDG_CONFIG_HOME/git/config (~/.config/git/config)
// (plain key = value lines; include directives are not followed, quotes are
// removed), and adds GIT_AUTHOR_NAME/GIT_COMMITTER_NAME and
// GIT_AUTHOR_EMAIL/GIT_COMMITTER_EMAIL to policy.environment.set unless the
// policy sets or passes any of them already. No file, no identity: nothing
// changes. Never fails.
void add_git_identity(sandbox_policy& policy, const std::string& home);

}  // namespace cordon::core
