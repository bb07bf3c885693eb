// resolver.cpp — lexical checks against the plan's mount table, then openat2
// beneath a root descriptor (resolver.h).
#include "fsworker/resolver.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace cordon::fsworker {
namespace {

constexpr std::uint64_t kResolveFlags = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
constexpr std::size_t kMaxPathBytes = 4096;

long openat2_call(int dir_fd, const char* path, int flags, mode_t mode, std::uint64_t resolve) {
  open_how how{};
  how.flags = static_cast<std::uint64_t>(flags) | O_NOFOLLOW | O_CLOEXEC;
  // The kernel refuses a mode without O_CREAT or O_TMPFILE.
  how.mode = (flags & (O_CREAT | O_TMPFILE)) != 0 ? mode : 0;
  how.resolve = resolve;
  return ::syscall(SYS_openat2, dir_fd, path, &how, sizeof how);
}

// O_DIRECTORY | O_NOFOLLOW on a final symlink is ENOTDIR, not ELOOP: say
// "symlink" for it, as for every other symlink.
void refine_not_a_directory(int dir_fd, const char* path, std::uint64_t resolve) {
  if (errno != ENOTDIR) return;
  const long fd = openat2_call(dir_fd, path, O_PATH, 0, resolve);
  struct stat st {};
  const bool link = fd >= 0 && ::fstat(static_cast<int>(fd), &st) == 0 && S_ISLNK(st.st_mode);
  if (fd >= 0) ::close(static_cast<int>(fd));
  errno = link ? ELOOP : ENOTDIR;
}

std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// The mount point of every mount in this namespace, by mount id
// (/proc/self/mountinfo, field 5, with its octal escapes undone).
std::vector<std::pair<std::uint64_t, std::string>> read_mountinfo() {
  std::vector<std::pair<std::uint64_t, std::string>> out;
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::uint64_t id = 0, parent = 0;
    std::string devs, root, point;
    if (!(fields >> id >> parent >> devs >> root >> point)) continue;
    std::string unescaped;
    for (std::size_t i = 0; i < point.size(); ++i) {
      if (point[i] == '\\' && i + 3 < point.size()) {
        unescaped += static_cast<char>(std::stoi(point.substr(i + 1, 3), nullptr, 8));
        i += 3;
      } else {
        unescaped += point[i];
      }
    }
    out.emplace_back(id, unescaped);
  }
  return out;
}

bool is_root_mount(const plan_mount& m) {
  if (m.kind == "rw-bind") return m.why != "pin";
  if (m.kind == "ro-bind") return m.why == "readable" || m.why == "platform default";
  if (m.kind == "ro-rbind") return true;  // the host root of a full read
  if (m.kind == "tmpfs") return m.path == "/tmp";
  return false;
}

}  // namespace

bool is_valid_utf8(std::string_view s) noexcept {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t n = 0;
    std::uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      n = 1, cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      n = 2, cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      n = 3, cp = c & 0x07;
    } else {
      return false;
    }
    if (i + n >= s.size()) return false;
    for (std::size_t k = 1; k <= n; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    // Overlong forms, surrogates and values above U+10FFFF are not UTF-8.
    if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF)) {
      return false;
    }
    i += n + 1;
  }
  return true;
}

bool path_within(std::string_view path, std::string_view prefix) noexcept {
  if (prefix == "/") return !path.empty() && path.front() == '/';
  if (path.size() < prefix.size() || path.compare(0, prefix.size(), prefix) != 0) return false;
  return path.size() == prefix.size() || path[prefix.size()] == '/';
}

fs_result<std::string> normalize_path(std::string_view path, const std::string& base) {
  if (path.empty()) return make_fs_error("path_invalid", "empty path");
  if (path.size() > kMaxPathBytes) return make_fs_error("path_invalid", "path longer than 4096 bytes");
  if (path.find('\0') != std::string_view::npos) return make_fs_error("path_invalid", "path contains NUL");
  if (!is_valid_utf8(path)) return make_fs_error("non_utf8", "path is not valid UTF-8");
  std::string joined;
  if (path.front() == '/') {
    joined = std::string(path);
  } else {
    if (base.empty()) return make_fs_error("path_invalid", "relative path and no workspace");
    joined = base + "/" + std::string(path);
  }
  std::string out;
  std::size_t i = 0;
  while (i < joined.size()) {
    while (i < joined.size() && joined[i] == '/') ++i;
    std::size_t j = joined.find('/', i);
    if (j == std::string::npos) j = joined.size();
    const std::string_view part(joined.data() + i, j - i);
    if (part == "..") {
      return make_fs_error("path_escape", "path contains \"..\": the worker resolves no parent references",
                           "worker: no \"..\"");
    }
    if (!part.empty() && part != ".") {
      out += '/';
      out += part;
    }
    i = j;
  }
  return out.empty() ? std::string("/") : out;
}

fs_result<resolver> resolver::open(const worker_config& config) {
  resolver r;
  r.mounts_ = config.mounts;
  r.workspace_ = config.workspace;
  for (const auto& m : config.mounts) {
    if (!is_root_mount(m)) continue;
    // A path mounted twice (a pin below a protected bind) is one root.
    const bool writable = m.kind == "rw-bind" || m.kind == "tmpfs";
    auto same = std::find_if(r.roots_.begin(), r.roots_.end(), [&](const root_dir& d) { return d.path == m.path; });
    if (same != r.roots_.end()) {
      same->writable = writable;
      continue;
    }
    const int fd = ::open(m.path.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOTDIR || errno == ELOOP) continue;  // a file bind is not a root
      return make_fs_error("io_error", "cannot open root " + m.path + ": " + std::strerror(errno), {}, errno);
    }
    r.roots_.push_back({m.path, writable, unique_fd(fd)});
  }
  if (r.roots_.empty()) return make_fs_error("invalid_config", "the plan's mount table has no root to work in");
  for (const auto& [id, point] : read_mountinfo()) {
    for (const auto& m : config.mounts) {
      if (m.path == point || (m.kind == "ro-rbind" && point == "/")) r.plan_mount_ids_.insert(id);
    }
  }
  return r;
}

fs_result<checked_path> resolver::check(std::string_view path, access_kind access) const {
  auto normalized = normalize_path(path, workspace_);
  if (!normalized) return normalized.error();
  const std::string& abs = *normalized;
  // The innermost plan mount over the path decides, as the kernel will.
  const plan_mount* inner = nullptr;
  for (const auto& m : mounts_) {
    if (m.kind == "proc" || m.kind == "symlink" || (m.kind == "tmpfs" && m.path == "/")) continue;
    if (path_within(abs, m.path) && (inner == nullptr || m.path.size() >= inner->path.size())) inner = &m;
  }
  if (inner != nullptr && inner->kind == "mask") {
    return make_fs_error("denied", abs + " is denied by the policy", "filesystem.denied " + inner->path);
  }
  if (access == access_kind::write && inner != nullptr && inner->kind == "ro-bind" &&
      (inner->why == "protected" || inner->why == "vcs")) {
    // The backend binds repository metadata as "protected" too; its paths
    // name the rule that put them there.
    const bool vcs = inner->why == "vcs" || inner->path.find("/.git/") != std::string::npos ||
                     inner->path.ends_with("/.git") || inner->path.ends_with("/.gitmodules");
    const std::string rule = vcs ? "filesystem.protect_vcs_metadata " : "filesystem.protected_read_only ";
    return make_fs_error("protected", abs + " is protected read-only by the policy", rule + inner->path);
  }
  // A case variant of a denied or protected path (a different name here, the
  // same file on a case-insensitive filesystem) is refused too.
  const std::string folded = ascii_lower(abs);
  for (const auto& m : mounts_) {
    const bool guards = m.kind == "mask" ||
                        (access == access_kind::write && m.kind == "ro-bind" && (m.why == "protected" || m.why == "vcs"));
    if (guards && !path_within(abs, m.path) && path_within(folded, ascii_lower(m.path))) {
      return make_fs_error("case_variant", abs + " differs only in case from the guarded path " + m.path,
                           (m.kind == "mask" ? "filesystem.denied " : "filesystem.protected_read_only ") + m.path);
    }
  }
  const root_dir* best = nullptr;
  for (const auto& r : roots_) {
    if (path_within(abs, r.path) && (best == nullptr || r.path.size() > best->path.size())) best = &r;
  }
  if (best == nullptr) return make_fs_error("outside_roots", abs + " is outside every root of the plan");
  if (access == access_kind::write) {
    const bool writable = inner != nullptr && (inner->kind == "rw-bind" || (inner->kind == "tmpfs" && inner->path == "/tmp"));
    if (!writable) {
      return make_fs_error("read_only", abs + " is not under a writable root",
                           inner != nullptr ? "filesystem " + inner->why + " " + inner->path : "filesystem.read");
    }
  }
  checked_path out;
  out.root = best;
  out.absolute = abs;
  out.relative = abs == best->path ? std::string() : abs.substr(best->path == "/" ? 1 : best->path.size() + 1);
  return out;
}

fs_error resolver::from_errno(int err, const std::string& what, const std::string& path) {
  const std::string m = what + " " + path + ": " + std::strerror(err);
  switch (err) {
    case ELOOP:
      return make_fs_error("symlink", m + " (the worker follows no symbolic links)", "worker: no symlinks", err);
    case ENOENT:
      return make_fs_error("not_found", m, {}, err);
    case EXDEV:
      return make_fs_error("cross_device", m + " (a mount the plan did not make)", "worker: plan mounts only", err);
    case EACCES:
    case EPERM:
      return make_fs_error("permission_denied", m, "sandbox (mount mode or Landlock)", err);
    case EROFS:
      return make_fs_error("read_only", m, "sandbox mount (read-only)", err);
    case ENOTDIR:
      return make_fs_error("not_a_directory", m, {}, err);
    case EISDIR:
      return make_fs_error("is_directory", m, {}, err);
    case EEXIST:
      return make_fs_error("already_exists", m, {}, err);
    case ENAMETOOLONG:
      return make_fs_error("path_invalid", m, {}, err);
    default:
      return make_fs_error("io_error", m, {}, err);
  }
}

std::uint64_t resolver::mount_id(int fd) noexcept {
  struct statx sx {};
  if (::statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &sx) != 0 || (sx.stx_mask & STATX_MNT_ID) == 0) return 0;
  return sx.stx_mnt_id;
}

namespace {

// openat2 is refused inside sandboxes of root callers (the seccomp filter
// cannot see its flags: docs/seccomp.md): the first ENOSYS switches to the
// component walk for good.
std::atomic<bool> openat2_missing{false};

}  // namespace

const char* resolver::method() noexcept { return openat2_missing ? "openat-walk" : "openat2"; }

long resolver::step(int dir_fd, const std::string& name, int flags, mode_t mode, bool last) const {
  // One component, never a symlink, and across a mount only onto one of the plan's.
  const int step_flags = last ? flags : (O_PATH | O_DIRECTORY);
  long fd = -1;
  if (!openat2_missing) {
    fd = openat2_call(dir_fd, name.c_str(), step_flags, mode, kResolveFlags | RESOLVE_NO_XDEV);
    if (fd < 0 && errno == ENOSYS) {
      openat2_missing = true;
    } else {
      if (fd < 0) refine_not_a_directory(dir_fd, name.c_str(), kResolveFlags);
      if (fd < 0 && errno == EXDEV) {
        fd = openat2_call(dir_fd, name.c_str(), step_flags, mode, kResolveFlags);
        if (fd >= 0 && !is_plan_mount(mount_id(static_cast<int>(fd)))) {
          ::close(static_cast<int>(fd));
          errno = EXDEV;
          return -1;
        }
      }
      return fd;
    }
  }
  // The same rules without openat2: O_NOFOLLOW on every component (the
  // lexical layer already refused ".."), and the mount id compared at each step.
  fd = ::openat(dir_fd, name.c_str(), step_flags | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) {
    const int err = errno;
    struct stat st {};
    if ((err == ENOTDIR || err == ELOOP) && ::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISLNK(st.st_mode)) {
      errno = ELOOP;
    } else {
      errno = err;
    }
    return -1;
  }
  struct stat st {};
  if (!last && ::fstat(static_cast<int>(fd), &st) == 0 && S_ISLNK(st.st_mode)) {
    ::close(static_cast<int>(fd));
    errno = ELOOP;
    return -1;
  }
  const std::uint64_t id = mount_id(static_cast<int>(fd));
  if (id != mount_id(dir_fd) && !is_plan_mount(id)) {
    ::close(static_cast<int>(fd));
    errno = EXDEV;
    return -1;
  }
  return fd;
}

fs_result<unique_fd> resolver::walk_components(const root_dir& root, const std::string& relative, int flags,
                                               mode_t mode) const {
  // One component at a time: a crossing into another mount is accepted only
  // when that mount is one the plan made.
  unique_fd current(::fcntl(root.fd.get(), F_DUPFD_CLOEXEC, 3));
  if (!current) return from_errno(errno, "dup", root.path);
  std::size_t i = 0;
  std::string so_far = root.path;
  while (i <= relative.size()) {
    std::size_t j = relative.find('/', i);
    if (j == std::string::npos) j = relative.size();
    const std::string part = relative.substr(i, j - i);
    const bool last = j == relative.size();
    so_far += (so_far == "/" ? "" : "/") + part;
    const long fd = step(current.get(), part, flags, mode, last);
    if (fd < 0) return from_errno(errno, "open", so_far);
    current.reset(static_cast<int>(fd));
    if (last) break;
    i = j + 1;
  }
  return current;
}

fs_result<unique_fd> resolver::open(const checked_path& path, int flags, mode_t mode) const {
  if (path.relative.empty()) {
    const int fd = ::openat(path.root->fd.get(), ".", flags | O_CLOEXEC, mode);
    if (fd < 0) return from_errno(errno, "open", path.absolute);
    return unique_fd(fd);
  }
  if (!openat2_missing) {
    const long fd = openat2_call(path.root->fd.get(), path.relative.c_str(), flags, mode, kResolveFlags | RESOLVE_NO_XDEV);
    if (fd >= 0) return unique_fd(static_cast<int>(fd));
    refine_not_a_directory(path.root->fd.get(), path.relative.c_str(), kResolveFlags | RESOLVE_NO_XDEV);
    if (errno != EXDEV && errno != ENOSYS) return from_errno(errno, "open", path.absolute);
    if (errno == ENOSYS) openat2_missing = true;
  }
  return walk_components(*path.root, path.relative, flags, mode);
}

fs_result<unique_fd> resolver::open_parent(const checked_path& path, std::string& name) const {
  if (path.relative.empty()) return make_fs_error("path_invalid", path.absolute + " is a root of the plan");
  const auto slash = path.relative.rfind('/');
  checked_path parent = path;
  if (slash == std::string::npos) {
    parent.relative.clear();
    name = path.relative;
  } else {
    parent.relative = path.relative.substr(0, slash);
    name = path.relative.substr(slash + 1);
  }
  parent.absolute = path.absolute.substr(0, path.absolute.size() - name.size() - 1);
  if (parent.absolute.empty()) parent.absolute = "/";
  // Readable (not O_PATH): the commit fsyncs it.
  return open(parent, O_RDONLY | O_DIRECTORY);
}

fs_result<unique_fd> resolver::open_child(int dir_fd, std::string_view name, const std::string& absolute,
                                          int flags) const {
  if (auto checked = check(absolute, access_kind::read); !checked) return checked.error();
  const long fd = step(dir_fd, std::string(name), flags, 0, true);
  if (fd < 0) return from_errno(errno, "open", absolute);
  return unique_fd(static_cast<int>(fd));
}

}  // namespace cordon::fsworker
