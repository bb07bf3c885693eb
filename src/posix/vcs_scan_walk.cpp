// The walk of one writable root, breadth first, within its bound, keeping
// the directory listings for the next scan (posix/vcs_scan.h, listing_cache).
#include "posix/vcs_scan_parts.h"

#include <dirent.h>
#include <time.h>
#if defined(__linux__)
#include <sys/vfs.h>
#include <linux/magic.h>
#endif

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>

#include "posix/bounded_scan.h"
#include "posix/listing_store.h"

namespace cordon::vcs {
namespace {

using namespace scan_parts;

// Start-up paths relative to the home directory: what a login or
// interactive shell sources (bash(1) INVOCATION, zsh(1) STARTUP/SHUTDOWN
// FILES, the X session scripts), git's global configuration
// (git-config(1) FILES), systemd's user units and environment
// (systemd.unit(5), environment.d(5)), desktop autostart entries (XDG
// Autostart), and ~/.local/bin, which comes first in many PATHs.
constexpr const char* kStartupPaths[] = {
    ".profile",      ".bashrc",        ".bash_profile", ".bash_login",   ".bash_logout",
    ".zshenv",       ".zprofile",      ".zshrc",        ".zlogin",       ".zlogout",
    ".xprofile",     ".xsessionrc",    ".xinitrc",      ".pam_environment",
    ".gitconfig",    ".config/git",    ".config/systemd/user",           ".config/environment.d",
    ".config/autostart",               ".local/bin",    ".config/fish/config.fish", ".config/fish/conf.d",
};

// Does the kernel set ctime itself on this file system (listing_cache)?
// FUSE and network file systems take it from a server the user may run.
bool ctime_is_kernels(const std::string& path) {
#if defined(__linux__)
  struct statfs fs {};
  if (::statfs(path.c_str(), &fs) != 0) return false;
  switch (static_cast<unsigned long>(fs.f_type)) {
    case EXT4_SUPER_MAGIC:  // also ext2 and ext3
    case XFS_SUPER_MAGIC:
    case BTRFS_SUPER_MAGIC:
    case TMPFS_MAGIC:
      return true;
    default:
      return false;
  }
#else
  (void)path;
  return false;
#endif
}

timespec clock_now() {
  timespec now{};
#if defined(CLOCK_REALTIME_COARSE)
  ::clock_gettime(CLOCK_REALTIME_COARSE, &now);  // the clock the kernel stamps ctime from
#else
  ::clock_gettime(CLOCK_REALTIME, &now);
#endif
  return now;
}

std::int64_t ns_of(const timespec& t) { return static_cast<std::int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec; }

bool kept_by_walk(const std::string& name, unsigned char type) {
  return type == DT_DIR || type == DT_UNKNOWN || name == ".git" || name == "HEAD" || name == "objects" ||
         name == "refs";
}

struct walker {
  const std::string& root;
  const std::string& home;
  vcs_scan& scan;
  std::uint64_t max_entries;
  const listing_cache* reuse = nullptr;
  // Listings a watch set vouches for (vcs::trusted_listings): taken as they
  // are, with no lstat and no read, their entries' types known.
  const trusted_listings* vouched = nullptr;
  std::int64_t settle_ns = listing_settle_ns;
  std::map<dev_t, bool> trusted{};  // ctime_is_kernels, once per device
  std::chrono::steady_clock::time_point deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(scan_time_budget_seconds);
  bool out_of_time = false;

  void found_dot_git(const std::string& dir_path, const std::string& child, bool directory) {
    scan.repositories.push_back(child);
    scan.places.push_back((directory ? "d" : "f") + dir_path);
    if (directory) {
      protect_git_dir(child, "git_directory", home, scan, 0);
    } else {
      scan.protect.push_back(child);  // a gitdir pointer must not be redirected
      repository_record& record = scan.records[child];
      record.kind = "git_file";
      record.metadata[child] = stamp_of(child);
      // The directory it names is the repository git uses: inside the root,
      // it gets the protections of a .git directory (outside, the worktree
      // rules of linux/git_worktrees.h decide).
      std::string target = pointer_target(child, dir_path);
      if (!target.empty() && within(target, root) && !scan.records.count(target)) {
        protect_git_dir(target, "gitdir", home, scan, 0);
      }
    }
    std::string gitmodules = dir_path + "/.gitmodules";
    mode_t mode = 0;
    (lstat_mode(gitmodules, mode) ? scan.protect : scan.absent_gitmodules).push_back(gitmodules);
  }

  // The subdirectories of `dir_path` to walk (names only: what the
  // recursion keeps per level), after handling what it holds itself.
  // False: it is a bare repository, or the walk must stop.
  // What `dir_path` (whose lstat is `self`, taken before it is read)
  // holds, from the earlier scan's listing when its identity and ctime
  // match, else read; a listing whose ctime has settled is kept for the next.
  entry_list entries_of(const std::string& dir_path, const struct stat& self) {
    const std::pair<dev_t, ino_t> key{self.st_dev, self.st_ino};
    auto trust = trusted.find(self.st_dev);
    if (trust == trusted.end()) trust = trusted.emplace(self.st_dev, ctime_is_kernels(dir_path)).first;
    if (!trust->second) {
      std::string error;
      entry_list entries = sorted_entries(dir_path, &error);
      if (!error.empty()) add_gap(scan, dir_path, error);  // what was listed is still looked at
      return entries;
    }
    if (reuse != nullptr) {
      auto it = reuse->listings.find(key);
      if (it != reuse->listings.end() && it->second.changed.tv_sec == self.st_ctim.tv_sec &&
          it->second.changed.tv_nsec == self.st_ctim.tv_nsec) {
        ++scan.listings.reused;
        scan.listings.listings.emplace(key, it->second);
        return it->second.entries;
      }
    }
    const timespec read_at = clock_now();
    std::string error;
    entry_list entries = sorted_entries(dir_path, &error);
    if (!error.empty()) {
      add_gap(scan, dir_path, error);
      return entries;  // not kept: the next scan reads it again and names the gap again
    }
    entries.erase(std::remove_if(entries.begin(), entries.end(),
                                 [](const auto& e) { return !kept_by_walk(e.first, e.second); }),
                  entries.end());
    if (ns_of(self.st_ctim) + settle_ns < ns_of(read_at)) scan.listings.listings[key] = {self.st_ctim, entries};
    return entries;
  }

  // `self` is unset (st_ino 0) for a directory whose parent's listing was
  // vouched for: it is taken now only if this one's is not.
  bool visit(const std::string& dir_path, const struct stat& self, std::size_t depth,
             std::vector<std::pair<std::string, struct stat>>& subdirs) {
    const entry_list* kept = vouched != nullptr ? (*vouched)(dir_path) : nullptr;
    entry_list read;
    if (kept == nullptr) {
      struct stat fresh = self;
      if (fresh.st_ino == 0 && ::lstat(dir_path.c_str(), &fresh) != 0) {
        if (errno != ENOENT) add_gap(scan, dir_path, std::string("cannot be examined: ") + std::strerror(errno));
        return true;
      }
      read = entries_of(dir_path, fresh);
    }
    const entry_list& entries = kept != nullptr ? *kept : read;
    // Only a directory naming HEAD, objects and refs may be a bare repository.
    auto names_it = [&](const char* name) {
      auto at = std::lower_bound(entries.begin(), entries.end(), name,
                                 [](const auto& entry, const char* n) { return entry.first < n; });
      return at != entries.end() && at->first == name;
    };
    if (names_it("HEAD") && names_it("objects") && names_it("refs")) {
      std::vector<std::string> names;
      names.reserve(entries.size());
      for (const auto& entry : entries) names.push_back(entry.first);
      if (looks_bare(dir_path, names)) {
        scan.repositories.push_back(dir_path);
        scan.places.push_back("b" + dir_path);
        protect_git_dir(dir_path, "bare", home, scan, 0);
        return false;  // objects and refs are not work tree
      }
    }
    for (const auto& [name, type] : entries) {
      if (type != DT_UNKNOWN && type != DT_DIR && name != ".git") continue;  // a file, a link: not walked
      std::string child = join(dir_path, name);
      struct stat st {};
      if (kept != nullptr && type != DT_UNKNOWN) {
        // The watch set's listing says the type (it resolves an unknown one when it lists).
        if (name == ".git") {
          found_dot_git(dir_path, child, type == DT_DIR);
          continue;
        }
        st.st_mode = type == DT_DIR ? S_IFDIR : S_IFREG;
      } else if (::lstat(child.c_str(), &st) != 0) {
        // Gone meanwhile (ENOENT) is nothing; anything else (EACCES on a
        // directory without search permission, ENAMETOOLONG) hides it.
        if (errno != ENOENT) add_gap(scan, child, std::string("cannot be examined: ") + std::strerror(errno));
        continue;
      }
      if (name == ".git") {
        found_dot_git(dir_path, child, S_ISDIR(st.st_mode));
        continue;
      }
      if (!S_ISDIR(st.st_mode)) continue;
      if (depth + 1 > max_depth) {
        // Only this subtree is past the bound: its siblings are still walked,
        // so a deep chain cannot hide what lies beside it.
        add_gap(scan, child, "deeper than " + std::to_string(max_depth) + " directories: not checked");
        continue;
      }
      if (++scan.entries_seen > max_entries) {
        scan.truncated = true;
        return false;
      }
      subdirs.emplace_back(name, st);
    }
    return true;
  }

  // Breadth first: past the entry bound, what is left unseen is the
  // deepest part of the tree, never a repository beside a large subtree
  // that sorts first. The queue holds at most max_entries directories.
  void walk(const std::string& root_path, const struct stat& root_self) {
    struct pending {
      std::string path;
      struct stat self;
      std::size_t depth;
    };
    std::deque<pending> queue;
    queue.push_back({root_path, root_self, 0});
    while (!queue.empty() && !scan.truncated) {
      pending next = std::move(queue.front());
      queue.pop_front();
      if (std::chrono::steady_clock::now() > deadline) {
        add_gap(scan, next.path, "the scan's time budget of " + std::to_string(scan_time_budget_seconds) +
                                     " s ran out here; this and what follows were not checked");
        out_of_time = true;
        return;
      }
      std::vector<std::pair<std::string, struct stat>> subdirs;
      if (!visit(next.path, next.self, next.depth, subdirs)) continue;  // a bare repository, or the bound
      for (auto& [sub, st] : subdirs) queue.push_back({join(next.path, sub), st, next.depth + 1});
    }
  }
};

void watch_startup(const std::string& root, const std::string& home, vcs_scan& scan) {
  if (home.empty() || home == "/") return;
  for (const char* relative : kStartupPaths) {
    std::string path = home + "/" + relative;
    if (!within(path, root)) continue;
    file_stamp stamp = stamp_of(path);
    if (stamp.present) scan.protect.push_back(path);
    scan.startup[path] = std::move(stamp);
  }
}

vcs_scan scan_here(const std::string& root, const std::string& home, std::uint64_t max_entries,
                   const listing_cache* reuse, std::int64_t settle_ns, const trusted_listings* vouched = nullptr) {
  vcs_scan scan;
  struct stat self {};
  if (::lstat(root.c_str(), &self) != 0) {
    add_gap(scan, root, std::string("cannot be examined: ") + std::strerror(errno));
  } else {
    walker w{root, home, scan, max_entries};
    w.reuse = reuse;
    w.vouched = vouched;
    w.settle_ns = settle_ns;
    w.walk(root, self);
  }
  watch_startup(root, home, scan);
  return scan;
}

// In the scan's child: the store's listings (besides `reuse`) in, this
// scan's listings back to the store, none to the caller.
vcs_scan scan_with_store(const std::string& root, const std::string& home, std::uint64_t max_entries,
                         const listing_cache* reuse, std::int64_t settle_ns, const std::string& store_dir) {
  listing_cache kept = load_listings(store_dir, root);
  if (reuse != nullptr) {
    for (const auto& [id, listing] : reuse->listings) kept.listings.emplace(id, listing);
  }
  vcs_scan scan = scan_here(root, home, max_entries, &kept, settle_ns);
  (void)save_listings(store_dir, root, scan.listings);  // a store not written only costs the next run its reuse
  scan.listings.listings.clear();
  return scan;
}

}  // namespace

vcs_scan rescan_places(const std::string& root, const std::string& home, const vcs_scan& earlier,
                       std::uint64_t memory_bound) {
  return run_bounded_scan(
      root,
      [&] {
        vcs_scan scan;
        walker w{root, home, scan, max_directories};
        for (const auto& place : earlier.places) {
          const std::string dir = place.substr(1);
          if (place[0] == 'b') {
            scan.repositories.push_back(dir);
            scan.places.push_back(place);
            protect_git_dir(dir, "bare", home, scan, 0);
          } else {
            w.found_dot_git(dir, join(dir, ".git"), place[0] == 'd');
          }
        }
        scan.entries_seen = earlier.entries_seen;
        watch_startup(root, home, scan);
        return scan;
      },
      memory_bound);
}

vcs_scan scan_vcs_metadata(const std::string& root, const std::string& home, std::uint64_t max_entries,
                           const listing_cache* reuse, std::int64_t settle_ns, std::uint64_t memory_bound,
                           const std::string& store_dir, const trusted_listings* vouched) {
  return run_bounded_scan(
      root,
      [&] {
        // Listings vouched for need no store: it is neither read nor written.
        if (vouched != nullptr) return scan_here(root, home, max_entries, reuse, settle_ns, vouched);
        return store_dir.empty() ? scan_here(root, home, max_entries, reuse, settle_ns)
                                 : scan_with_store(root, home, max_entries, reuse, settle_ns, store_dir);
      },
      memory_bound);
}

}  // namespace cordon::vcs
