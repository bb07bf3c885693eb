#include "linux/mount_table.h"

#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string_view>

#include "linux/mount_by_fd.h"
#include "linux/paths.h"
#include "posix/unique_fd.h"

namespace cordon::linux_impl {
namespace {

// A denied or protected path the table cannot hold: filesystem_deny is then
// not enforced for this policy (gate 4).
blocker deny_blocker(std::string reason) {
  return blocker::for_control(control::filesystem_deny, enforcement_level::enforced, enforcement_level::not_enforced,
                              std::move(reason));
}

// What a process needs to start from a restricted root. /proc and /dev are
// always private and are not listed here.
constexpr const char* kPlatformDefaults[] = {"/usr", "/bin",  "/sbin", "/lib", "/lib32",
                                             "/lib64", "/libx32", "/etc", "/opt", "/sys"};

struct entry {
  std::string path;  // resolved host path
  bool exists = false;
  bool directory = false;
  std::string given;  // as the policy (or the repository scan) named it
};

// "Is this path at or beneath one of these roots?" in one lookup per
// component of the path, so policies with thousands of entries stay linear.
class root_set {
 public:
  root_set() = default;
  explicit root_set(const std::vector<std::string>& roots) {
    for (const auto& r : roots) add(r);
  }
  explicit root_set(const std::vector<entry>& roots, bool existing_only = false) {
    for (const auto& r : roots) {
      if (!existing_only || r.exists) add(r.path);
    }
  }
  void add(const std::string& root) {
    if (root == "/") {
      everything_ = true;
    } else {
      roots_.insert(root);
    }
  }
  // `path` itself or one of its ancestors is a root.
  bool covers(std::string_view path) const { return everything_ || find_from(path); }
  // One of the strict ancestors of `path` is a root.
  bool covers_parent_of(std::string_view path) const {
    auto slash = path.find_last_of('/');
    if (slash == std::string_view::npos || slash == 0) return everything_ && path.size() > 1;
    return everything_ || find_from(path.substr(0, slash));
  }

 private:
  bool find_from(std::string_view path) const {
    while (path.size() > 1) {
      if (roots_.find(path) != roots_.end()) return true;
      auto slash = path.find_last_of('/');
      if (slash == std::string_view::npos || slash == 0) break;
      path = path.substr(0, slash);
    }
    return false;
  }
  std::set<std::string, std::less<>> roots_;
  bool everything_ = false;
};

void sort_shallow_first(std::vector<entry>& entries) {
  std::vector<std::pair<std::size_t, entry>> keyed;
  keyed.reserve(entries.size());
  for (auto& e : entries) keyed.emplace_back(path_depth(e.path), std::move(e));
  std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  entries.clear();
  for (auto& [depth, e] : keyed) entries.push_back(std::move(e));
}

bool under_dev(const std::string& path) { return path_is_within(path, "/dev"); }

// The first regular file at or beneath `path` (a file or a directory) with
// more than one hard link, looking at most at `budget` entries; "" if none.
// A directory too large to check counts as linked: it cannot be proven safe.
std::string find_hard_linked(const std::string& path, int budget) {
  std::error_code ec;
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return {};
  if (S_ISREG(st.st_mode)) return st.st_nlink > 1 ? path : std::string();
  if (!S_ISDIR(st.st_mode)) return {};
  // sysfs and procfs have no user-made hard links (statfs(2) magic numbers).
  struct statfs info {};
  if (::statfs(path.c_str(), &info) == 0 && (info.f_type == SYSFS_MAGIC || info.f_type == PROC_SUPER_MAGIC)) return {};
  namespace fs = std::filesystem;
  for (auto it = fs::recursive_directory_iterator(path, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (--budget < 0) return path + " (more than 100000 entries to check)";
    if (::lstat(it->path().c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink > 1) return it->path().string();
  }
  return {};
}

// The device and inode of every bind's source, as reached with no symlink on
// the way: PID 1 mounts the object only if it is still this one
// (linux/mount_by_fd.h). A source not reachable so is left unknown, and its
// launch fails naming it.
void record_source_identities(mount_table& table) {
  for (auto& op : table.ops) {
    if (op.kind != mount_kind::bind_read_only && op.kind != mount_kind::bind_writable) continue;
    unique_fd fd(open_no_symlinks(op.path.c_str()));
    struct stat st {};
    if (fd && ::fstat(fd.get(), &st) == 0) {
      op.source_identity = {static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino), true};
    }
  }
}

}  // namespace

std::vector<std::string> platform_default_roots() {
  std::vector<std::string> roots;
  for (const char* p : kPlatformDefaults) {
    struct stat st {};
    if (::lstat(p, &st) == 0) roots.emplace_back(p);
  }
  return roots;
}

namespace {

// The policy's lists as host paths (symlinks followed once, at compile time,
// each such resolution noted), sorted shallow first; and the platform
// defaults a restricted root starts from.
struct resolved_lists {
  std::vector<entry> readable, writable, protect, denied;
  std::vector<std::string> defaults;
};

// What the phases below ask of the lists: is a path at or beneath one of them.
struct table_roots {
  explicit table_roots(const resolved_lists& lists)
      : defaults(lists.defaults),
        readable(lists.readable),
        writable(lists.writable),
        existing_protected(lists.protect, true),
        existing_denied(lists.denied, true) {}
  root_set defaults, readable, writable, existing_protected, existing_denied;
};

// Phase 1: resolve every list of the policy (and the repository scan's
// protected paths) on the host.
resolved_lists resolve_lists(const mount_table_input& input, const mount_table& table, std::vector<std::string>& notes) {
  const filesystem_policy& fs = input.policy->filesystem;
  host_path_resolver resolver;
  auto resolve_list = [&](const std::vector<std::string>& paths, const char* list_name) {
    std::vector<entry> entries;
    for (const auto& raw : paths) {
      if (raw == token_run_tmp) continue;
      resolved_path r = resolver.resolve(raw);
      if (r.was_symlink) {
        notes.push_back(std::string(list_name) + " path " + raw + " resolved to " + r.path +
                        " (symlinks are followed once, at compile time)");
      }
      entries.push_back({r.path, r.exists, r.is_directory, raw});
    }
    sort_shallow_first(entries);
    return entries;
  };
  resolved_lists lists;
  lists.readable = resolve_list(fs.readable, "readable");
  lists.writable = resolve_list(fs.writable, "writable");
  std::vector<std::string> protected_paths = fs.protected_read_only;
  protected_paths.insert(protected_paths.end(), input.vcs_protected.begin(), input.vcs_protected.end());
  lists.protect = resolve_list(protected_paths, "protected_read_only");
  lists.denied = resolve_list(fs.denied, "denied");
  if (!table.full_root && fs.include_platform_defaults) lists.defaults = platform_default_roots();
  return lists;
}

// Phase 2: a protected or denied path reached through a symlink that itself
// lies in a writable root: the mount covers the target, but the command could
// replace the link (rm .git/hooks; mkdir .git/hooks) and the host would then
// follow the new name. A mount cannot cover a symlink: refuse.
void refuse_replaceable_links(const resolved_lists& lists, const table_roots& roots, std::vector<blocker>& blockers) {
  for (const auto* list : {&lists.protect, &lists.denied}) {
    for (const auto& e : *list) {
      if (e.given == e.path || !roots.writable.covers(e.given)) continue;
      blockers.push_back(deny_blocker((list == &lists.protect ? "protected path " : "denied path ") + e.given +
                                      " is reached through a symlink inside a writable root, which the command could "
                                      "replace; name the target or make it a real directory"));
    }
  }
}

// Phase 3: the platform defaults (restricted root only; merged-/usr symlinks
// are recreated), then the private /tmp.
void add_platform_defaults(const std::vector<std::string>& defaults, mount_table& table) {
  for (const auto& root : defaults) {
    struct stat st {};
    if (::lstat(root.c_str(), &st) != 0) continue;
    if (S_ISLNK(st.st_mode)) {
      char buffer[4096];
      ssize_t n = ::readlink(root.c_str(), buffer, sizeof buffer - 1);
      if (n <= 0) continue;
      table.ops.push_back({mount_kind::symlink, root, std::string(buffer, static_cast<std::size_t>(n)), false,
                           "platform default"});
    } else {
      table.ops.push_back({mount_kind::bind_read_only, root, {}, S_ISDIR(st.st_mode), "platform default"});
    }
  }
  if (table.private_tmp) table.ops.push_back({mount_kind::private_tmpfs, "/tmp", {}, true, "{run_tmp}"});
}

// Phase 4: the readable roots not already visible, then every writable root.
void add_readable_and_writable(const resolved_lists& lists, const table_roots& roots, mount_table& table) {
  for (const auto& r : lists.readable) {
    if (!r.exists) {
      table.skipped.push_back("readable " + r.path + ": does not exist");
      continue;
    }
    bool hidden_by_private_tmp = table.private_tmp && path_is_within(r.path, "/tmp");
    if ((table.full_root && !hidden_by_private_tmp) || roots.defaults.covers(r.path)) {
      table.skipped.push_back("readable " + r.path + ": already visible read-only");
      continue;
    }
    if (roots.writable.covers(r.path)) {
      table.skipped.push_back("readable " + r.path + ": inside a writable root, which wins");
      continue;
    }
    table.ops.push_back({mount_kind::bind_read_only, r.path, {}, r.directory, "readable"});
  }
  for (const auto& w : lists.writable) {
    if (!w.exists) {
      table.skipped.push_back("writable " + w.path + ": does not exist");
      continue;
    }
    table.ops.push_back({mount_kind::bind_writable, w.path, {}, w.directory, "writable"});
  }
}

// Phase 5: the devices the policy names (filesystem.devices): the only mounts
// that keep their device nodes usable; every other bind, under /dev too, is nodev.
void add_devices(const filesystem_policy& fs, mount_table& table, std::vector<blocker>& blockers) {
  for (const auto& device : fs.devices) {
    struct stat st {};
    if (::stat(device.c_str(), &st) != 0) {
      table.skipped.push_back("device " + device + ": does not exist");
    } else if (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode)) {
      blockers.push_back(deny_blocker("device " + device + " is not a device node"));
    } else {
      table.ops.push_back({mount_kind::bind_writable, device, {}, false, "device"});
    }
  }
}

// Phase 6: pins. Every directory between a writable root and a protected or
// denied path is bound onto itself, so it becomes a mount point that cannot
// be renamed (EBUSY). Otherwise `mv .git x && mkdir .git` would move the
// protection away with the old directory and leave the path free.
void add_pins(const resolved_lists& lists, mount_table& table) {
  std::vector<std::string> pins;
  std::set<std::string, std::less<>> pinned;
  auto pin_parents = [&](const std::string& path) {
    const entry* root = nullptr;
    for (const auto& w : lists.writable) {
      if (path_is_within(path, w.path) && path != w.path && (root == nullptr || w.path.size() > root->path.size())) {
        root = &w;
      }
    }
    if (root == nullptr) return;
    for (auto slash = path.find('/', root->path.size() + 1); slash != std::string::npos;
         slash = path.find('/', slash + 1)) {
      std::string dir = path.substr(0, slash);
      if (pinned.insert(dir).second) pins.push_back(dir);
    }
  };
  for (const auto& p : lists.protect) {
    if (p.exists) pin_parents(p.path);
  }
  for (const auto& d : lists.denied) {
    if (d.exists) pin_parents(d.path);
  }
  std::stable_sort(pins.begin(), pins.end(),
                   [](const std::string& a, const std::string& b) { return path_depth(a) < path_depth(b); });
  for (const auto& dir : pins) table.ops.push_back({mount_kind::bind_writable, dir, {}, true, "pin"});
}

// Phase 7: the protected paths beneath a writable root, read-only again.
void add_protected(const resolved_lists& lists, const table_roots& roots, mount_table& table,
                   std::vector<blocker>& blockers) {
  for (const auto& p : lists.protect) {
    if (!roots.writable.covers(p.path)) {
      table.skipped.push_back("protected " + p.path + ": not beneath a writable root, already read-only");
      continue;
    }
    if (!p.exists) {
      blockers.push_back(deny_blocker("protected path " + p.path +
                                      " does not exist and could be created inside a writable root; "
                                      "create it or remove the entry"));
      continue;
    }
    table.ops.push_back({mount_kind::bind_read_only, p.path, {}, p.directory, "protected"});
  }
}

// Is a host path visible inside at all (before masks)?
bool visible_inside(const mount_table& table, const table_roots& roots, const std::string& path) {
  bool hidden_by_private_tmp = table.private_tmp && path_is_within(path, "/tmp");
  if (table.full_root && !hidden_by_private_tmp) return true;
  return roots.defaults.covers(path) || roots.readable.covers(path) || roots.writable.covers(path);
}

// Could the command create this path? Only beneath a writable root that is
// not itself under a protected or denied entry.
bool creatable_inside(const table_roots& roots, const std::string& path) {
  return roots.writable.covers(path) && !roots.existing_protected.covers(path) &&
         !roots.existing_denied.covers_parent_of(path);
}

// Phase 8: the denied paths the command could see, masked.
void add_denied(const resolved_lists& lists, const table_roots& roots, mount_table& table,
                std::vector<blocker>& blockers) {
  for (const auto& d : lists.denied) {
    if (!visible_inside(table, roots, d.path)) {
      table.skipped.push_back("denied " + d.path + ": not visible in the sandbox");
      continue;
    }
    if (!d.exists && creatable_inside(roots, d.path)) {
      blockers.push_back(deny_blocker("denied path " + d.path +
                                      " does not exist and could be created inside a writable root"));
      continue;
    }
    // A mask hides a name, not the file: another hard link would still show it.
    if (d.exists) {
      std::string linked = find_hard_linked(d.path, 100000);
      if (!linked.empty()) {
        blockers.push_back(deny_blocker("denied file " + linked +
                                        " has another hard link, which a mask cannot hide; remove the extra link"));
        continue;
      }
    }
    table.ops.push_back({mount_kind::mask, d.path, {}, d.directory, "denied"});
  }
}

}  // namespace

// The phases above, in order: the table's operations are applied by PID 1 in
// the order they are added (binds, then pins, read-only protections, masks).
mount_table_result build_mount_table(const mount_table_input& input) {
  const filesystem_policy& fs = input.policy->filesystem;
  mount_table_result out;
  mount_table& table = out.table;
  table.full_root = fs.read == read_mode::full;
  table.private_tmp = std::find(fs.writable.begin(), fs.writable.end(), std::string(token_run_tmp)) != fs.writable.end();
  const resolved_lists lists = resolve_lists(input, table, out.notes);
  const table_roots roots(lists);
  refuse_replaceable_links(lists, roots, out.blockers);
  add_platform_defaults(lists.defaults, table);
  add_readable_and_writable(lists, roots, table);
  add_devices(fs, table, out.blockers);
  add_pins(lists, table);
  add_protected(lists, roots, table, out.blockers);
  add_denied(lists, roots, table, out.blockers);
  record_source_identities(table);
  return out;
}

std::vector<landlock_path_rule> landlock_rules_for(const mount_table& table) {
  std::vector<landlock_path_rule> rules;
  // A restricted root only holds what the table mounts, so listing directories
  // reveals nothing the mounts do not already show; reading files stays per root.
  rules.push_back({"/", table.full_root ? landlock_access::read : landlock_access::list_directory});
  for (const auto& op : table.ops) {
    switch (op.kind) {
      case mount_kind::bind_read_only:
        if (op.why != "protected") rules.push_back({op.path, landlock_access::read});
        break;
      case mount_kind::bind_writable:
      case mount_kind::private_tmpfs:
        rules.push_back({op.path, under_dev(op.path) ? landlock_access::device : landlock_access::read_write});
        break;
      case mount_kind::mask:
      case mount_kind::symlink:
      case mount_kind::seal_read_only:
        break;
    }
  }
  rules.push_back({"/dev", landlock_access::device});
  rules.push_back({"/dev/shm", landlock_access::read_write});
  // Read-only: writes under /proc reach kernel-wide state (/proc/sys) that
  // uid 0 inside could otherwise own; the mounts make them read-only too.
  rules.push_back({"/proc", landlock_access::read});
  return rules;
}

std::vector<std::string> describe_mounts(const mount_table& table) {
  std::vector<std::string> lines;
  lines.emplace_back(table.full_root ? "ro-rbind / (host root, read-only)" : "tmpfs / (read-only after setup)");
  lines.emplace_back("proc /proc (this PID namespace)");
  lines.emplace_back("tmpfs /dev (private: null zero full random urandom tty, devpts, shm)");
  for (const auto& op : table.ops) {
    switch (op.kind) {
      case mount_kind::bind_read_only:
        lines.push_back("ro-bind " + op.path + " (" + op.why + ")");
        break;
      case mount_kind::bind_writable:
        lines.push_back("rw-bind " + op.path + " (" + op.why + ")");
        break;
      case mount_kind::private_tmpfs:
        lines.push_back("tmpfs " + op.path + " (private, writable)");
        break;
      case mount_kind::mask:
        lines.push_back("mask " + op.path + " (denied)");
        break;
      case mount_kind::symlink:
        lines.push_back("symlink " + op.path + " -> " + op.link_target);
        break;
      case mount_kind::seal_read_only:
        lines.push_back("seal " + op.path + " (read-only: " + op.why + ")");
        break;
    }
  }
  return lines;
}

}  // namespace cordon::linux_impl
