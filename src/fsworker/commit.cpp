// commit.cpp — all-or-nothing file changes with O_TMPFILE and renameat2
// (commit.h).
#include "fsworker/commit.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>

#include "core/sha256.h"

namespace cordon::fsworker {
namespace {

std::string temp_name() {
  static std::atomic<std::uint64_t> counter{0};
  static const std::uint64_t seed = std::random_device{}();
  char buf[64];
  std::snprintf(buf, sizeof buf, ".cordon-fs-%d-%016llx-%llu.tmp", static_cast<int>(::getpid()),
                static_cast<unsigned long long>(seed), static_cast<unsigned long long>(counter++));
  return buf;
}

fs_status write_fully(int fd, const std::string& data, const std::string& path) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return resolver::from_errno(errno, "write", path);
    done += static_cast<std::size_t>(n);
  }
  return fs_ok{};
}

// One change while it is being applied.
struct staged {
  const file_change* change = nullptr;
  checked_path where;
  unique_fd dir;
  std::string name;
  std::string temp;   // the temporary name in `dir`, once linked
  bool existed = false;
  mode_t mode = 0644;
  std::string before;
  bool swapped = false;  // phase 2 done for this one
  std::vector<std::pair<unique_fd, std::string>> created_dirs;  // parent fd, name; in creation order
};

fs_status make_parents(const resolver& paths, staged& s) {
  // Creates each missing ancestor below the root, one mkdirat at a time
  // from the descriptor of the one above.
  std::string rel = s.where.relative;
  const auto last = rel.rfind('/');
  if (last == std::string::npos) return fs_ok{};
  rel.resize(last);
  checked_path step = s.where;
  std::size_t i = 0;
  while (i <= rel.size()) {
    std::size_t j = rel.find('/', i);
    if (j == std::string::npos) j = rel.size();
    step.relative = rel.substr(0, j);
    step.absolute = (s.where.root->path == "/" ? "" : s.where.root->path) + "/" + step.relative;
    auto opened = paths.open(step, O_PATH | O_DIRECTORY);
    if (!opened && opened.error().code == "not_found") {
      std::string name;
      auto parent = paths.open_parent(step, name);
      if (!parent) return parent.error();
      if (::mkdirat(parent->get(), name.c_str(), 0755) != 0) return resolver::from_errno(errno, "mkdir", step.absolute);
      s.created_dirs.emplace_back(std::move(*parent), name);
    } else if (!opened) {
      return opened.error();
    }
    i = j + 1;
  }
  return fs_ok{};
}

fs_status stage(const resolver& paths, const file_change& c, std::size_t max_bytes, bool dry_run, staged& s) {
  s.change = &c;
  auto checked = paths.check(c.path, access_kind::write);
  if (!checked) return checked.error();
  s.where = std::move(*checked);
  if (c.create_parents && !c.remove && !dry_run) {
    if (auto made = make_parents(paths, s); !made) return made.error();
  }
  auto dir = paths.open_parent(s.where, s.name);
  if (!dir && dry_run && c.create_parents && dir.error().code == "not_found") {
    // A dry run creates no directory: the file is new, in a new directory.
    if (c.must_exist || c.remove) return make_fs_error("not_found", s.where.absolute + " does not exist");
    if (c.content.size() > max_bytes) {
      return make_fs_error("file_too_large", "new content of " + s.where.absolute + " is larger than the file limit");
    }
    return fs_ok{};
  }
  if (!dir) return dir.error();
  s.dir = std::move(*dir);
  struct stat st {};
  if (::fstatat(s.dir.get(), s.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
    if (S_ISLNK(st.st_mode)) return resolver::from_errno(ELOOP, "write", s.where.absolute);
    if (!S_ISREG(st.st_mode)) return make_fs_error("not_a_file", s.where.absolute + " is not a regular file");
    if (st.st_nlink > 1) return hard_link_error(s.where.absolute, st.st_nlink);
    auto file = paths.open(s.where, O_RDONLY | O_NONBLOCK);  // not waiting on a FIFO swapped in
    if (!file) return file.error();
    if (resolver::mount_id(file->get()) != resolver::mount_id(s.dir.get())) {
      return make_fs_error("protected", s.where.absolute + " is a mount of its own (a protected bind)",
                           "sandbox mount table " + s.where.absolute);
    }
    if (static_cast<std::uint64_t>(st.st_size) > max_bytes) {
      return make_fs_error("file_too_large", s.where.absolute + " is larger than the worker's file limit");
    }
    auto content = read_all(file->get(), static_cast<std::size_t>(st.st_size), max_bytes, s.where.absolute);
    if (!content) return content.error();
    s.before = std::move(*content);
    s.existed = true;
    s.mode = st.st_mode & 07777;
  } else if (errno != ENOENT) {
    return resolver::from_errno(errno, "stat", s.where.absolute);
  } else if (c.mode) {
    s.mode = *c.mode & 07777;
  }
  if (c.must_exist && !s.existed) return make_fs_error("not_found", s.where.absolute + " does not exist");
  if (c.remove && !s.existed) return make_fs_error("not_found", s.where.absolute + " does not exist");
  if (c.must_not_exist && s.existed) return make_fs_error("already_exists", s.where.absolute + " already exists");
  if (c.expected_sha256 && (s.existed ? sha256_hex(s.before) : std::string()) != *c.expected_sha256) {
    return make_fs_error("stale_content", s.where.absolute + " has changed: its SHA-256 is not expected_sha256");
  }
  if (!c.remove && c.content.size() > max_bytes) {
    return make_fs_error("file_too_large", "new content of " + s.where.absolute + " is larger than the file limit");
  }
  if (dry_run || c.remove) return fs_ok{};
  // The new content, complete and on disk before it has any name.
  unique_fd tmp(::openat(s.dir.get(), ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600));
  s.temp = temp_name();
  bool named = false;
  if (!tmp && (errno == EOPNOTSUPP || errno == EISDIR)) {
    tmp.reset(::openat(s.dir.get(), s.temp.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0600));
    named = true;
  }
  if (!tmp) {
    s.temp.clear();
    return resolver::from_errno(errno, "create a temporary file beside", s.where.absolute);
  }
  auto fail = [&](fs_error e) -> fs_status {
    if (named) ::unlinkat(s.dir.get(), s.temp.c_str(), 0);
    s.temp.clear();
    return e;
  };
  if (auto w = write_fully(tmp.get(), c.content, s.where.absolute); !w) return fail(w.error());
  if (::fchmod(tmp.get(), s.mode) != 0) return fail(resolver::from_errno(errno, "chmod", s.where.absolute));
  if (::fsync(tmp.get()) != 0) return fail(resolver::from_errno(errno, "fsync", s.where.absolute));
  if (!named) {
    const std::string proc = "/proc/self/fd/" + std::to_string(tmp.get());
    if (::linkat(AT_FDCWD, proc.c_str(), s.dir.get(), s.temp.c_str(), AT_SYMLINK_FOLLOW) != 0) {
      return fail(resolver::from_errno(errno, "link a temporary file beside", s.where.absolute));
    }
  }
  return fs_ok{};
}

int swap_in(staged& s) {
  const int dir = s.dir.get();
  if (s.change->remove) {
    s.temp = temp_name();
    return ::renameat2(dir, s.name.c_str(), dir, s.temp.c_str(), RENAME_NOREPLACE);
  }
  return ::renameat2(dir, s.temp.c_str(), dir, s.name.c_str(), s.existed ? RENAME_EXCHANGE : RENAME_NOREPLACE);
}

void undo(staged& s) {
  const int dir = s.dir.get();
  if (s.change->remove) {
    ::renameat2(dir, s.temp.c_str(), dir, s.name.c_str(), RENAME_NOREPLACE);
  } else if (s.existed) {
    ::renameat2(dir, s.temp.c_str(), dir, s.name.c_str(), RENAME_EXCHANGE);
  } else {
    ::renameat2(dir, s.name.c_str(), dir, s.temp.c_str(), RENAME_NOREPLACE);
  }
  s.swapped = false;
}

void discard(std::vector<staged>& all) {
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    if (!it->temp.empty()) ::unlinkat(it->dir.get(), it->temp.c_str(), 0);
    for (auto d = it->created_dirs.rbegin(); d != it->created_dirs.rend(); ++d) {
      ::unlinkat(d->first.get(), d->second.c_str(), AT_REMOVEDIR);
    }
  }
}

}  // namespace

std::string sha256_hex(const std::string& data) { return cordon::detail::sha256_hex(data); }

fs_result<std::string> read_all(int fd, std::size_t size_hint, std::size_t max_bytes, const std::string& path) {
  std::string out;
  out.resize(std::min(size_hint, max_bytes));
  std::size_t done = 0;
  for (;;) {
    if (done > max_bytes) return make_fs_error("file_too_large", path + " grew past the worker's file limit while read");
    if (done == out.size()) out.resize(std::min(out.size() + 65536, max_bytes + 1));
    const ssize_t n = ::read(fd, out.data() + done, out.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return resolver::from_errno(errno, "read", path);
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  out.resize(done);
  return out;
}

fs_error hard_link_error(const std::string& path, std::uint64_t links) {
  return make_fs_error("hard_link", path + " has " + std::to_string(links) +
                                        " hard links; the worker touches only files with one name",
                       "worker: single-link files only");
}

fs_result<unique_fd> open_single_file(const resolver& paths, const checked_path& path, struct stat& st) {
  // O_NONBLOCK: opening a FIFO for reading would wait for a writer (the
  // type is checked on the descriptor, then refused).
  auto fd = paths.open(path, O_RDONLY | O_NONBLOCK);
  if (!fd) return fd.error();
  if (::fstat(fd->get(), &st) != 0) return resolver::from_errno(errno, "stat", path.absolute);
  if (!S_ISREG(st.st_mode)) return make_fs_error("not_a_file", path.absolute + " is not a regular file");
  if (st.st_nlink > 1) return hard_link_error(path.absolute, st.st_nlink);
  return fd;
}

fs_result<std::string> read_whole_file(const resolver& paths, const std::string& path, std::size_t max_bytes,
                                       struct stat* st_out) {
  auto checked = paths.check(path, access_kind::read);
  if (!checked) return checked.error();
  struct stat st {};
  auto fd = open_single_file(paths, *checked, st);
  if (!fd) return fd.error();
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes) {
    return make_fs_error("file_too_large", checked->absolute + " is larger than the worker's file limit");
  }
  if (st_out != nullptr) *st_out = st;
  return read_all(fd->get(), static_cast<std::size_t>(st.st_size), max_bytes, checked->absolute);
}

fs_result<std::vector<touched_file>> commit_changes(const resolver& paths, const std::vector<file_change>& changes,
                                                    std::size_t max_file_bytes, bool dry_run) {
  std::vector<staged> all(changes.size());
  for (std::size_t i = 0; i < changes.size(); ++i) {
    if (auto ok = stage(paths, changes[i], max_file_bytes, dry_run, all[i]); !ok) {
      discard(all);
      return ok.error();
    }
    for (std::size_t k = 0; k < i; ++k) {
      if (all[k].where.absolute == all[i].where.absolute) {
        discard(all);
        return make_fs_error("invalid_request", all[i].where.absolute + " is changed twice in one request");
      }
    }
  }
  std::vector<touched_file> touched;
  for (const auto& s : all) {
    touched_file t;
    t.path = s.where.absolute;
    t.action = s.change->remove ? "deleted" : s.existed ? (s.before == s.change->content ? "unchanged" : "replaced")
                                                        : "created";
    t.bytes_before = s.before.size();
    t.sha256_before = s.existed ? sha256_hex(s.before) : "";
    t.bytes_after = s.change->remove ? 0 : s.change->content.size();
    t.sha256_after = s.change->remove ? "" : sha256_hex(s.change->content);
    touched.push_back(std::move(t));
  }
  if (dry_run) return touched;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (swap_in(all[i]) != 0) {
      const int err = errno;
      for (std::size_t k = i; k-- > 0;) undo(all[k]);
      if (all[i].change->remove) all[i].temp.clear();
      discard(all);
      if (err == EBUSY) {
        return make_fs_error("protected", all[i].where.absolute + " is a mount point (a protected bind)",
                             "sandbox mount table " + all[i].where.absolute, err);
      }
      return resolver::from_errno(err, "rename into", all[i].where.absolute);
    }
    all[i].swapped = true;
  }
  // Every target is new: what the temporary names hold now is old content.
  for (auto& s : all) {
    s.created_dirs.clear();
    if (!s.temp.empty()) ::unlinkat(s.dir.get(), s.temp.c_str(), 0);
    ::fsync(s.dir.get());
  }
  return touched;
}

}  // namespace cordon::fsworker
