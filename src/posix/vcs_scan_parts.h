// vcs_scan_parts.h — what the files of the repository scan share
// (posix/vcs_scan.h): the file system reads (lstat, listings, bounded reads,
// gaps), and git's repository as the scan protects and stamps it. Not a
// public surface: vcs_scan.h is.
//   vcs_scan_stamp.cpp       reads, listings and stamps
//   vcs_scan_repository.cpp  one git directory: its config, hooks, redirects, operation state
//   vcs_scan_walk.cpp        the walk of a writable root (and the listings it keeps)
//   vcs_scan_compare.cpp     the post-run check: a new scan against the launch's
//   vcs_scan.cpp             the host's git config and agent files applied to a scan
#pragma once

#include <sys/stat.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "posix/vcs_scan.h"

namespace cordon::vcs::scan_parts {

bool lstat_mode(const std::string& path, mode_t& mode);
bool is_dir(const std::string& path);
// `path` is `root` or below it.
bool within(const std::string& path, const std::string& root);
std::string join(const std::string& dir, std::string_view name);
std::string parent(const std::string& path);
// At most `limit` bytes of a regular file (not following a link); "" when it cannot be opened.
std::string read_head(const std::string& path, std::size_t limit);

// Names a gap (at most max_gaps, then one saying more were left out).
void add_gap(vcs_scan& scan, const std::string& path, std::string reason, bool refuses_launch = false);
// Each "<path> (<why>)" of a git_config_tree's `unreadable` as a gap that
// refuses the launch: the path, and `what` with the why.
void add_config_gaps(vcs_scan& scan, const std::vector<std::string>& unreadable, const std::string& what);

// A directory's entries, sorted, with readdir's type (DT_UNKNOWN when the
// file system does not say). `error`, when given, says why the listing is
// not whole: it cannot be opened or read, or holds more than max_directory_entries.
using entry_list = std::vector<std::pair<std::string, unsigned char>>;
entry_list sorted_entries(const std::string& dir_path, std::string* error = nullptr);
std::vector<std::string> sorted_names(const std::string& dir_path);

// A pointer file's "gitdir: <path>", resolved from `base`; "" unless it names
// an existing directory.
std::string pointer_target(const std::string& file, const std::string& base);
// `path` protected when it exists, else watched (`watch_absent`) or missing.
void add_protect_or_watch(vcs_scan& scan, const std::string& path, bool watch_absent);
// The protections and record of the git directory `git_dir` of kind `kind`
// ("git_directory", "gitdir", "bare"), and of its submodules below `depth`.
void protect_git_dir(const std::string& git_dir, const std::string& kind, const std::string& home, vcs_scan& scan,
                     int depth);
// Is `dir` (whose names are `names`, sorted) a repository by itself?
// git's is_git_directory(): HEAD, objects/ and refs/.
bool looks_bare(const std::string& dir, const std::vector<std::string>& names);

}  // namespace cordon::vcs::scan_parts
