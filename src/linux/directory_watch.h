// directory_watch.h — an inotify(7) watch set over one writable root that
// keeps every directory's listing current in memory, so that a scan of the
// root reads again only the directories that changed since the last look
// (docs/deferred-execution.md, "Why a pooled run is no cheaper than a cold
// one": the mechanism a pool's long-lived process holds, one per writable
// root, linux/pool_watch.h).
//
// No change can fall between a listing and its watch: every directory is
// watched (inotify_add_watch(2)) before its listing is read, so an entry
// made after the listing raises an event, and one made before is in it. An
// event on a directory (an entry created, removed, renamed in or out, its
// own attributes, an entry written) has it listed again at the next
// refresh(); a subdirectory new in that listing (made, or renamed into
// place with a whole tree below it) is watched and listed whole, the same
// way. inotify reports on inodes, so a change made through another mount
// namespace (the sandbox's view of the root) raises the same events.
//
// What it does not see, by design: the content of files (a write through a
// shared mmap(2) raises no event while the mapping lives), so what git
// reads in a repository is stamped again by the scan every time; entries
// inside `.git` directories (not entered, as the scan); a mount made on the
// host over a watched directory after it was listed (no entry changes: the
// host's own act; a sandbox's mounts are in its own namespace and change
// nothing the host's git sees). Whenever it cannot vouch for every listing —
// the kernel dropped events (IN_Q_OVERFLOW), a watch was refused (ENOSPC:
// fs.inotify.max_user_watches, or another error), a directory could not be
// listed, the root itself was removed, moved or unmounted, events kept
// coming past 1,024 reads of the queue in one refresh, more than
// vcs::max_directories directories or deeper than vcs::max_depth — it says
// so (`doubt`), and the caller must fall back to the full walk; it never
// answers for a tree it did not see.
//
// Memory: one watch per directory in the kernel (about 100 bytes of slab
// each, and the directory's inode kept cached), and per directory its path
// and the names of the entries the scan uses (subdirectories, `.git`,
// `HEAD`, `objects`, `refs`), at most vcs::max_directories of them: 20 MB
// of this process at 150,000 directories (docs/benchmarks.md, "Workspace
// size: an inotify watch set"). Linux only: inotify_init1(2).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cordon/result.h"
#include "posix/unique_fd.h"
#include "posix/vcs_scan.h"

namespace cordon::linux_impl {

// What one directory holds, as the scan uses it (name, readdir type), sorted.
using watched_entries = std::vector<std::pair<std::string, unsigned char>>;

class directory_watch {
 public:
  // Watches `root` (an existing directory, resolved) and every directory
  // below it, each before its listing is read; `max_directories` bounds the
  // set (vcs::max_directories; tests pass less). Errors: io_error with errno
  // (inotify_init1: EMFILE past fs.inotify.max_user_instances). A tree the
  // set cannot cover whole is not an error: the result holds the doubt.
  static result<directory_watch> open(const std::string& root, std::uint64_t max_directories);

  // Reads every queued event and lists again each directory with one (a
  // new subdirectory whole). Returns the directories whose listing was read
  // again, by path, sorted (empty: nothing under the root changed since the
  // last refresh). Once in doubt (above) it stays in doubt: open() a new set.
  std::vector<std::string> refresh();

  // Why the listings cannot be trusted, or "" while they can.
  const std::string& doubt() const noexcept { return doubt_; }
  // The listing of a watched directory (a resolved path below the root, or
  // the root), or nullptr when it is not one.
  const watched_entries* listing(const std::string& path) const;
  // How many directories are watched.
  std::size_t size() const noexcept { return nodes_.size(); }
  // The listings as the repository scan takes them (vcs::trusted_listings:
  // scan_vcs_metadata and changes_since read no directory this set holds).
  // Only while doubt() is empty, after a refresh(), and while this set
  // lives and is not refreshed again (it reads the set as it is when called).
  vcs::trusted_listings trusted() const {
    return [this](const std::string& path) { return listing(path); };
  }
  // A copy of every listing, by path (for tests and benchmarks).
  std::map<std::string, watched_entries> listings() const;
  const std::string& root() const noexcept { return root_; }

 private:
  directory_watch() = default;
  // Watches `path` and lists it; its new subdirectories likewise (depth first).
  void watch_tree(const std::string& path, std::size_t depth);
  // Forgets `path` and everything listed below it (their watches stay until
  // the kernel drops them or the path is watched again).
  void forget_tree(const std::string& path);
  void relist(const std::string& path);
  void set_doubt(std::string why);

  unique_fd fd_;
  std::string root_;
  std::uint64_t max_directories_ = 0;
  struct node {
    watched_entries entries;
    int wd = -1;             // its watch descriptor
    std::size_t depth = 0;   // levels below the root
  };
  std::map<std::string, node> nodes_;  // by path: each path held once
  std::unordered_map<int, const std::string*> paths_;  // watch descriptor -> its node's key
  std::vector<std::string> touched_;          // listed during this open() or refresh()
  std::string doubt_;
};

}  // namespace cordon::linux_impl
