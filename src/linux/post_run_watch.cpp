#include "linux/post_run_watch.h"

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <set>
#include <utility>

#include "linux/paths.h"
#include "linux/pool_watch.h"

namespace cordon::linux_impl {

void report_scan_bounds(const std::string& root, const vcs::vcs_scan& scan, backend_build& out) {
  if (scan.truncated) {
    out.warnings.push_back("writable root " + root + " has more than " + std::to_string(vcs::max_directories) +
                           " directories: repositories past the bound are not protected, and the report will say so");
  }
  for (const auto& gap : scan.incomplete) {
    if (gap.refuses_launch) {
      out.blockers.push_back(blocker::for_control(
          control::filesystem_deny, enforcement_level::enforced, enforcement_level::not_enforced,
          "repository metadata " + gap.path + ": " + gap.reason + " (fix or remove it first)"));
    } else {
      out.warnings.push_back("the repository scan cannot see " + gap.path + " (" + gap.reason +
                             "): repositories there are not protected, and the report will say so");
    }
  }
}

void watch_repository_scan(const std::string& root, vcs::vcs_scan scan, post_run_watch& watch) {
  // An absent .gitmodules cannot be kept read-only; warning about it in
  // every repository without submodules would teach people to skip
  // warnings, so the run says so only if the command created one.
  watch.watch_gitmodules.insert(watch.watch_gitmodules.end(), scan.absent_gitmodules.begin(),
                                scan.absent_gitmodules.end());
  watch.watch_absent.insert(watch.watch_absent.end(), scan.absent_redirects.begin(), scan.absent_redirects.end());
  watch.repository_scans.push_back({root, std::move(scan)});
}

void watch_writable_home(const std::string& home, const std::vector<std::string>& writable_roots,
                         post_run_watch& watch) {
  if (home.empty() || home == "/") return;
  const std::string resolved = resolve_on_host(home).path;
  auto inside = [](const std::string& path, const std::string& root) {
    return root == "/" || path == root || path.rfind(root + "/", 0) == 0;
  };
  const bool writable = std::any_of(writable_roots.begin(), writable_roots.end(),
                                    [&](const std::string& root) { return inside(resolved, root); });
  if (!writable) return;
  vcs::home_watch w;
  w.home = resolved;
  for (const auto& root : writable_roots) {
    if (root != resolved && inside(root, resolved)) w.excluded.push_back(root);
  }
  // The scan's listing store is cordon's own, read-only in the run and
  // rewritten after it (a pooled sandbox would see the last run's write).
  if (!watch.listing_store.empty()) {
    const std::string store = resolve_on_host(watch.listing_store).path;
    if (inside(store, resolved)) w.excluded.push_back(store);
  }
  w.since = vcs::home_watch_now();
  watch.home_watch = std::move(w);
}

namespace {
std::atomic<bool> left_to_host{false};
}  // namespace

void leave_repository_check_to_host() { left_to_host.store(true); }

void check_repository_metadata(const post_run_watch& watch, run_outcome& outcome) {
  if (left_to_host.load()) return;  // the pool's process checks after the run (linux/pool_watch.h)
  deferred_execution_evidence evidence;
  for (const auto& path : watch.watch_absent) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0) {
      evidence.findings.push_back({"repository_redirect_created", path, "",
                                   "created during the run: it redirects git's config and hooks"});
    }
  }
  for (const auto& path : watch.watch_gitmodules) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0) {
      outcome.warnings.push_back("created during the run: " + path +
                                 " (submodule URLs and paths the command chose); inspect it before running "
                                 "git submodule there");
    }
  }
  // The scan's child reuses the store's listings and writes the new ones
  // back for the next run of the same root (the home's watch leaves the
  // store out).
  // A root with a watch set in this process (a pool's, linux/pool_watch.h)
  // is checked from it; any other, or a set in doubt, is walked. The
  // report says how (the first walk's reason, else "watch").
  std::string listings;
  for (const auto& scan : watch.repository_scans) {
    std::string how;
    check_writable_root(scan.root, scan.before, watch.home, evidence, watch.listing_store, how);
    if (listings.empty() || (listings == "watch" && how != "watch")) listings = how;
  }
  evidence.listings = listings.empty() ? "walk" : listings;
  if (watch.home_watch) vcs::home_changes_since(*watch.home_watch, evidence);
  // One finding per path and kind: an absent redirect is both watched and stamped.
  std::set<std::pair<std::string, std::string>> seen;
  std::vector<deferred_execution_finding> unique;
  for (auto& f : evidence.findings) {
    if (seen.insert({f.kind, f.path + "\t" + f.key}).second) unique.push_back(std::move(f));
  }
  evidence.findings = std::move(unique);
  for (const auto& f : evidence.findings) {
    outcome.violations.push_back({f.kind, f.key.empty() ? f.path : f.path + " " + f.key, 1});
  }
  if (!evidence.findings.empty()) {
    outcome.warnings.push_back(std::to_string(evidence.findings.size()) +
                               " deferred-execution finding(s): inspect them before running git, a shell or the "
                               "desktop session there (report: deferred_execution)");
  }
  if (!watch.repository_scans.empty()) outcome.deferred_execution = std::move(evidence);
}

}  // namespace cordon::linux_impl
