// subreaper_cleanup.cpp — tree cleanup by a child subreaper (subreaper_cleanup.h).
#include "linux/subreaper_cleanup.h"

#include <dirent.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
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

namespace {

// Without CONFIG_PROC_CHILDREN: every process whose parent is this one, from
// the fourth field of /proc/PID/stat (after the command name's last ')').
std::vector<pid_t> children_by_stat() {
  std::vector<pid_t> children;
  const long self = static_cast<long>(::getpid());
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return children;
  while (dirent* entry = ::readdir(proc)) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    std::ifstream in(std::string("/proc/") + entry->d_name + "/stat");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto name_end = text.rfind(')');
    if (name_end == std::string::npos) continue;
    char state = 0;
    long parent = 0;
    if (std::sscanf(text.c_str() + name_end + 1, " %c %ld", &state, &parent) == 2 && parent == self) {
      children.push_back(static_cast<pid_t>(std::atol(entry->d_name)));
    }
  }
  ::closedir(proc);
  return children;
}

}  // namespace

std::vector<pid_t> current_children() {
  std::vector<pid_t> children;
  DIR* tasks = ::opendir("/proc/self/task");
  if (tasks == nullptr) return children_by_stat();
  bool listed = false;
  while (dirent* entry = ::readdir(tasks)) {
    if (entry->d_name[0] == '.') continue;
    std::ifstream in(std::string("/proc/self/task/") + entry->d_name + "/children");
    listed = listed || in.is_open();
    for (long pid = 0; in >> pid;) children.push_back(static_cast<pid_t>(pid));
  }
  ::closedir(tasks);
  if (!listed) children = children_by_stat();
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
