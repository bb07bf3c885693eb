// git_worktrees.h — repositories whose metadata lies outside the writable
// roots, and repositories without a hooks directory (docs/workloads.md,
// "Git worktrees and repositories").
//
// A linked worktree (`git worktree add`, gitrepository-layout(5)) has a
// `.git` file, "gitdir: <main>/.git/worktrees/<name>", and that directory's
// `commondir` names the main repository's .git, which holds the objects,
// refs, config and hooks. A worktree created on the host inside the
// workspace therefore needs the main .git too, or every git command fails
// with "not a git repository". The main .git is added as a writable root
// with exactly the protections the main repository has when it is the
// workspace (hooks, config, commondir, config.worktree, modules, and every
// linked worktree's commondir read-only), and the report says so.
#pragma once

#include <string>
#include <vector>

#include "linux/paths.h"
#include "posix/vcs_scan.h"

namespace cordon::linux_impl {

using vcs::vcs_scan;

struct worktree_roots {
  std::vector<std::string> writable;  // common git directories to add as writable roots
  std::vector<std::string> notes;     // one warning per added root
};

// For every `.git` file in `scan` whose repository (the gitdir and its
// commondir) is not beneath one of `writable_roots` or `readable_roots`
// (resolved host paths): adds the common directory to `out.writable` (once)
// and its protections to `scan`. For every repository (found or added),
// protects each linked worktree's commondir and gitdir files
// (<git_dir>/worktrees/*/) and watches for an absent config.worktree
// there. A `.git` file that does not name an existing directory is left
// alone: git fails on it by itself, inside as outside.
void add_worktree_repositories(const std::vector<std::string>& writable_roots,
                               const std::vector<std::string>& readable_roots, const std::string& home,
                               vcs_scan& scan, worktree_roots& out);

// Repositories without a hooks directory (cloned with an empty template, or
// made by a tool): creates each missing `<git_dir>/hooks` listed in
// `scan.missing` (mode 0755, owned like its git directory) and moves it to
// `scan.protect`, so that it is bound read-only like any other; `notes`
// gets one line per directory created. Other missing entries (config, a
// core.hooksPath) stay in `scan.missing`, as does a hooks directory that
// could not be created.
void create_missing_hooks(vcs_scan& scan, std::vector<std::string>& notes);

}  // namespace cordon::linux_impl
