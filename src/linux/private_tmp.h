// private_tmp.h — the private temporary directories of a run and the
// directories between them and a root mounted inside them (docs/workloads.md,
// "A workspace under /tmp").
//
// With "{run_tmp}" writable, /tmp is a new tmpfs that disappears with the
// run. A workspace below it (/tmp/job/ws) is bound into that tmpfs, and the
// directories leading to it (/tmp/job) are made there as mount points: files
// the command wrote beside the workspace (cmake -B ../build, git worktree add
// ../x, echo > ../notes.txt) would land in the tmpfs and vanish at the end
// without an error. Instead, each such directory is sealed read-only, so that
// those writes fail with EROFS while they happen.
#pragma once

#include <string>
#include <vector>

#include "linux/mount_table.h"

namespace cordon::linux_impl {

// Completes `table` (from build_mount_table()) when it has a private /tmp:
//  - under a restricted root, a private, writable /var/tmp beside it
//    (programs use both; there was none); under a full read the host's
//    /var/tmp stays as it was, read-only;
//  - for every mount beneath /tmp or /var/tmp deeper than one level, a
//    seal_read_only op, appended last, on the top-level directory that leads
//    to it (/tmp/job), unless something is mounted there itself.
// A readable or writable root directly in /tmp (/tmp/ws) has the private /tmp
// itself as its parent, which must stay writable: `notes` gets a line saying
// that what is written beside it is discarded with the run.
void complete_private_tmp(mount_table& table, std::vector<std::string>& notes);

}  // namespace cordon::linux_impl
