#include "linux/cgroups.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

namespace cordon::linux_impl {
namespace {

std::atomic<unsigned> run_counter{0};

bool writable_dir(const std::string& dir) { return !dir.empty() && ::access(dir.c_str(), W_OK | X_OK) == 0; }

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::optional<std::uint64_t> read_u64(const std::string& path) {
  std::ifstream in(path);
  std::uint64_t value = 0;
  if (in >> value) return value;
  return std::nullopt;
}

// "key value" lines (memory.events, pids.events, cpu.stat, memory.oom_control).
std::optional<std::uint64_t> read_key(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  std::string k;
  std::uint64_t v = 0;
  while (in >> k >> v) {
    if (k == key) return v;
  }
  return std::nullopt;
}

int write_text(const std::string& path, const std::string& text) {
  unique_fd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd) return errno;
  return ::write(fd.get(), text.data(), text.size()) == static_cast<ssize_t>(text.size()) ? 0 : errno;
}

// Mount points of cgroup v1 hierarchies by controller, and this process's
// path in each (/proc/self/mountinfo, /proc/self/cgroup).
struct v1_layout {
  std::string memory_mount, pids_mount, cpuacct_mount;
  std::string memory_path, pids_path, cpuacct_path;
};

// /proc/self/mountinfo and /proc/self/cgroup, read once for both layouts.
struct proc_cgroup_view {
  std::string mountinfo = read_text("/proc/self/mountinfo");
  std::string cgroup = read_text("/proc/self/cgroup");
};

v1_layout read_v1_layout(const proc_cgroup_view& view) {
  v1_layout l;
  std::istringstream mountinfo(view.mountinfo);
  for (std::string line; std::getline(mountinfo, line);) {
    auto dash = line.find(" - cgroup ");
    if (dash == std::string::npos) continue;
    std::istringstream fields(line);
    std::string id, parent, devno, root, mount_point;
    fields >> id >> parent >> devno >> root >> mount_point;
    std::string options = line.substr(line.find_last_of(' ') + 1);
    std::istringstream opts(options);
    for (std::string opt; std::getline(opts, opt, ',');) {
      if (opt == "memory") l.memory_mount = mount_point;
      if (opt == "pids") l.pids_mount = mount_point;
      if (opt == "cpuacct") l.cpuacct_mount = mount_point;
    }
  }
  std::istringstream cgroup(view.cgroup);
  for (std::string line; std::getline(cgroup, line);) {
    auto first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    // Appended in place: GCC 12 at -O3 warns (-Wrestrict, a false positive,
    // GCC bug 105329) on `"literal" + std::string&&`.
    std::string controllers(1, ',');
    controllers.append(line, first + 1, second - first - 1);
    controllers += ',';
    std::string path = line.substr(second + 1);
    if (controllers.find(",memory,") != std::string::npos) l.memory_path = path;
    if (controllers.find(",pids,") != std::string::npos) l.pids_path = path;
    if (controllers.find(",cpuacct,") != std::string::npos) l.cpuacct_path = path;
  }
  return l;
}

std::string join(const std::string& mount, const std::string& path) {
  if (mount.empty()) return {};
  return path == "/" || path.empty() ? mount : mount + path;
}

// Removes cordon-<pid>-<n> directories of supervisors that no longer exist.
void sweep_stale(const std::string& parent) {
  DIR* dir = ::opendir(parent.c_str());
  if (dir == nullptr) return;
  while (dirent* entry = ::readdir(dir)) {
    unsigned long pid = 0;
    // cordon-<pid>-<n> (runs) and cordon-<pid>-leaf (a supervisor's own leaf).
    if (std::sscanf(entry->d_name, "cordon-%lu-", &pid) != 1) continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
    ::rmdir((parent + "/" + entry->d_name).c_str());  // fails harmlessly while not empty
  }
  ::closedir(dir);
}

bool remove_dir_with_retries(const std::string& dir, std::chrono::milliseconds budget) {
  auto until = std::chrono::steady_clock::now() + budget;
  while (true) {
    if (::rmdir(dir.c_str()) == 0 || errno == ENOENT) return true;
    if (errno != EBUSY || std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// The cgroup v2 mount point and this process's path in it ("0::/path").
void read_v2_layout(const proc_cgroup_view& view, std::string& mount, std::string& own) {
  std::istringstream mountinfo(view.mountinfo);
  for (std::string line; std::getline(mountinfo, line);) {
    if (line.find(" - cgroup2 ") == std::string::npos) continue;
    std::istringstream fields(line);
    std::string id, parent, devno, root, mount_point;
    fields >> id >> parent >> devno >> root >> mount_point;
    if (root == "/") mount = mount_point;  // a bind of a subtree would shift every path
  }
  std::istringstream cgroup(view.cgroup);
  for (std::string line; std::getline(cgroup, line);) {
    if (line.rfind("0::", 0) == 0) own = line.substr(3);
  }
}

// Words of a cgroup.controllers / cgroup.subtree_control file.
bool lists(const std::string& file, const std::string& name) {
  std::istringstream words(read_text(file));
  for (std::string w; words >> w;) {
    if (w == name) return true;
  }
  return false;
}

bool owned_by(const std::string& path, uid_t uid) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && st.st_uid == uid;
}

bool writable_file(const std::string& path) { return ::access(path.c_str(), W_OK) == 0; }

constexpr const char* kV2Controllers[] = {"memory", "pids", "cpu"};

// Fills the site's parents with `dir` for each controller `file` lists, and
// the blocker with the missing ones.
void take_controllers(cgroup_site& site, const std::string& dir, const std::string& file) {
  site.v2 = true;
  std::string missing;
  const std::string listed = read_text(dir + "/" + file);  // once, not once per controller
  for (const char* c : kV2Controllers) {
    bool has = false;
    std::istringstream words(listed);
    for (std::string w; !has && words >> w;) has = w == c;
    if (!has) missing += std::string(" ") + c;
    std::string& parent = c[0] == 'm' ? site.memory_parent : c[0] == 'p' ? site.pids_parent : site.cpu_parent;
    if (has) parent = dir;
  }
  if (!missing.empty()) site.blocker = "cgroup v2 " + dir + "/" + file + " lacks" + missing;
}

// "memory pids" -> "+memory +pids" (cgroup.subtree_control's syntax).
std::string signed_words(const std::string& words, char sign) {
  std::istringstream in(words);
  std::string out;
  for (std::string w; in >> w;) {
    if (!out.empty()) out += ' ';
    out += sign;
    out += w;
  }
  return out;
}

bool only_process(const std::string& dir, pid_t pid) {
  std::istringstream procs(read_text(dir + "/cgroup.procs"));
  bool seen = false;
  for (long p = 0; procs >> p;) {
    if (p != pid) return false;
    seen = true;
  }
  return seen;
}

}  // namespace

cgroup_site find_delegated_v2_site(const std::string& mount, const std::string& own, uid_t uid, pid_t pid) {
  cgroup_site site;
  if (mount.empty() || own.empty()) return site;
  site.v2 = true;
  std::string dir = own == "/" ? mount : mount + own;
  if (own == "/") {  // 1: the root, exempt from the no-internal-processes rule
    if (writable_dir(dir)) take_controllers(site, dir, "cgroup.subtree_control");
    if (!site.any()) site.blocker = "cgroup v2 root " + dir + " is not writable or enables no controller for children";
    return site;
  }
  if (uid == 0) {
    site.blocker = "cgroup v2 without --cgroup-parent: root's own cgroup " + dir +
                   " is not the hierarchy's root (ownership cannot show a delegation to root)";
    return site;
  }
  std::string parent = dir.substr(0, dir.find_last_of('/'));
  if (parent.size() > mount.size() && owned_by(parent, uid) && writable_dir(parent) &&
      writable_file(parent + "/cgroup.procs")) {  // 2: beside our own cgroup
    take_controllers(site, parent, "cgroup.subtree_control");
    if (site.any()) return site;
  }
  if (!owned_by(dir, uid) || !writable_dir(dir) || !writable_file(dir + "/cgroup.procs") ||
      !writable_file(dir + "/cgroup.subtree_control")) {
    site = cgroup_site{};
    site.v2 = true;
    site.blocker = "cgroup v2: neither " + dir + " nor its parent is delegated to uid " + std::to_string(uid) +
                   " (owned by it, with cgroup.procs and cgroup.subtree_control writable)";
    return site;
  }
  if (!only_process(dir, pid)) {
    site = cgroup_site{};
    site.v2 = true;
    site.blocker = "cgroup v2: " + dir + " is delegated but other processes share it (no internal processes: start " +
                   "cordon in a scope of its own, or pass --cgroup-parent)";
    return site;
  }
  site = cgroup_site{};
  take_controllers(site, dir, "cgroup.controllers");  // 3: below our own cgroup, after moving into a leaf
  if (site.any()) site.enter_leaf_of = dir;
  return site;
}

cgroup_site find_cgroup_site(const std::string& explicit_parent) {
  cgroup_site site;
  if (!explicit_parent.empty()) {
    site.v2 = true;
    if (!writable_dir(explicit_parent)) {
      site.blocker = "cgroup parent " + explicit_parent + " is not a writable directory";
      return site;
    }
    std::string enabled(1, ' ');  // appended in place (see read_v1_layout)
    enabled += read_text(explicit_parent + "/cgroup.subtree_control");
    enabled += ' ';
    for (auto& c : enabled) {
      if (c == '\n') c = ' ';
    }
    auto has = [&](const char* name) { return enabled.find(std::string(" ") + name + " ") != std::string::npos; };
    if (has("memory")) site.memory_parent = explicit_parent;
    if (has("pids")) site.pids_parent = explicit_parent;
    if (has("cpu")) site.cpu_parent = explicit_parent;
    if (!site.memory_parent.size() || !site.pids_parent.size() || !site.cpu_parent.size()) {
      site.blocker = "cgroup parent " + explicit_parent + " does not enable memory, pids and cpu in cgroup.subtree_control";
    }
    return site;
  }
  const proc_cgroup_view view;
  std::string v2_mount, v2_own;
  read_v2_layout(view, v2_mount, v2_own);
  cgroup_site v2 = find_delegated_v2_site(v2_mount, v2_own, ::getuid(), ::getpid());
  if (v2.any()) return v2;
  v1_layout l = read_v1_layout(view);
  std::string memory = join(l.memory_mount, l.memory_path);
  std::string pids = join(l.pids_mount, l.pids_path);
  std::string cpu = join(l.cpuacct_mount, l.cpuacct_path);
  if (writable_dir(memory)) site.memory_parent = memory;
  if (writable_dir(pids)) site.pids_parent = pids;
  if (writable_dir(cpu)) site.cpu_parent = cpu;
  if (site.memory_parent.empty() && site.pids_parent.empty() && site.cpu_parent.empty()) {
    site.blocker = "no writable cgroup for uid " + std::to_string(::getuid()) +
                   " (no cgroup v1 memory/pids/cpuacct directory it may write; for cgroup v2 pass a delegated "
                   "parent with --cgroup-parent)" + (v2.blocker.empty() ? "" : "; " + v2.blocker);
  } else if (site.memory_parent.empty() || site.pids_parent.empty() || site.cpu_parent.empty()) {
    site.blocker = "cgroup v1 controller missing or not writable:" +
                   std::string(site.memory_parent.empty() ? " memory" : "") +
                   (site.pids_parent.empty() ? " pids" : "") + (site.cpu_parent.empty() ? " cpuacct" : "");
  }
  return site;
}

run_cgroup::~run_cgroup() { remove(); }

result<void> run_cgroup::enter_leaf(const cgroup_site& site) {
  const std::string& parent = site.enter_leaf_of;
  std::string leaf = parent + "/cordon-" + std::to_string(::getpid()) + "-leaf";
  if (::mkdir(leaf.c_str(), 0755) != 0 && errno != EEXIST) {
    return make_error(error_code::launch_failed, "cannot create cgroup " + leaf, {}, errno);
  }
  if (int err = write_text(leaf + "/cgroup.procs", std::to_string(::getpid())); err != 0) {
    ::rmdir(leaf.c_str());
    return make_error(error_code::launch_failed, "cannot move cordon into its leaf cgroup " + leaf, {}, err);
  }
  leaf_ = leaf;
  leaf_parent_ = parent;
  std::string enable;
  for (const std::string* p : {&site.memory_parent, &site.pids_parent, &site.cpu_parent}) {
    if (p->empty()) continue;
    const char* name = p == &site.memory_parent ? "memory" : p == &site.pids_parent ? "pids" : "cpu";
    if (!lists(parent + "/cgroup.subtree_control", name)) enable += std::string(enable.empty() ? "" : " ") + name;
  }
  if (enable.empty()) return ok;
  if (int err = write_text(parent + "/cgroup.subtree_control", signed_words(enable, '+')); err != 0) {
    leave_leaf();
    return make_error(error_code::launch_failed,
                      "cannot enable " + enable + " in " + parent + "/cgroup.subtree_control (another process in it?)",
                      {}, err);
  }
  leaf_enabled_ = enable;
  return ok;
}

// Back to the delegated cgroup as it was, once the leaf holds only this
// process and no other cgroup below the parent uses the controllers.
void run_cgroup::leave_leaf() {
  if (leaf_.empty() || !only_process(leaf_, ::getpid())) return;
  if (DIR* dir = ::opendir(leaf_parent_.c_str())) {
    std::string own = leaf_.substr(leaf_parent_.size() + 1);
    bool alone = true;
    while (dirent* entry = ::readdir(dir)) {
      if (entry->d_type == DT_DIR && entry->d_name[0] != '.' && own != entry->d_name) alone = false;
    }
    ::closedir(dir);
    if (!alone) return;
  }
  if (!leaf_enabled_.empty()) {
    if (write_text(leaf_parent_ + "/cgroup.subtree_control", signed_words(leaf_enabled_, '-')) != 0) return;
  }
  if (write_text(leaf_parent_ + "/cgroup.procs", std::to_string(::getpid())) != 0) return;
  ::rmdir(leaf_.c_str());
  leaf_.clear();
}

result<run_cgroup> run_cgroup::create(const cgroup_site& site, const cgroup_limits& limits) {
  run_cgroup cg;
  cg.v2_ = site.v2;
  if (!site.enter_leaf_of.empty()) {
    if (auto r = cg.enter_leaf(site); !r) return std::move(r).error_value();
  }
  std::string name = "cordon-" + std::to_string(::getpid()) + "-" + std::to_string(run_counter.fetch_add(1));
  auto make = [&](const std::string& parent, std::string& out) -> result<void> {
    for (const auto& existing : cg.dirs_) {
      if (existing == parent + "/" + name) {  // v2: one directory serves every controller
        out = existing;
        return ok;
      }
    }
    sweep_stale(parent);
    out = parent + "/" + name;
    if (::mkdir(out.c_str(), 0755) != 0) {
      int err = errno;
      out.clear();
      return make_error(error_code::launch_failed, "cannot create cgroup " + parent + "/" + name, {}, err);
    }
    cg.dirs_.push_back(out);
    return ok;
  };
  auto set = [&](const std::string& dir, const char* file, const std::string& value) -> result<void> {
    if (int err = write_text(dir + "/" + file, value); err != 0) {
      return make_error(error_code::launch_failed, "cannot write " + dir + "/" + file, {}, err);
    }
    return ok;
  };
  if (limits.memory_bytes && !site.memory_parent.empty()) {
    if (auto r = make(site.memory_parent, cg.memory_dir_); !r) return std::move(r).error_value();
    std::string bytes = std::to_string(*limits.memory_bytes);
    if (cg.v2_) {
      if (auto r = set(cg.memory_dir_, "memory.max", bytes); !r) return std::move(r).error_value();
      write_text(cg.memory_dir_ + "/memory.swap.max", "0");  // absent without swap accounting
    } else {
      if (auto r = set(cg.memory_dir_, "memory.limit_in_bytes", bytes); !r) return std::move(r).error_value();
      write_text(cg.memory_dir_ + "/memory.memsw.limit_in_bytes", bytes);  // absent without swap accounting
    }
  }
  if (limits.max_processes && !site.pids_parent.empty()) {
    if (auto r = make(site.pids_parent, cg.pids_dir_); !r) return std::move(r).error_value();
    // pids.max accepts at most the kernel's PID_MAX_LIMIT (4194304); more is no limit at all.
    constexpr std::uint64_t kPidMaxLimit = 4194304;
    std::string value = *limits.max_processes >= kPidMaxLimit ? "max" : std::to_string(*limits.max_processes);
    if (auto r = set(cg.pids_dir_, "pids.max", value); !r) {
      return std::move(r).error_value();
    }
  }
  if (limits.cpu_seconds && !site.cpu_parent.empty()) {
    if (auto r = make(site.cpu_parent, cg.cpu_dir_); !r) return std::move(r).error_value();
  }
  return cg;
}

result<void> run_cgroup::attach(pid_t pid) const {
  for (const auto& dir : dirs_) {
    if (int err = write_text(dir + "/cgroup.procs", std::to_string(pid)); err != 0) {
      return make_error(error_code::launch_failed, "cannot move the sandbox into cgroup " + dir, {}, err);
    }
  }
  return ok;
}

std::optional<std::uint64_t> run_cgroup::cpu_usage_ns() const {
  if (cpu_dir_.empty()) return std::nullopt;
  if (v2_) {
    auto usec = read_key(cpu_dir_ + "/cpu.stat", "usage_usec");
    return usec ? std::optional<std::uint64_t>(*usec * 1000) : std::nullopt;
  }
  return read_u64(cpu_dir_ + "/cpuacct.usage");
}

cgroup_stats run_cgroup::stats() const {
  cgroup_stats s;
  if (!memory_dir_.empty()) {
    s.peak_memory_bytes = read_u64(memory_dir_ + (v2_ ? "/memory.peak" : "/memory.max_usage_in_bytes"));
    s.oom_kills = (v2_ ? read_key(memory_dir_ + "/memory.events", "oom_kill")
                       : read_key(memory_dir_ + "/memory.oom_control", "oom_kill"))
                      .value_or(0);
  }
  if (!pids_dir_.empty()) s.forks_refused = read_key(pids_dir_ + "/pids.events", "max").value_or(0);
  s.cpu_usage_ns = cpu_usage_ns();
  return s;
}

result<run_cgroup::janitor> run_cgroup::spawn_janitor() const {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return make_error(error_code::launch_failed, "pipe2", {}, errno);
  unique_fd read_end(fds[0]), write_end(fds[1]);
  pid_t pid = ::fork();
  if (pid < 0) return make_error(error_code::launch_failed, "cannot start the cgroup janitor", {}, errno);
  if (pid == 0) {
    // Its own session, so that a terminal's Ctrl-C to cordon's process group does not reach it.
    ::setsid();
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE}) ::signal(sig, SIG_IGN);
    write_end.reset();
    int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null >= 0) {
      ::dup2(null, 0);
      ::dup2(null, 1);
      ::dup2(null, 2);
    }
    // Hold nothing of the caller's: a pipe kept open here would delay whoever waits for its EOF.
    unsigned keep = static_cast<unsigned>(read_end.get());
    if (keep > 3) ::close_range(3, keep - 1, 0);
    ::close_range(keep + 1, ~0U, 0);
    char byte;
    while (::read(read_end.get(), &byte, 1) != 0) {
      if (errno != EINTR) break;
    }
    // Every holder of the write end (the supervisor and its PID 1) is gone.
    for (const auto& dir : dirs_) remove_dir_with_retries(dir, std::chrono::milliseconds(10000));
    ::_exit(0);
  }
  return janitor{std::move(write_end), pid};
}

void run_cgroup::remove() {
  for (const auto& dir : dirs_) remove_dir_with_retries(dir, std::chrono::milliseconds(2000));
  dirs_.clear();
  leave_leaf();  // no-op while the janitor is still in the leaf; the destructor comes back
}

}  // namespace cordon::linux_impl
