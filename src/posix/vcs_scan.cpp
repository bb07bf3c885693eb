#include "posix/vcs_scan.h"

#include "posix/bounded_scan.h"
#include "posix/listing_store.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/vfs.h>
#include <linux/magic.h>
#endif

#include <algorithm>
#include <deque>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <set>
#include <string_view>

#include "core/git_rules.h"
#include "core/git_sources.h"
#include "core/sha256.h"
#include "posix/bounded_scan.h"
#include "posix/unique_fd.h"

namespace cordon::vcs {
namespace {

constexpr std::size_t kDigestBytes = 1 << 20;  // content hashed per file; the size is hashed too
constexpr std::size_t max_findings = 1000;  // named per run; one more scan_incomplete says the rest were not
constexpr std::size_t kIndexBytes = 64 << 20;  // an index larger than this is not parsed (a finding says so)

// Start-up paths relative to the home directory: what a login or
// interactive shell sources (bash(1) INVOCATION, zsh(1) STARTUP/SHUTDOWN
// FILES, the X session scripts), git's global configuration
// (git-config(1) FILES), systemd's user units and environment
// (systemd.unit(5), environment.d(5)), desktop autostart entries (XDG
// Autostart), and ~/.local/bin, which comes first in many PATHs.
constexpr const char* kStartupPaths[] = {
    ".profile",      ".bashrc",        ".bash_profile", ".bash_login",   ".bash_logout",
    ".zshenv",       ".zprofile",      ".zshrc",        ".zlogin",       ".zlogout",
    ".xprofile",     ".xsessionrc",    ".xinitrc",      ".pam_environment",
    ".gitconfig",    ".config/git",    ".config/systemd/user",           ".config/environment.d",
    ".config/autostart",               ".local/bin",    ".config/fish/config.fish", ".config/fish/conf.d",
};

// Agent and editor configuration, relative to a project's top: what runs
// code with no review moment (agent hooks: .claude/settings*.json,
// .gemini/settings.json; MCP server lists: .mcp.json, .cursor/mcp.json,
// .vscode/mcp.json; slash commands and sub-agents that may run shell:
// .claude/commands, .claude/agents; editor tasks, launch configurations and
// settings naming executables: .vscode/, .idea/; direnv: .envrc; containers
// built and their postCreateCommand run on opening: .devcontainer/,
// .devcontainer.json; Codex's project configuration: .codex/)...
constexpr const char* kAgentRunsCode[] = {
    ".claude/settings.json", ".claude/settings.local.json", ".claude/commands", ".claude/agents",
    ".mcp.json",             ".cursor/mcp.json",            ".gemini/settings.json", ".codex",
    ".vscode",               ".idea",                       ".envrc",                ".devcontainer",
    ".devcontainer.json",
};
// ... and what an agent or CI reads as instructions or configuration, which
// a person is expected to review (reported when created or changed).
constexpr const char* kAgentInstructions[] = {
    "AGENTS.md",         "CLAUDE.md",        "CLAUDE.local.md",      "GEMINI.md",
    ".cursorrules",      ".cursor/rules",    ".windsurfrules",       ".github/copilot-instructions.md",
    ".github/instructions", ".github/workflows", ".gitlab-ci.yml",   ".pre-commit-config.yaml",
};

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

void add_gap(vcs_scan& scan, const std::string& path, std::string reason, bool refuses_launch = false) {
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
using entry_list = std::vector<std::pair<std::string, unsigned char>>;
entry_list sorted_entries(const std::string& dir_path, std::string* error = nullptr) {
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

// A pointer file's "gitdir: <path>", resolved from `base`; "" unless it names
// an existing directory.
std::string pointer_target(const std::string& file, const std::string& base) {
  std::string text = read_head(file, 4096);
  if (text.rfind("gitdir:", 0) != 0) return {};
  text.erase(0, 7);
  auto end = text.find_first_of("\r\n");
  if (end != std::string::npos) text.erase(end);
  auto first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return {};
  text.erase(0, first);
  std::string path = text[0] == '/' ? text : base + "/" + text;
  char buffer[PATH_MAX];
  if (::realpath(path.c_str(), buffer) == nullptr || !is_dir(buffer)) return {};
  return buffer;
}

std::string expand_home(const std::string& value, const std::string& home) {
  if (value.rfind("~/", 0) == 0) return home.empty() ? std::string() : home + value.substr(1);
  return value;
}

std::size_t hash_bytes_of(const std::vector<core::git_config_entry>& entries) {
  for (const auto& e : entries) {
    if (e.section == "extensions" && e.name == "objectformat" && e.value == "sha256") return 32;
  }
  return 20;
}

void add_protect_or_watch(vcs_scan& scan, const std::string& path, bool watch_absent) {
  mode_t mode = 0;
  if (lstat_mode(path, mode)) {
    scan.protect.push_back(path);
  } else if (watch_absent) {
    scan.absent_redirects.push_back(path);
  } else {
    scan.missing.push_back(path);
  }
}

// The config of one git directory (and config.worktree): its executable
// keys, its includes (protected or watched), core.hooksPath (protected).
void read_config(const std::string& git_dir, const std::string& work_tree, const std::string& home, vcs_scan& scan,
                 repository_record& record) {
  std::vector<core::git_config_entry> entries;
  for (const char* name : {"config", "config.worktree"}) {
    if (scan.config_bytes > max_scan_config_bytes) {
      // Not a refusal: no workspace is refused for its size. Its config and
      // hooks/ are still bound read-only below; what it would include is
      // not, and the report says so after the run (the same budget runs out).
      add_gap(scan, git_dir + "/" + name,
              "not read: the scan read " + std::to_string(max_scan_config_bytes) + " bytes of config already");
      continue;
    }
    core::git_config_tree tree = core::read_git_config_tree(git_dir + "/" + name, home);
    scan.config_bytes += tree.bytes;
    add_config_gaps(scan, tree.unreadable, "git config cordon cannot read");
    for (std::size_t i = 1; i < tree.files.size(); ++i) {  // includes
      add_protect_or_watch(scan, tree.files[i], true);
      record.metadata[tree.files[i]] = stamp_of(tree.files[i]);
    }
    entries.insert(entries.end(), tree.entries.begin(), tree.entries.end());
  }
  for (const auto& e : entries) {
    if (core::git_key_runs_code(e)) record.keys.push_back(e.key() + "\t" + e.value + "\t" + e.file);
    if (e.section != "core" || e.name != "hookspath" || !e.subsection.empty() || e.value.empty()) continue;
    std::string path = expand_home(e.value, home);
    if (path.empty()) {
      scan.missing.push_back(e.value + " (core.hooksPath of " + git_dir + ")");
      continue;
    }
    if (path[0] != '/') path = work_tree + "/" + path;
    mode_t mode = 0;
    if (lstat_mode(path, mode)) {
      scan.protect.push_back(path);
    } else {
      scan.missing.push_back(path + " (core.hooksPath of " + git_dir + ")");
    }
    record.metadata[path] = stamp_of(path);
  }
  std::string index = read_head(git_dir + "/index", kIndexBytes + 1);
  if (index.size() > kIndexBytes) {
    record.gitlinks.push_back("(index larger than 64 MiB: not parsed)");
  } else if (!index.empty()) {
    if (auto links = core::gitlinks_in_index(index, hash_bytes_of(entries))) record.gitlinks = std::move(*links);
  }
}

// The `exec` (or `x`) lines of a todo list (git-rebase(1) "-i": "exec
// <cmd>" runs the command; the sequencer reads the same syntax), trimmed.
std::vector<std::string> exec_lines_of(const std::string& todo) {
  std::vector<std::string> out;
  const std::string text = read_head(todo, core::max_config_bytes);
  std::size_t at = 0;
  while (at < text.size()) {
    auto end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + at, end - at);
    at = end + 1;
    auto first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos) continue;
    line.remove_prefix(first);
    auto word_end = line.find_first_of(" \t");
    std::string_view word = line.substr(0, word_end);
    if (word == "exec" || word == "x") out.push_back(todo + "\t" + std::string(line));
  }
  return out;
}

// gitrepository-layout(5) and git's sequencer: an interactive rebase keeps
// rebase-merge/git-rebase-todo, `git am` and the apply backend
// rebase-apply/, cherry-pick and revert sequencer/todo. Not bound read-only
// (git writes them while it works); compared after the run.
void record_operation_state(const std::string& git_dir, repository_record& record) {
  for (const char* name : {"rebase-merge", "rebase-apply", "sequencer"}) {
    const std::string dir = git_dir + "/" + name;
    file_stamp stamp = stamp_of(dir);
    if (stamp.present && S_ISDIR(stamp.mode)) {
      for (const char* todo : {"git-rebase-todo", "todo"}) {
        auto lines = exec_lines_of(dir + "/" + todo);
        record.exec_lines.insert(record.exec_lines.end(), lines.begin(), lines.end());
      }
    }
    record.operation[dir] = std::move(stamp);
  }
}

void protect_git_dir(const std::string& git_dir, const std::string& kind, const std::string& home, vcs_scan& scan,
                     int depth) {
  repository_record& record = scan.records[git_dir];
  record.kind = kind;
  record_operation_state(git_dir, record);
  // The work tree core.hooksPath is relative to: the parent of a .git, the bare repository itself.
  const std::string work_tree = kind == "bare" ? git_dir : parent(git_dir);
  read_config(git_dir, work_tree, home, scan, record);
  // A linked worktree's git directory has a commondir: its hooks and config
  // are the common directory's, scanned on their own.
  mode_t common_mode = 0;
  const bool linked = lstat_mode(git_dir + "/commondir", common_mode);
  for (const char* name : {"hooks", "config"}) {
    std::string p = git_dir + "/" + name;
    mode_t mode = 0;
    if (lstat_mode(p, mode)) {
      scan.protect.push_back(p);
    } else if (!linked) {
      scan.missing.push_back(p);
    }
    record.metadata[p] = stamp_of(p);
  }
  if (linked) add_protect_or_watch(scan, git_dir + "/gitdir", true);
  // gitrepository-layout(5): "commondir" moves config and hooks elsewhere;
  // "config.worktree" adds config when extensions.worktreeConfig is set.
  for (const char* name : {"commondir", "config.worktree"}) {
    std::string p = git_dir + "/" + name;
    add_protect_or_watch(scan, p, true);
    record.metadata[p] = stamp_of(p);
  }
  if (depth > 8) return;
  // Submodules keep their own hooks and config under .git/modules/<name>/
  // (nested names have more levels: modules/a/modules/b).
  const std::string modules = git_dir + "/modules";
  for (const auto& name : sorted_names(modules)) {
    std::string sub = join(modules, name);
    mode_t mode = 0;
    if (is_dir(sub) && lstat_mode(sub + "/config", mode)) protect_git_dir(sub, "git_directory", home, scan, depth + 1);
  }
}

// Is `dir` (whose names are `names`, sorted) a repository by itself?
// git's is_git_directory(): HEAD, objects/ and refs/.
bool looks_bare(const std::string& dir, const std::vector<std::string>& names) {
  auto has = [&](const char* n) { return std::binary_search(names.begin(), names.end(), std::string(n)); };
  if (!has("HEAD") || !has("objects") || !has("refs")) return false;
  mode_t mode = 0;
  return lstat_mode(dir + "/HEAD", mode) && (S_ISREG(mode) || S_ISLNK(mode)) && is_dir(dir + "/objects") &&
         is_dir(dir + "/refs");
}

// Does the kernel set ctime itself on this file system (listing_cache)?
// FUSE and network file systems take it from a server the user may run.
bool ctime_is_kernels(const std::string& path) {
#if defined(__linux__)
  struct statfs fs {};
  if (::statfs(path.c_str(), &fs) != 0) return false;
  switch (static_cast<unsigned long>(fs.f_type)) {
    case EXT4_SUPER_MAGIC:  // also ext2 and ext3
    case XFS_SUPER_MAGIC:
    case BTRFS_SUPER_MAGIC:
    case TMPFS_MAGIC:
      return true;
    default:
      return false;
  }
#else
  (void)path;
  return false;
#endif
}

timespec clock_now() {
  timespec now{};
#if defined(CLOCK_REALTIME_COARSE)
  ::clock_gettime(CLOCK_REALTIME_COARSE, &now);  // the clock the kernel stamps ctime from
#else
  ::clock_gettime(CLOCK_REALTIME, &now);
#endif
  return now;
}

std::int64_t ns_of(const timespec& t) { return static_cast<std::int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec; }

bool kept_by_walk(const std::string& name, unsigned char type) {
  return type == DT_DIR || type == DT_UNKNOWN || name == ".git" || name == "HEAD" || name == "objects" ||
         name == "refs";
}

struct walker {
  const std::string& root;
  const std::string& home;
  vcs_scan& scan;
  std::uint64_t max_entries;
  const listing_cache* reuse = nullptr;
  std::int64_t settle_ns = listing_settle_ns;
  std::map<dev_t, bool> trusted{};  // ctime_is_kernels, once per device
  std::chrono::steady_clock::time_point deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(scan_time_budget_seconds);
  bool out_of_time = false;

  void found_dot_git(const std::string& dir_path, const std::string& child, bool directory) {
    scan.repositories.push_back(child);
    if (directory) {
      protect_git_dir(child, "git_directory", home, scan, 0);
    } else {
      scan.protect.push_back(child);  // a gitdir pointer must not be redirected
      repository_record& record = scan.records[child];
      record.kind = "git_file";
      record.metadata[child] = stamp_of(child);
      // The directory it names is the repository git uses: inside the root,
      // it gets the protections of a .git directory (outside, the worktree
      // rules of linux/git_worktrees.h decide).
      std::string target = pointer_target(child, dir_path);
      if (!target.empty() && within(target, root) && !scan.records.count(target)) {
        protect_git_dir(target, "gitdir", home, scan, 0);
      }
    }
    std::string gitmodules = dir_path + "/.gitmodules";
    mode_t mode = 0;
    (lstat_mode(gitmodules, mode) ? scan.protect : scan.absent_gitmodules).push_back(gitmodules);
  }

  // The subdirectories of `dir_path` to walk (names only: what the
  // recursion keeps per level), after handling what it holds itself.
  // False: it is a bare repository, or the walk must stop.
  // What `dir_path` (whose lstat is `self`, taken before it is read)
  // holds, from the earlier scan's listing when its identity and ctime
  // match, else read; a listing whose ctime has settled is kept for the next.
  entry_list entries_of(const std::string& dir_path, const struct stat& self) {
    const std::pair<dev_t, ino_t> key{self.st_dev, self.st_ino};
    auto trust = trusted.find(self.st_dev);
    if (trust == trusted.end()) trust = trusted.emplace(self.st_dev, ctime_is_kernels(dir_path)).first;
    if (!trust->second) {
      std::string error;
      entry_list entries = sorted_entries(dir_path, &error);
      if (!error.empty()) add_gap(scan, dir_path, error);  // what was listed is still looked at
      return entries;
    }
    if (reuse != nullptr) {
      auto it = reuse->listings.find(key);
      if (it != reuse->listings.end() && it->second.changed.tv_sec == self.st_ctim.tv_sec &&
          it->second.changed.tv_nsec == self.st_ctim.tv_nsec) {
        ++scan.listings.reused;
        scan.listings.listings.emplace(key, it->second);
        return it->second.entries;
      }
    }
    const timespec read_at = clock_now();
    std::string error;
    entry_list entries = sorted_entries(dir_path, &error);
    if (!error.empty()) {
      add_gap(scan, dir_path, error);
      return entries;  // not kept: the next scan reads it again and names the gap again
    }
    entries.erase(std::remove_if(entries.begin(), entries.end(),
                                 [](const auto& e) { return !kept_by_walk(e.first, e.second); }),
                  entries.end());
    if (ns_of(self.st_ctim) + settle_ns < ns_of(read_at)) scan.listings.listings[key] = {self.st_ctim, entries};
    return entries;
  }

  bool visit(const std::string& dir_path, const struct stat& self, std::size_t depth,
             std::vector<std::pair<std::string, struct stat>>& subdirs) {
    const auto entries = entries_of(dir_path, self);
    {
      std::vector<std::string> names;
      names.reserve(entries.size());
      for (const auto& entry : entries) names.push_back(entry.first);
      if (looks_bare(dir_path, names)) {
        scan.repositories.push_back(dir_path);
        protect_git_dir(dir_path, "bare", home, scan, 0);
        return false;  // objects and refs are not work tree
      }
    }
    for (const auto& [name, type] : entries) {
      if (type != DT_UNKNOWN && type != DT_DIR && name != ".git") continue;  // a file, a link: not walked
      std::string child = join(dir_path, name);
      struct stat st {};
      if (::lstat(child.c_str(), &st) != 0) {
        // Gone meanwhile (ENOENT) is nothing; anything else (EACCES on a
        // directory without search permission, ENAMETOOLONG) hides it.
        if (errno != ENOENT) add_gap(scan, child, std::string("cannot be examined: ") + std::strerror(errno));
        continue;
      }
      if (name == ".git") {
        found_dot_git(dir_path, child, S_ISDIR(st.st_mode));
        continue;
      }
      if (!S_ISDIR(st.st_mode)) continue;
      if (depth + 1 > max_depth) {
        // Only this subtree is past the bound: its siblings are still walked,
        // so a deep chain cannot hide what lies beside it.
        add_gap(scan, child, "deeper than " + std::to_string(max_depth) + " directories: not checked");
        continue;
      }
      if (++scan.entries_seen > max_entries) {
        scan.truncated = true;
        return false;
      }
      subdirs.emplace_back(name, st);
    }
    return true;
  }

  // Breadth first: past the entry bound, what is left unseen is the
  // deepest part of the tree, never a repository beside a large subtree
  // that sorts first. The queue holds at most max_entries directories.
  void walk(const std::string& root_path, const struct stat& root_self) {
    struct pending {
      std::string path;
      struct stat self;
      std::size_t depth;
    };
    std::deque<pending> queue;
    queue.push_back({root_path, root_self, 0});
    while (!queue.empty() && !scan.truncated) {
      pending next = std::move(queue.front());
      queue.pop_front();
      if (std::chrono::steady_clock::now() > deadline) {
        add_gap(scan, next.path, "the scan's time budget of " + std::to_string(scan_time_budget_seconds) +
                                     " s ran out here; this and what follows were not checked");
        out_of_time = true;
        return;
      }
      std::vector<std::pair<std::string, struct stat>> subdirs;
      if (!visit(next.path, next.self, next.depth, subdirs)) continue;  // a bare repository, or the bound
      for (auto& [sub, st] : subdirs) queue.push_back({join(next.path, sub), st, next.depth + 1});
    }
  }
};

void watch_startup(const std::string& root, const std::string& home, vcs_scan& scan) {
  if (home.empty() || home == "/") return;
  for (const char* relative : kStartupPaths) {
    std::string path = home + "/" + relative;
    if (!within(path, root)) continue;
    file_stamp stamp = stamp_of(path);
    if (stamp.present) scan.protect.push_back(path);
    scan.startup[path] = std::move(stamp);
  }
}

// Where git runs for each repository found: the directory holding its .git
// (a directory or a file), and a bare repository itself when `bare`.
std::set<std::string> work_trees_of(const vcs_scan& scan, bool bare) {
  std::set<std::string> out;
  for (const auto& [path, record] : scan.records) {
    const bool dot_git = path.size() > 5 && path.compare(path.size() - 5, 5, "/.git") == 0;
    if (bare && record.kind == "bare") out.insert(path);
    else if (dot_git && (record.kind == "git_directory" || record.kind == "git_file")) out.insert(parent(path));
  }
  return out;
}

// At most max_findings are named; the next is one scan_incomplete saying so
// (the report, its violations and the summary stay bounded too).
void add(deferred_execution_evidence& e, std::string kind, std::string path, std::string key, std::string detail) {
  if (e.findings.size() > max_findings) return;
  if (e.findings.size() == max_findings) {
    e.complete = false;
    e.findings.push_back({"scan_incomplete", std::move(path), "",
                          "more than " + std::to_string(max_findings) + " findings: the rest are not named"});
    return;
  }
  e.findings.push_back({std::move(kind), std::move(path), std::move(key), std::move(detail)});
}

// The findings of one repository against what it was (`before` null: new).
void compare(const std::string& path, const repository_record& now, const repository_record* before,
             deferred_execution_evidence& e) {
  if (before == nullptr) {
    add(e, "repository_created", path, "", now.kind);
  } else {
    for (const auto& [file, stamp] : now.metadata) {
      auto was = before->metadata.find(file);
      if (was != before->metadata.end() && was->second == stamp) continue;
      if (was == before->metadata.end() && !stamp.present) continue;
      // A file that was absent and now exists sends git elsewhere (commondir,
      // config.worktree, an include, a gitdir), except hooks/ and config themselves.
      const bool created = stamp.present && (was == before->metadata.end() || !was->second.present);
      const bool own = file == path + "/hooks" || file == path + "/config";
      add(e, created && !own ? "repository_redirect_created" : "repository_changed", file, "",
          !stamp.present ? "removed" : created ? "created" : "changed (inode, ctime or content)");
    }
  }
  // Hooks in a new repository, or in a hooks directory that changed.
  for (const auto& [file, stamp] : now.metadata) {
    if (!stamp.present || !S_ISDIR(stamp.mode)) continue;
    auto was = before ? before->metadata.find(file) : now.metadata.end();
    if (before && was != before->metadata.end() && was->second == stamp) continue;
    for (const auto& name : sorted_names(file)) {
      if (name.size() > 7 && name.compare(name.size() - 7, 7, ".sample") == 0) continue;
      add(e, "hook", join(file, name), "", "in " + file);
    }
  }
  std::set<std::string> old_keys, old_links;
  if (before) {
    old_keys.insert(before->keys.begin(), before->keys.end());
    old_links.insert(before->gitlinks.begin(), before->gitlinks.end());
  }
  for (const auto& k : now.keys) {
    if (old_keys.count(k)) continue;
    auto tab = k.find('\t'), tab2 = k.find('\t', tab + 1);
    std::string key = k.substr(0, tab);
    add(e, key == "core.hookspath" ? "hooks_path" : "executable_config", k.substr(tab2 + 1), key,
        k.substr(tab + 1, tab2 - tab - 1));
  }
  for (const auto& link : now.gitlinks) {
    if (!old_links.count(link)) add(e, "gitlink_added", link, "", "in the index of " + path);
  }
  // Operation state created or changed (removed is git finishing its work).
  for (const auto& [dir, stamp] : now.operation) {
    if (!stamp.present) continue;
    auto was = before ? before->operation.find(dir) : now.operation.end();
    const bool existed = before && was != before->operation.end() && was->second.present;
    if (existed && was->second == stamp) continue;
    add(e, "operation_state", dir, "", existed ? "changed: git resumes it on --continue" : "created: git resumes it on --continue");
  }
  std::set<std::string> old_exec;
  if (before) old_exec.insert(before->exec_lines.begin(), before->exec_lines.end());
  for (const auto& line : now.exec_lines) {
    if (old_exec.count(line)) continue;
    auto tab = line.find('\t');
    add(e, "operation_exec", line.substr(0, tab), "", line.substr(tab + 1));
  }
}

}  // namespace

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

namespace {

vcs_scan scan_here(const std::string& root, const std::string& home, std::uint64_t max_entries,
                   const listing_cache* reuse, std::int64_t settle_ns) {
  vcs_scan scan;
  struct stat self {};
  if (::lstat(root.c_str(), &self) != 0) {
    add_gap(scan, root, std::string("cannot be examined: ") + std::strerror(errno));
  } else {
    walker w{root, home, scan, max_entries};
    w.reuse = reuse;
    w.settle_ns = settle_ns;
    w.walk(root, self);
  }
  watch_startup(root, home, scan);
  return scan;
}

// In the scan's child: the store's listings (besides `reuse`) in, this
// scan's listings back to the store, none to the caller.
vcs_scan scan_with_store(const std::string& root, const std::string& home, std::uint64_t max_entries,
                         const listing_cache* reuse, std::int64_t settle_ns, const std::string& store_dir) {
  listing_cache kept = load_listings(store_dir, root);
  if (reuse != nullptr) {
    for (const auto& [id, listing] : reuse->listings) kept.listings.emplace(id, listing);
  }
  vcs_scan scan = scan_here(root, home, max_entries, &kept, settle_ns);
  (void)save_listings(store_dir, root, scan.listings);  // a store not written only costs the next run its reuse
  scan.listings.listings.clear();
  return scan;
}

}  // namespace

vcs_scan scan_vcs_metadata(const std::string& root, const std::string& home, std::uint64_t max_entries,
                           const listing_cache* reuse, std::int64_t settle_ns, std::uint64_t memory_bound,
                           const std::string& store_dir) {
  return run_bounded_scan(
      root,
      [&] {
        return store_dir.empty() ? scan_here(root, home, max_entries, reuse, settle_ns)
                                 : scan_with_store(root, home, max_entries, reuse, settle_ns, store_dir);
      },
      memory_bound);
}

void apply_host_config(const std::string& root, const core::git_config_tree& host, const std::string& home,
                       vcs_scan& scan) {
  add_config_gaps(scan, host.unreadable, "the host's git config cordon cannot read");
  for (const auto& file : host.files) {
    if (within(file, root)) add_protect_or_watch(scan, file, true);
  }
  const std::set<std::string> work_trees = work_trees_of(scan, true);
  // Existing paths become read-only binds; absent ones are watched (creating
  // one is a repository_redirect_created finding after the run).
  std::set<std::string> named;
  for (const auto& entry : host.entries) {
    for (const auto& path : core::git_entry_paths(entry, "", home)) named.insert(path);  // absolute and ~/ paths
    for (const auto& work_tree : work_trees) {
      for (const auto& path : core::git_entry_paths(entry, work_tree, home)) named.insert(path);
    }
  }
  for (const auto& path : named) {
    // The root itself (or above it) is the work, not a program: never bound read-only whole.
    if (within(path, root) && path != root) add_protect_or_watch(scan, path, true);
  }
}

void watch_agent_config(const std::string& root, const std::vector<std::string>& opted_out, vcs_scan& scan) {
  std::set<std::string> tops = work_trees_of(scan, false);
  for (auto it = tops.begin(); it != tops.end();) it = within(*it, root) ? std::next(it) : tops.erase(it);
  tops.insert(root);
  for (const auto& top : tops) {
    for (const char* relative : kAgentRunsCode) {
      const std::string path = join(top, relative);
      const bool opted = std::find(opted_out.begin(), opted_out.end(), path) != opted_out.end();
      vcs_scan::agent_path entry{stamp_of(path), true};
      if (!opted && entry.stamp.present) scan.protect.push_back(path);
      scan.agent[path] = std::move(entry);
    }
    for (const char* relative : kAgentInstructions) {
      const std::string path = join(top, relative);
      scan.agent[path] = {stamp_of(path), false};
    }
  }
}

void scan_git_directory(const std::string& git_dir, const std::string& home, vcs_scan& scan) {
  protect_git_dir(git_dir, "git_directory", home, scan, 0);
}

void changes_since(const std::string& root, const vcs_scan& before, const std::string& home,
                   deferred_execution_evidence& evidence, vcs_scan* after, const std::string& store_dir) {
  vcs_scan now = scan_vcs_metadata(root, home, max_directories, &before.listings, listing_settle_ns,
                                   scan_memory_bound_bytes, store_dir);
  evidence.entries += now.entries_seen;
  if (now.truncated) {
    evidence.complete = false;
    add(evidence, "scan_incomplete", root, "",
        "more than " + std::to_string(max_directories) + " directories or deeper than " + std::to_string(max_depth) +
            ": repositories beyond the bound were not checked");
  }

  // Repositories added from outside the root (a host worktree's common directory): stamped again one by one.
  for (const auto& [path, record] : before.records) {
    if (now.records.count(path) || within(path, root) || !is_dir(path)) continue;
    protect_git_dir(path, record.kind, home, now, 0);
  }
  for (const auto& [path, record] : now.records) {
    auto was = before.records.find(path);
    compare(path, record, was == before.records.end() ? nullptr : &was->second, evidence);
  }
  for (const auto& [path, stamp] : now.startup) {
    auto was = before.startup.find(path);
    if (was != before.startup.end() && was->second == stamp) continue;
    add(evidence, "startup_file", path, "",
        !stamp.present ? "removed" : (was == before.startup.end() || !was->second.present) ? "created" : "changed");
  }
  for (const auto& [path, was] : before.agent) {
    file_stamp stamp = stamp_of(path);
    if (stamp == was.stamp || (!stamp.present && !was.stamp.present)) continue;
    const char* what = !stamp.present ? "removed" : !was.stamp.present ? "created" : "changed";
    add(evidence, was.runs_code ? "agent_config" : "instruction_file", path, "",
        std::string(what) + (was.runs_code ? ": an agent or editor runs what it names without asking"
                                           : ": an agent or CI reads it as instructions; review it"));
  }
  for (const auto& gap : now.incomplete) {
    evidence.complete = false;
    add(evidence, "scan_incomplete", gap.path, "", gap.reason + ": what it holds or names was not checked");
  }
  if (after != nullptr) *after = std::move(now);
}

}  // namespace cordon::vcs
