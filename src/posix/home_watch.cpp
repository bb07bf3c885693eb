#include "posix/home_watch.h"

#include "posix/unique_fd.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <utility>
#include <cerrno>
#include <chrono>
#include <cstring>

namespace cordon::vcs {
namespace {

bool at_or_after(const timespec& t, const timespec& since) {
  return t.tv_sec > since.tv_sec || (t.tv_sec == since.tv_sec && t.tv_nsec >= since.tv_nsec);
}

struct home_walker {
  const home_watch& watch;
  deferred_execution_evidence& evidence;
  std::uint64_t examined = 0;
  std::size_t found = 0, unnamed = 0;
  bool stopped = false;
  std::chrono::steady_clock::time_point deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(home_time_budget_seconds);

  void gap(const std::string& path, const std::string& why) {
    evidence.complete = false;
    evidence.findings.push_back({"scan_incomplete", path, "", why + ": changes below it were not checked"});
  }

  void changed(const std::string& path, const struct stat& st) {
    if (found++ >= home_max_findings) {
      ++unnamed;
      return;
    }
    evidence.findings.push_back({"home_file", path, "",
                                 S_ISDIR(st.st_mode) ? "directory: an entry was created, removed or renamed in it, or "
                                                       "its mode changed, during the run"
                                                     : "created or changed during the run"});
  }

  bool excluded(const std::string& path) const {
    return std::find(watch.excluded.begin(), watch.excluded.end(), path) != watch.excluded.end();
  }

  // `fd` is the open directory `path`, `depth` levels below the home.
  void walk(unique_fd fd, const std::string& path, std::size_t depth) {
    if (depth > home_max_depth) {
      return gap(path, "deeper than " + std::to_string(home_max_depth) + " levels below the home");
    }
    DIR* dir = ::fdopendir(fd.get());
    if (dir == nullptr) return gap(path, std::string("cannot be listed: ") + std::strerror(errno));
    fd.release();  // the DIR owns it now; closedir() below closes it
    std::vector<std::string> subdirs;
    for (;;) {
      errno = 0;
      dirent* entry = ::readdir(dir);
      if (entry == nullptr) {
        if (errno != 0) gap(path, std::string("cannot be read: ") + std::strerror(errno));
        break;
      }
      const std::string name = entry->d_name;
      if (name == "." || name == "..") continue;
      if (++examined > home_max_entries) {
        stopped = true;
        gap(path, "more than " + std::to_string(home_max_entries) + " entries under the home");
        break;
      }
      const std::string child = path + "/" + name;
      if (excluded(child)) continue;
      struct stat st {};
      if (::fstatat(::dirfd(dir), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno != ENOENT) gap(child, std::string("cannot be examined: ") + std::strerror(errno));
        continue;
      }
      if (at_or_after(st.st_ctim, watch.since)) changed(child, st);
      if (S_ISDIR(st.st_mode)) subdirs.push_back(name);
    }
    const int parent = ::dirfd(dir);
    for (const auto& name : subdirs) {
      if (stopped) break;
      if (std::chrono::steady_clock::now() > deadline) {
        stopped = true;
        gap(path + "/" + name, "the home's time budget of " + std::to_string(home_time_budget_seconds) + " s ran out here");
        break;
      }
      unique_fd sub(::openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!sub) {
        if (errno != ENOENT) gap(path + "/" + name, std::string("cannot be opened: ") + std::strerror(errno));
        continue;
      }
      walk(std::move(sub), path + "/" + name, depth + 1);
    }
    ::closedir(dir);
  }
};

}  // namespace

timespec home_watch_now() {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME_COARSE, &now);
  return now;
}

void home_changes_since(const home_watch& watch, deferred_execution_evidence& evidence) {
  home_walker walker{watch, evidence};
  unique_fd fd(::open(watch.home.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd) {
    walker.gap(watch.home, std::string("cannot be opened: ") + std::strerror(errno));
    return;
  }
  walker.walk(std::move(fd), watch.home, 0);
  evidence.entries += walker.examined;
  if (walker.unnamed > 0) {
    evidence.findings.push_back({"home_file", watch.home, "",
                                 "and " + std::to_string(walker.unnamed) + " more entries created or changed (only " +
                                     std::to_string(home_max_findings) + " are named)"});
  }
}

}  // namespace cordon::vcs
