// The post-run check: the root scanned again and compared with the scan
// taken at launch (posix/vcs_scan.h, changes_since).
#include "posix/vcs_scan_parts.h"

#include <set>

namespace cordon::vcs {
namespace {

using namespace scan_parts;

constexpr std::size_t max_findings = 1000;  // named per run; one more scan_incomplete says the rest were not


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


void changes_since(const std::string& root, const vcs_scan& before, const std::string& home,
                   deferred_execution_evidence& evidence, vcs_scan* after, const std::string& store_dir,
                   const trusted_listings* vouched) {
  changes_between(root, before,
                  scan_vcs_metadata(root, home, max_directories, &before.listings, listing_settle_ns,
                                    scan_memory_bound_bytes, store_dir, vouched),
                  home, evidence, after);
}

void changes_between(const std::string& root, const vcs_scan& before, vcs_scan now, const std::string& home,
                     deferred_execution_evidence& evidence, vcs_scan* after) {
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
