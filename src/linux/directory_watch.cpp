// An inotify watch set keeping a root's directory listings current
// (linux/directory_watch.h).
#include "linux/directory_watch.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

#include "posix/vcs_scan.h"

namespace cordon::linux_impl {
namespace {

constexpr std::uint32_t kMask = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB | IN_DELETE_SELF |
                                IN_MOVE_SELF | IN_CLOSE_WRITE | IN_DONT_FOLLOW | IN_ONLYDIR;

// The reads of the queue one refresh() makes at most (64 KiB each: about
// 16 times the kernel's default queue of 16,384 events).
constexpr std::size_t kMaxReads = 1024;

// The names the scan looks at besides subdirectories (vcs::listing_cache).
bool kept_name(const std::string& name) {
  return name == ".git" || name == "HEAD" || name == "objects" || name == "refs";
}

bool under(const std::string& path, const std::string& dir) {
  return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 && path[dir.size()] == '/';
}

std::string parent_path(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == 0 ? "/" : path.substr(0, slash);
}

// The entries of `path` the scan uses, sorted, a DT_UNKNOWN resolved by
// fstatat(2); false (and errno) when it cannot be listed whole.
bool read_listing(const std::string& path, watched_entries& out) {
  unique_fd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) return false;
  const int dir_fd = fd.get();
  DIR* dir = ::fdopendir(dir_fd);
  if (dir == nullptr) return false;
  fd.release();  // the DIR owns it now; closedir() below closes it
  bool whole = true;
  std::size_t names = 0;
  for (;;) {
    errno = 0;
    const dirent* entry = ::readdir(dir);
    if (entry == nullptr) {
      whole = errno == 0;
      break;
    }
    const std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    if (++names > vcs::max_directory_entries) {
      errno = EFBIG;
      whole = false;
      break;
    }
    unsigned char type = entry->d_type;
    if (type == DT_UNKNOWN) {
      struct stat st {};
      if (::fstatat(dir_fd, entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        whole = false;
        break;
      }
      type = S_ISDIR(st.st_mode) ? DT_DIR : DT_REG;
    }
    if (type == DT_DIR || kept_name(name)) out.emplace_back(name, type);
  }
  const int saved = errno;
  ::closedir(dir);
  errno = saved;
  std::sort(out.begin(), out.end());
  return whole;
}

}  // namespace

const watched_entries* directory_watch::listing(const std::string& path) const {
  auto it = nodes_.find(path);
  return it == nodes_.end() ? nullptr : &it->second.entries;
}

std::map<std::string, watched_entries> directory_watch::listings() const {
  std::map<std::string, watched_entries> out;
  for (const auto& [path, kept] : nodes_) out.emplace(path, kept.entries);
  return out;
}

result<directory_watch> directory_watch::open(const std::string& root, std::uint64_t max_directories) {
  directory_watch set;
  set.fd_.reset(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
  if (!set.fd_) return make_error(error_code::io_error, "inotify_init1", {}, errno);
  set.root_ = root;
  set.max_directories_ = max_directories;
  set.watch_tree(root, 0);
  std::vector<std::string>().swap(set.touched_);  // every path: not kept (refresh() says what changed since)
  return set;
}

void directory_watch::set_doubt(std::string why) {
  if (doubt_.empty()) doubt_ = std::move(why);
}

void directory_watch::watch_tree(const std::string& path, std::size_t depth) {
  if (!doubt_.empty()) return;
  if (depth > vcs::max_depth) return set_doubt(path + ": deeper than " + std::to_string(vcs::max_depth) + " levels");
  if (nodes_.size() >= max_directories_) {
    return set_doubt("more than " + std::to_string(max_directories_) + " directories");
  }
  // The watch first: an entry made after this raises an event, one made before is in the listing.
  const int wd = ::inotify_add_watch(fd_.get(), path.c_str(), kMask);
  if (wd < 0) {
    const int err = errno;
    return set_doubt(path + ": watch refused: " +
                     (err == ENOSPC ? std::string("ENOSPC, past fs.inotify.max_user_watches") : std::strerror(err)));
  }
  auto at = nodes_.try_emplace(path).first;
  at->second.wd = wd;
  at->second.depth = depth;
  paths_[wd] = &at->first;
  watched_entries entries;
  if (!read_listing(path, entries)) return set_doubt(path + ": cannot be listed: " + std::strerror(errno));
  at->second.entries = entries;
  touched_.push_back(path);
  for (const auto& [name, type] : entries) {
    if (type == DT_DIR && name != ".git") watch_tree(path + "/" + name, depth + 1);
  }
}

void directory_watch::forget_tree(const std::string& path) {
  for (auto it = nodes_.lower_bound(path); it != nodes_.end() && (it->first == path || under(it->first, path));) {
    // Its descriptor may name its new path already (moved within the root, watched there first).
    auto owner = paths_.find(it->second.wd);
    if (owner != paths_.end() && owner->second == &it->first) paths_.erase(owner);
    it = nodes_.erase(it);
  }
}

void directory_watch::relist(const std::string& path) {
  auto old = nodes_.find(path);
  if (old == nodes_.end() || !doubt_.empty()) return;  // forgotten by its parent's new listing
  watched_entries entries;
  if (!read_listing(path, entries)) return set_doubt(path + ": cannot be listed: " + std::strerror(errno));
  std::set<std::string> before, now;
  for (const auto& [name, type] : old->second.entries) {
    if (type == DT_DIR && name != ".git") before.insert(name);
  }
  for (const auto& [name, type] : entries) {
    if (type == DT_DIR && name != ".git") now.insert(name);
  }
  old->second.entries = entries;
  touched_.push_back(path);
  const std::size_t depth = old->second.depth;
  for (const auto& name : before) {
    if (now.count(name) == 0) forget_tree(path + "/" + name);
  }
  for (const auto& name : now) {
    const std::string child = path + "/" + name;
    auto known = nodes_.find(child);
    if (known != nodes_.end()) {
      // The same inode gives the same watch descriptor in one instance: a
      // different one means the directory was replaced (renamed over,
      // removed and made again), and its tree is listed again.
      const int wd = ::inotify_add_watch(fd_.get(), child.c_str(), kMask);
      if (wd == known->second.wd) continue;
      forget_tree(child);
    }
    watch_tree(child, depth + 1);
  }
}

std::vector<std::string> directory_watch::refresh() {
  touched_.clear();
  if (!doubt_.empty()) return {};
  std::set<std::string> dirty;
  alignas(inotify_event) char buffer[1 << 16];
  for (std::size_t reads = 0;; ++reads) {
    // A writer that never stops would keep this loop reading; past the
    // bound the listings cannot be brought up to date, and the caller walks.
    if (reads == kMaxReads) {
      set_doubt("events kept coming (" + std::to_string(kMaxReads) + " reads of the queue)");
      return {};
    }
    const ssize_t n = ::read(fd_.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) break;
    if (n <= 0) {
      set_doubt(std::string("the watch set cannot be read: ") + std::strerror(errno));
      return {};
    }
    for (ssize_t at = 0; at < n;) {
      inotify_event event {};
      std::memcpy(&event, buffer + at, sizeof event);
      at += static_cast<ssize_t>(sizeof event + event.len);
      if (event.mask & IN_Q_OVERFLOW) set_doubt("the kernel dropped events (IN_Q_OVERFLOW)");
      if (event.mask & IN_UNMOUNT) set_doubt("a file system under the root was unmounted");
      auto where = paths_.find(event.wd);
      if (where == paths_.end()) continue;  // a directory no longer in the tree
      const std::string path = *where->second;
      if (event.mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED)) {
        if (path == root_) set_doubt(root_ + " was removed, moved or unmounted");
        if (event.mask & IN_IGNORED) paths_.erase(where);
        dirty.insert(parent_path(path));  // its parent's listing says where it went
        continue;
      }
      dirty.insert(path);
    }
  }
  // Parents before children: a parent's new listing forgets what left it.
  for (const auto& path : dirty) relist(path);
  if (!doubt_.empty()) return {};
  std::vector<std::string> out = touched_;
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace cordon::linux_impl
