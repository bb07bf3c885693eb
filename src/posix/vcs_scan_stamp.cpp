// Reads, listings and stamps of the repository scan (posix/vcs_scan_parts.h).
#include "posix/vcs_scan_parts.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include "core/sha256.h"
#include "posix/unique_fd.h"

namespace cordon::vcs {
namespace {

constexpr std::size_t kDigestBytes = 1 << 20;  // content hashed per file; the size is hashed too

}  // namespace

namespace scan_parts {

bool lstat_mode(const std::string& path, mode_t& mode) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return false;
  mode = st.st_mode;
  return true;
}

bool is_dir(const std::string& path) {
  mode_t mode = 0;
  return lstat_mode(path, mode) && S_ISDIR(mode);
}

bool within(const std::string& path, const std::string& root) {
  if (root == "/") return !path.empty() && path[0] == '/';
  return path.compare(0, root.size(), root) == 0 && (path.size() == root.size() || path[root.size()] == '/');
}

std::string join(const std::string& dir, std::string_view name) {
  return dir == "/" ? "/" + std::string(name) : dir + "/" + std::string(name);
}

std::string parent(const std::string& path) {
  auto slash = path.find_last_of('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

std::string read_head(const std::string& path, std::size_t limit) {
  std::string out;
  unique_fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  if (!fd) return out;
  char buffer[65536];
  while (out.size() < limit) {
    ssize_t n = ::read(fd.get(), buffer, std::min(sizeof buffer, limit - out.size()));
    if (n <= 0) break;
    out.append(buffer, static_cast<std::size_t>(n));
  }
  return out;
}

void add_gap(vcs_scan& scan, const std::string& path, std::string reason, bool refuses_launch) {
  if (scan.incomplete.size() < max_gaps) {
    scan.incomplete.push_back({path, std::move(reason), refuses_launch});
  } else if (scan.incomplete.size() == max_gaps) {
    scan.incomplete.push_back({path, "and more places not seen (only " + std::to_string(max_gaps) + " are named)",
                               refuses_launch});
  }
}

// Each "<path> (<why>)" of a git_config_tree's `unreadable` as a gap that
// refuses the launch: the path, and `what` with the why.
void add_config_gaps(vcs_scan& scan, const std::vector<std::string>& unreadable, const std::string& what) {
  for (const auto& bad : unreadable) {
    auto open = bad.find(" (");
    std::string why = open == std::string::npos ? std::string() : ": " + bad.substr(open + 2, bad.size() - open - 3);
    add_gap(scan, bad.substr(0, open), what + why, true);
  }
}

// A directory's entries, sorted, with readdir's type (DT_UNKNOWN when the
// file system does not say): the walk needs lstat(2) only for those.
// An error names why the listing is not whole: it cannot be opened or read,
// or holds more than max_directory_entries.
entry_list sorted_entries(const std::string& dir_path, std::string* error) {
  entry_list entries;
  DIR* dir = ::opendir(dir_path.c_str());
  if (dir == nullptr) {
    if (error) *error = std::string("cannot be listed: ") + std::strerror(errno);
    return entries;
  }
  for (;;) {
    errno = 0;
    dirent* entry = ::readdir(dir);
    if (entry == nullptr) {
      if (errno != 0 && error) *error = std::string("cannot be read: ") + std::strerror(errno);
      break;
    }
    std::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    if (entries.size() >= max_directory_entries) {
      if (error) *error = "more than " + std::to_string(max_directory_entries) + " entries";
      break;
    }
    entries.emplace_back(std::string(name), entry->d_type);
  }
  ::closedir(dir);
  std::sort(entries.begin(), entries.end());
  return entries;
}

std::vector<std::string> sorted_names(const std::string& dir_path) {
  std::vector<std::string> names;
  for (auto& [name, type] : sorted_entries(dir_path)) names.push_back(std::move(name));
  return names;
}

}  // namespace scan_parts

using namespace scan_parts;

bool file_stamp::operator==(const file_stamp& o) const {
  return present == o.present && device == o.device && inode == o.inode && changed.tv_sec == o.changed.tv_sec &&
         changed.tv_nsec == o.changed.tv_nsec && mode == o.mode && digest == o.digest;
}

file_stamp stamp_of(const std::string& path) {
  file_stamp s;
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return s;
  s.present = true;
  s.device = st.st_dev;
  s.inode = st.st_ino;
  s.changed = st.st_ctim;
  s.mode = st.st_mode;
  if (S_ISREG(st.st_mode)) {
    s.digest = detail::sha256_hex(std::to_string(st.st_size) + "\n" + read_head(path, kDigestBytes));
  } else if (S_ISLNK(st.st_mode)) {
    char buffer[PATH_MAX];
    ssize_t n = ::readlink(path.c_str(), buffer, sizeof buffer);
    s.digest = detail::sha256_hex(n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : std::string());
  } else if (S_ISDIR(st.st_mode)) {
    // The listing with each entry's identity: a hook replaced in place changes its inode or ctime.
    std::string listing;
    for (const auto& name : sorted_names(path)) {
      struct stat e {};
      if (::lstat(join(path, name).c_str(), &e) != 0) continue;
      listing += name + '\0' + std::to_string(e.st_ino) + ' ' + std::to_string(e.st_ctim.tv_sec) + '.' +
                 std::to_string(e.st_ctim.tv_nsec) + ' ' + std::to_string(e.st_mode) + '\n';
    }
    s.digest = detail::sha256_hex(listing);
  }
  return s;
}

}  // namespace cordon::vcs
