#include "linux/git_worktrees.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <string_view>

namespace cordon::linux_impl {
namespace {

bool is_directory(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

std::string parent_of(const std::string& path) {
  auto slash = path.find_last_of('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

// The first line of `file`, without "prefix" and trailing blanks; "" when the
// file cannot be read or does not start with the prefix.
std::string first_line_value(const std::string& file, std::string_view prefix) {
  std::ifstream in(file);
  std::string line;
  if (!std::getline(in, line) || line.compare(0, prefix.size(), prefix) != 0) return {};
  line.erase(0, prefix.size());
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.pop_back();
  return line;
}

// A path as git reads it from a pointer file: relative to `base`, resolved on
// the host; "" unless it names an existing directory.
std::string resolve_pointer(const std::string& value, const std::string& base) {
  if (value.empty()) return {};
  resolved_path r = resolve_on_host(value.front() == '/' ? value : base + "/" + value);
  return r.exists && r.is_directory ? r.path : std::string();
}

bool within_any(const std::string& path, const std::vector<std::string>& roots) {
  return std::any_of(roots.begin(), roots.end(), [&](const std::string& root) { return path_is_within(path, root); });
}

// <git_dir>/worktrees/<name>/: the files that send git elsewhere.
void protect_linked_worktrees(const std::string& git_dir, vcs_scan& scan) {
  const std::string worktrees = git_dir + "/worktrees";
  DIR* dir = ::opendir(worktrees.c_str());
  if (dir == nullptr) return;
  while (dirent* entry = ::readdir(dir)) {
    std::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    const std::string linked = worktrees + "/" + entry->d_name;
    if (!is_directory(linked)) continue;
    for (const char* file : {"commondir", "gitdir"}) {
      if (exists(linked + "/" + file)) scan.protect.push_back(linked + "/" + file);
    }
    const std::string config = linked + "/config.worktree";
    (exists(config) ? scan.protect : scan.absent_redirects).push_back(config);
  }
  ::closedir(dir);
}

}  // namespace

void add_worktree_repositories(const std::vector<std::string>& writable_roots,
                               const std::vector<std::string>& readable_roots, const std::string& home,
                               vcs_scan& scan, worktree_roots& out) {
  const std::vector<std::string> found = scan.repositories;
  for (const auto& dot_git : found) {
    if (is_directory(dot_git)) {
      protect_linked_worktrees(dot_git, scan);
      continue;
    }
    const std::string gitdir = resolve_pointer(first_line_value(dot_git, "gitdir: "), parent_of(dot_git));
    if (gitdir.empty()) continue;
    std::string common = resolve_pointer(first_line_value(gitdir + "/commondir", ""), gitdir);
    if (common.empty()) common = gitdir;  // a submodule's own git directory, or a repository moved with --separate-git-dir
    if (within_any(gitdir, writable_roots) && within_any(common, writable_roots)) continue;  // its root's scan covers it
    if (within_any(common, readable_roots) || within_any(common, writable_roots)) continue;  // the policy chose
    if (within_any(common, out.writable)) continue;
    out.writable.push_back(common);
    vcs::scan_git_directory(common, home, scan);
    protect_linked_worktrees(common, scan);
    out.notes.push_back("worktree " + parent_of(dot_git) + " belongs to the repository " + common +
                        ", outside the workspace: it is writable for this run (objects, refs, the worktree's "
                        "index) with its hooks and config read-only, as the workspace's own repository would be");
  }
}

void create_missing_hooks(vcs_scan& scan, std::vector<std::string>& notes) {
  auto& missing = scan.missing;
  for (auto it = missing.begin(); it != missing.end();) {
    const std::string& path = *it;
    const std::string git_dir = parent_of(path);
    struct stat owner {};
    const bool hooks = path.size() > 6 && path.compare(path.size() - 6, 6, "/hooks") == 0;
    // Only a real git directory (it has HEAD) gets a hooks directory made for it.
    if (!hooks || ::lstat(git_dir.c_str(), &owner) != 0 || !S_ISDIR(owner.st_mode) || !exists(git_dir + "/HEAD") ||
        ::mkdir(path.c_str(), 0755) != 0) {
      ++it;
      continue;
    }
    // Owned like the repository, so that the host's git and its user see an ordinary hooks directory.
    if (::geteuid() == 0 && owner.st_uid != 0 && ::lchown(path.c_str(), owner.st_uid, owner.st_gid) != 0) {
      notes.push_back("could not give " + path + " to the repository's owner (" + std::strerror(errno) +
                      "): it stays root's");
    }
    notes.push_back("created the missing " + path +
                    " (empty) so that it can be bound read-only: the command cannot add hooks there");
    scan.protect.push_back(path);
    // The post-run check compares with the directory as it is now, not as the scan found it.
    auto record = scan.records.find(git_dir);
    if (record != scan.records.end()) record->second.metadata[path] = vcs::stamp_of(path);
    it = missing.erase(it);
  }
}

}  // namespace cordon::linux_impl
