// vcs_scan.h — the repositories under a writable root, as git finds them,
// and what the command changed in them (docs/deferred-execution.md).
//
// At launch the scan lists what must be bound read-only (a repository's
// config, hooks and the files that send git elsewhere) and records a stamp of
// every file git would read code or configuration from. After the run the
// same scan runs again, whole, within the same bound, and every repository,
// gitlink, hook, executable config key or start-up file that is new or whose
// stamp differs is a finding. A stamp is the device, inode, ctime (which no
// unprivileged call can set back) and a SHA-256 of the content (of the
// listing, for a directory): restoring an mtime fools nothing here.
//
// What counts as a repository is git's discovery (gitrepository-layout(5),
// git-rev-parse(1) "--git-dir"): a `.git` directory, a `.git` file
// ("gitdir: <path>", from --separate-git-dir, submodules and worktrees) and
// the directory it names, a directory holding HEAD, objects/ and refs/ (an
// implicit bare repository, which git uses when run inside it), linked
// worktrees (<git_dir>/worktrees/*) and submodules (<git_dir>/modules/*).
// POSIX only: opendir(3), lstat(2).
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "cordon/launch.h"
#include "core/git_rules.h"

namespace cordon::vcs {

// The bound of one walk: past it the scan is incomplete (a blocker at
// launch, a scan_incomplete finding after the run), never silently short.
inline constexpr std::uint64_t max_directories = 200000;
inline constexpr std::size_t max_depth = 64;  // directories below the root
// Past these the subtree (or repository) is a gap, named: what one directory
// may hold, the config bytes one scan reads (each file at most
// core::max_config_bytes), the gaps kept (one more says how many were left
// out) and the wall time of one scan. With them a scan's own memory stays
// under a bound whatever the workspace holds (docs/deferred-execution.md,
// "The bound").
inline constexpr std::size_t max_directory_entries = 100000;
inline constexpr std::uint64_t max_scan_config_bytes = 32 << 20;
inline constexpr std::size_t max_gaps = 1000;
inline constexpr int scan_time_budget_seconds = 30;
// How far the child that runs one scan may grow above the process it was
// forked from, in bytes (address space and data segment alike,
// posix/bounded_scan.h). The largest workspace the scan accepts (200,000
// directories of 255-byte names, their listings twice, 32 MiB of config)
// stays under it.
inline constexpr std::uint64_t scan_memory_bound_bytes = 256ull << 20;

// A part of the tree the scan did not see: a directory it could not list or
// an entry it could not stat (`path`), a config it could not read or that
// broke a bound, or where a budget ran out, and why.
struct scan_gap {
  std::string path;
  std::string reason;
  bool refuses_launch = false;  // a config git would read and cordon cannot: the run is refused at launch
};

// What a file was when it was looked at. `present` false: it did not exist.
struct file_stamp {
  bool present = false;
  dev_t device = 0;
  ino_t inode = 0;
  timespec changed{};  // ctime
  mode_t mode = 0;
  std::string digest;  // SHA-256 of a file's content (first 1 MiB and its size), a link's target, a directory's listing
  bool operator==(const file_stamp& o) const;
};
file_stamp stamp_of(const std::string& path);

// One repository as git would use it.
struct repository_record {
  std::string kind;  // "git_directory", "git_file", "bare", "gitdir" (named by a .git file)
  std::map<std::string, file_stamp> metadata;  // config, config.worktree, commondir, hooks/, includes, hooksPath
  std::vector<std::string> gitlinks;           // of its index, as recorded
  std::vector<std::string> keys;               // executable config: "key\tvalue\tfile"
  // git's in-progress operation state (rebase-merge/, rebase-apply/,
  // sequencer/; present or not), and the `exec` lines of its todo lists
  // ("todo file\tline"), which git runs on --continue.
  std::map<std::string, file_stamp> operation;
  std::vector<std::string> exec_lines;
};

// Directory listings kept from one scan for the next (docs/deferred-execution.md,
// "Cost"): keyed on the directory's identity (device, inode) with its ctime
// when listed. A directory whose ctime is unchanged gained, lost or renamed
// no entry (every such change sets ctime to the current time, and no
// unprivileged call sets it back), so the next scan takes its entries from
// here instead of reading it: one lstat(2) per directory instead of an
// open, a getdents and a close. A listing is kept only when its ctime was
// already `settle` older than the clock when it was read (a change in the
// same clock tick, or on a file system with coarse timestamps, would
// otherwise leave ctime equal), only on file systems whose ctime the kernel
// sets itself (ext2/3/4, xfs, btrfs, tmpfs: not FUSE, not network file
// systems), and only what the walk uses (subdirectories, entries of unknown
// type, `.git`, `HEAD`, `objects`, `refs`).
struct listing_cache {
  struct listing {
    timespec changed{};
    std::vector<std::pair<std::string, unsigned char>> entries;  // name, readdir type
  };
  std::map<std::pair<dev_t, ino_t>, listing> listings;
  std::uint64_t reused = 0;  // listings taken from the previous scan by the scan that made this one
};
inline constexpr std::int64_t listing_settle_ns = 1000000000;  // 1 s: covers file systems with 1 s ctime

// Directory listings a caller vouches for, by resolved path: nullptr for a
// path it does not hold. Each holds, sorted, at least the entries the walk
// uses with their readdir type known (every subdirectory as DT_DIR, and
// `.git`, `HEAD`, `objects`, `refs`). An inotify watch set kept current
// (linux/directory_watch.h, trusted() after a refresh() that left no doubt)
// is the one source: the walk takes its listings with no lstat(2) and no
// read, and still stamps everything git reads in each repository it finds
// (a write through a shared mmap(2) raises no event).
using trusted_listings =
    std::function<const std::vector<std::pair<std::string, unsigned char>>*(const std::string& path)>;

struct vcs_scan {
  std::vector<std::string> protect;  // existing paths to re-bind read-only
  std::vector<std::string> missing;  // hooks/, config or an include that should exist but does not, or cannot be read
  std::vector<std::string> absent_gitmodules;  // repositories without a .gitmodules
  // Files git would follow to other config and hooks (commondir,
  // config.worktree, an include) that do not exist: a mount cannot cover
  // them, so the launcher checks after the run whether the command created them.
  std::vector<std::string> absent_redirects;
  std::vector<std::string> repositories;                  // every .git (directory or file) and bare repository found
  // Where the walk found each repository, in its order: "d" and the
  // directory holding a .git directory, "f" one holding a .git file, "b" a
  // bare repository (rescan_places finds them again without a walk).
  std::vector<std::string> places;
  std::map<std::string, repository_record> records;       // by repository path (also the gitdirs .git files name)
  std::map<std::string, file_stamp> startup;              // start-up paths under the root (present or not)
  std::uint64_t entries_seen = 0;  // directories visited
  bool truncated = false;          // more than max_directories, or deeper than max_depth
  std::vector<scan_gap> incomplete;  // what was not seen, named (at most max_gaps + 1)
  // Agent and editor configuration (watch_agent_config): each path with its
  // stamp at launch and whether it runs code without review (protected, or
  // watched when absent) or is only reported when created or changed.
  struct agent_path {
    file_stamp stamp;
    bool runs_code = false;
  };
  std::map<std::string, agent_path> agent;
  std::uint64_t config_bytes = 0;    // config read so far (max_scan_config_bytes)
  listing_cache listings;            // for the next scan of the same root (changes_since uses it)
};

// Scans `root` (an existing directory, resolved). `home` is the caller's home
// directory (for `~/` in include paths and for the start-up paths: shells'
// ~/.profile, ~/.bashrc, ~/.zlogin, ~/.bash_logout..., git's ~/.gitconfig and
// ~/.config/git/, ~/.config/systemd/user, ~/.config/autostart,
// ~/.local/bin), "" when unknown: existing start-up paths beneath the root
// are added to `protect`, absent ones are watched. `reuse`: the listings of
// an earlier scan (listing_cache); a directory whose identity and ctime match
// is not read again. `settle_ns`: how much older than the clock a
// directory's ctime must be for its listing to be kept for a later scan.
// The walk runs in a child whose memory may grow by at most `memory_bound`
// bytes (posix/bounded_scan.h, vcs::scan_memory_bound_bytes, 256 MiB):
// past it, or when the child fails, the scan is one gap at `root` that
// refuses the launch (a scan_incomplete finding after the run).
// `store_dir` (posix/listing_store.h), when not "": the child also reuses
// the listings stored there for `root` and replaces them with its own, and
// the scan returned carries none (only listings.reused): the listings never
// cross into the caller's memory. `vouched` (trusted_listings), when given:
// a directory it holds a listing for is taken from there, neither examined
// nor read (one it does not hold is read as above), and the store is
// neither read nor written; the scan's child sees the caller's listings as
// they were at the fork.
vcs_scan scan_vcs_metadata(const std::string& root, const std::string& home,
                           std::uint64_t max_entries = max_directories, const listing_cache* reuse = nullptr,
                           std::int64_t settle_ns = listing_settle_ns,
                           std::uint64_t memory_bound = scan_memory_bound_bytes, const std::string& store_dir = "",
                           const trusted_listings* vouched = nullptr);

// The repositories `earlier` (a scan of `root`) found, found again at the
// same places with no walk: each stamped, protected and read as a walk
// finding it there does, the start-up paths again, `entries_seen` and
// `places` as `earlier`'s. Only for a caller that knows no directory under
// `root` gained, lost or renamed an entry since `earlier` was taken (a
// watch set whose refresh() listed nothing again, linux/watched_scan.h):
// what git reads there may have changed (it is read again), where git
// finds a repository has not. In the scan's memory-bounded child, as
// scan_vcs_metadata.
vcs_scan rescan_places(const std::string& root, const std::string& home, const vcs_scan& earlier,
                       std::uint64_t memory_bound = scan_memory_bound_bytes);

// The host's own git configuration (core/git_sources.h: system, global,
// XDG, GIT_CONFIG_* and their includes, read once per launch): each of its
// files inside `root` is protected (or watched when absent), and each path a
// variable of it names inside `root` (a global core.hooksPath of ".githooks"
// names one in every repository's work tree) is protected or watched and
// stamped in that repository's record, so that a change is a finding. A
// file of it cordon cannot read is a gap that refuses the launch.
void apply_host_config(const std::string& root, const core::git_config_tree& host, const std::string& home,
                       vcs_scan& scan);

// Agent and editor configuration at the top of `root` and of each
// repository's work tree found in it (docs/deferred-execution.md, "Agent and
// editor configuration"): what runs code without a review moment (agent
// settings with hooks, MCP server lists, .vscode/, .idea/, .envrc,
// devcontainer definitions) is protected when it exists, and its creation is
// an agent_config finding; instruction and CI files (AGENTS.md, CLAUDE.md,
// .github/workflows/, ...) are stamped, and their creation or change is an
// instruction_file finding. A path listed itself in `opted_out` (the
// policy's writable roots: `--rw .vscode` opts .vscode out) stays writable;
// its creation or change is still an agent_config finding.
void watch_agent_config(const std::string& root, const std::vector<std::string>& opted_out, vcs_scan& scan);

// The protections and record of one git directory found some other way (the
// common directory of a linked worktree, linux/git_worktrees.h), exactly as
// scan_vcs_metadata() adds them for a .git directory.
void scan_git_directory(const std::string& git_dir, const std::string& home, vcs_scan& scan);

// Scans `root` again and compares with `before`: one finding per new
// repository, changed metadata file, new executable key, hook, gitlink and
// start-up path, and one scan_incomplete finding per gap (the bound, a
// directory it could not list, a config it could not read); `evidence.entries`
// and `complete` are set (false with any gap). Repositories of
// `before` outside `root` (added by scan_git_directory) are stamped again
// one by one. The listings of `before` are reused (listing_cache): a
// directory whose ctime moved is read again, whatever its mtime says.
// `after`, when given, receives the new scan (its listings serve the next run).
// `store_dir`: as scan_vcs_metadata's (the listings of the store are reused
// and replaced by the new scan's, in the scan's child). `vouched`: as
// scan_vcs_metadata's (a watch set's listings after its refresh(): the
// post-run scan reads no directory, and still stamps what git reads).
void changes_since(const std::string& root, const vcs_scan& before, const std::string& home,
                   deferred_execution_evidence& evidence, vcs_scan* after = nullptr,
                   const std::string& store_dir = "", const trusted_listings* vouched = nullptr);

// changes_since's comparison with the new scan `now` of `root` taken by the
// caller (rescan_places, or a scan from a watch set's listings).
void changes_between(const std::string& root, const vcs_scan& before, vcs_scan now, const std::string& home,
                     deferred_execution_evidence& evidence, vcs_scan* after = nullptr);

}  // namespace cordon::vcs
