// os_sandbox_landlock.cpp — the policy's filesystem as Landlock rules, with
// the precedence kept by splitting roots that hold exceptions
// (os_sandbox_landlock.h).
#include "linux/os_sandbox_landlock.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>

#include "linux/mount_table.h"
#include "linux/paths.h"

namespace cordon::linux_impl {
namespace {

// How much a rule gives, for comparing with what an exception allows.
constexpr int kNone = 0, kRead = 2, kWrite = 3;

int rank(landlock_access access) {
  switch (access) {
    case landlock_access::list_directory: return 1;
    case landlock_access::read: return kRead;
    case landlock_access::device: return kRead;
    case landlock_access::read_write: return kWrite;
  }
  return kNone;
}

struct exception_path {
  std::string path;  // resolved on the host
  int cap = kNone;   // denied: nothing; protected: read
};

struct builder {
  os_sandbox_fs_rules out;

  void refuse(const std::string& why) {
    out.blockers.push_back(blocker::for_control(control::filesystem_deny, enforcement_level::enforced,
                                                enforcement_level::not_enforced, why));
  }

  // Grants `path` with `access`, split where an exception below allows less.
  void grant(const std::string& path, landlock_access access, const std::vector<exception_path>& exceptions) {
    int have = rank(access);
    for (const auto& e : exceptions) {
      if (path_is_within(path, e.path)) have = std::min(have, e.cap);
    }
    if (have == kNone) return;
    if (have < rank(access)) access = landlock_access::read;
    std::vector<exception_path> below;
    bool denied_below = false;
    for (const auto& e : exceptions) {
      if (e.path != path && path_is_within(e.path, path) && e.cap < have) {
        below.push_back(e);
        denied_below = denied_below || e.cap == kNone;
      }
    }
    if (below.empty()) {
      out.rules.push_back({path, access});
      return;
    }
    split(path, access, below, denied_below);
  }

  // The directory gets READ_DIR (none when a denied path lies below: READ_DIR
  // is inherited and would list it), each entry its own rule.
  void split(const std::string& path, landlock_access access, const std::vector<exception_path>& below,
             bool denied_below) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return;  // nothing below to grant
    DIR* dir = ::opendir(path.c_str());
    if (dir == nullptr) {
      refuse("cannot list " + path + " to grant its entries one by one around a denied or protected path");
      return;
    }
    std::vector<std::string> names;
    while (dirent* entry = ::readdir(dir)) {
      std::string name = entry->d_name;
      if (name != "." && name != "..") names.push_back(std::move(name));
    }
    ::closedir(dir);
    if (names.size() > os_sandbox_max_split_entries) {
      refuse(path + " holds " + std::to_string(names.size()) + " entries (more than " +
             std::to_string(os_sandbox_max_split_entries) +
             "): Landlock cannot take a right back below a granted directory, and granting them one by one "
             "around the denied or protected path below is refused");
      return;
    }
    if (!denied_below) out.rules.push_back({path, landlock_access::list_directory});
    out.split.push_back(path);
    std::sort(names.begin(), names.end());
    for (const auto& name : names) {
      const std::string child = path == "/" ? "/" + name : path + "/" + name;
      struct stat cst {};
      // A symlink is not followed: a rule on it would grant its target, which
      // the unsplit root never did.
      if (::lstat(child.c_str(), &cst) != 0 || S_ISLNK(cst.st_mode)) continue;
      grant(child, access, below);
    }
  }
};

std::vector<exception_path> exceptions_of(const sandbox_policy& policy, const std::vector<std::string>& extra,
                                          builder& b) {
  std::vector<exception_path> out;
  auto add = [&](const std::string& raw, int cap) {
    resolved_path r = resolve_on_host(raw);
    if (r.was_symlink) b.out.notes.push_back(raw + " resolved to " + r.path);
    struct stat st {};
    if (cap == kNone && ::stat(r.path.c_str(), &st) == 0 && !S_ISDIR(st.st_mode) && st.st_nlink > 1) {
      b.refuse("denied file " + r.path + " has " + std::to_string(st.st_nlink) +
               " hard links: a rule keeps a path out, not the file, and another name could be granted");
    }
    out.push_back({r.path, cap});
  };
  for (const auto& p : policy.filesystem.denied) add(p, kNone);
  for (const auto& p : policy.filesystem.protected_read_only) add(p, kRead);
  for (const auto& p : extra) add(p, kRead);
  return out;
}

}  // namespace

os_sandbox_fs_rules build_os_sandbox_fs_rules(const sandbox_policy& normalized,
                                              const std::vector<std::string>& extra_protected) {
  builder b;
  const auto& fs = normalized.filesystem;
  const std::vector<exception_path> exceptions = exceptions_of(normalized, extra_protected, b);
  // Ascending precedence; every grant is split around every exception below it.
  if (fs.read == read_mode::full) {
    b.grant("/", landlock_access::read, exceptions);
  } else {
    if (fs.include_platform_defaults) {
      for (const auto& root : platform_default_roots()) {
        resolved_path r = resolve_on_host(root);
        if (r.exists) b.grant(r.path, landlock_access::read, exceptions);
      }
    }
    // The host's /proc: a command needs /proc/self; other processes' private
    // files stay behind Landlock's ptrace restriction (linux-backend.md).
    b.grant("/proc", landlock_access::read, exceptions);
  }
  for (const auto& root : fs.readable) {
    resolved_path r = resolve_on_host(root);
    if (r.was_symlink) b.out.notes.push_back(root + " resolved to " + r.path);
    if (r.exists) b.grant(r.path, landlock_access::read, exceptions);
  }
  for (const auto& root : fs.writable) {
    if (root == token_run_tmp) continue;  // made at launch
    resolved_path r = resolve_on_host(root);
    if (r.was_symlink) b.out.notes.push_back(root + " resolved to " + r.path);
    if (r.exists) b.grant(r.path, landlock_access::read_write, exceptions);
  }
  // The standard pseudo-devices and the ones the policy names.
  std::vector<std::string> devices = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"};
  devices.insert(devices.end(), fs.devices.begin(), fs.devices.end());
  for (const auto& device : devices) b.grant(device, landlock_access::device, exceptions);
  std::sort(b.out.rules.begin(), b.out.rules.end(), [](const auto& x, const auto& y) {
    return x.path != y.path ? x.path < y.path : static_cast<int>(x.access) < static_cast<int>(y.access);
  });
  // A root that is readable and writable is split once per grant.
  std::sort(b.out.split.begin(), b.out.split.end());
  b.out.split.erase(std::unique(b.out.split.begin(), b.out.split.end()), b.out.split.end());
  return std::move(b.out);
}

}  // namespace cordon::linux_impl
