// subreaper_cleanup.cpp — tree cleanup by a child subreaper (subreaper_cleanup.h).
#include "linux/subreaper_cleanup.h"

#include <dirent.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include <algorithm>
#include <csignal>
#include <fstream>
#include <string>

namespace cordon::linux_impl {

subreaper_scope::subreaper_scope() noexcept {
  ::prctl(PR_GET_CHILD_SUBREAPER, &previous_, 0, 0, 0);
  active_ = ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0;
}

subreaper_scope::~subreaper_scope() {
  if (active_ && previous_ == 0) ::prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
}

std::vector<pid_t> current_children() {
  std::vector<pid_t> children;
  DIR* tasks = ::opendir("/proc/self/task");
  if (tasks == nullptr) return children;
  while (dirent* entry = ::readdir(tasks)) {
    if (entry->d_name[0] == '.') continue;
    std::ifstream in(std::string("/proc/self/task/") + entry->d_name + "/children");
    for (long pid = 0; in >> pid;) children.push_back(static_cast<pid_t>(pid));
  }
  ::closedir(tasks);
  std::sort(children.begin(), children.end());
  children.erase(std::unique(children.begin(), children.end()), children.end());
  return children;
}

int kill_remaining_tree(pid_t group, const std::vector<pid_t>& keep) {
  int reaped = 0;
  // Each round kills what is there; the children of what it killed come to
  // this process (subreaper) and are the next round's. A process being
  // killed forks no more, so the rounds end.
  for (int round = 0; round < 100000; ++round) {
    if (group > 0) ::kill(-group, SIGKILL);
    std::vector<pid_t> victims;
    for (pid_t child : current_children()) {
      if (std::find(keep.begin(), keep.end(), child) == keep.end()) victims.push_back(child);
    }
    if (victims.empty()) break;
    for (pid_t child : victims) ::kill(child, SIGKILL);
    for (pid_t child : victims) {
      while (::waitpid(child, nullptr, __WALL) < 0 && errno == EINTR) {
      }
      ++reaped;
    }
  }
  return reaped;
}

}  // namespace cordon::linux_impl
