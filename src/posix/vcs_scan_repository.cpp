// One git directory as the repository scan protects and stamps it: its
// config and includes, hooks, the files that send git elsewhere, its
// submodules and its operation state (posix/vcs_scan_parts.h).
#include "posix/vcs_scan_parts.h"

#include <algorithm>
#include <climits>
#include <cstdlib>

#include "core/git_rules.h"
#include "core/git_sources.h"

namespace cordon::vcs {
namespace scan_parts {
namespace {

constexpr std::size_t kIndexBytes = 64 << 20;  // an index larger than this is not parsed (a finding says so)


}  // namespace

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

namespace {

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

}  // namespace

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

namespace {

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

}  // namespace

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

bool looks_bare(const std::string& dir, const std::vector<std::string>& names) {
  auto has = [&](const char* n) { return std::binary_search(names.begin(), names.end(), std::string(n)); };
  if (!has("HEAD") || !has("objects") || !has("refs")) return false;
  mode_t mode = 0;
  return lstat_mode(dir + "/HEAD", mode) && (S_ISREG(mode) || S_ISLNK(mode)) && is_dir(dir + "/objects") &&
         is_dir(dir + "/refs");
}

}  // namespace scan_parts

void scan_git_directory(const std::string& git_dir, const std::string& home, vcs_scan& scan) {
  scan_parts::protect_git_dir(git_dir, "git_directory", home, scan, 0);
}

}  // namespace cordon::vcs
