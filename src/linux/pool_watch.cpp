// The watch sets of a pool's process (linux/pool_watch.h).
#include "linux/pool_watch.h"

#include <map>
#include <mutex>
#include <vector>

#include "core/pool_scan_hooks.h"
#include "linux/post_run_watch.h"
#include "linux/scan_server.h"
#include "linux/watched_scan.h"

namespace cordon::linux_impl {
namespace {

// One root's set; its mutex serializes the scans that refresh it.
struct registered {
  std::mutex mutex;
  std::optional<watched_root> root;
  int holders = 0;
};

std::mutex registry_mutex;
std::map<std::string, std::shared_ptr<registered>>& registry() {
  static std::map<std::string, std::shared_ptr<registered>> roots;
  return roots;
}

std::shared_ptr<registered> find(const std::string& root) {
  std::lock_guard<std::mutex> lock(registry_mutex);
  auto it = registry().find(root);
  return it == registry().end() ? nullptr : it->second;
}

const post_run_watch* watch_of(const sandbox_plan& plan) {
  return dynamic_cast<const post_run_watch*>(plan.payload());
}

// Drops one hold of each root; a root no longer held is closed.
void release(const std::vector<std::string>& roots) {
  std::lock_guard<std::mutex> lock(registry_mutex);
  for (const auto& root : roots) {
    auto it = registry().find(root);
    if (it != registry().end() && --it->second->holders == 0) registry().erase(it);
  }
}

}  // namespace

vcs::vcs_scan scan_writable_root(const std::string& root, const std::string& home, const std::string& store_dir,
                                 std::string& how) {
  if (auto set = find(root)) {
    std::lock_guard<std::mutex> lock(set->mutex);
    if (set->root) return watched_scan(*set->root, home, store_dir, how);
  }
  how = "walk";  // no set, or one being opened again (repair_pool_watches)
  return vcs::scan_vcs_metadata(root, home, vcs::max_directories, nullptr, vcs::listing_settle_ns,
                                vcs::scan_memory_bound_bytes, store_dir);
}

void check_writable_root(const std::string& root, const vcs::vcs_scan& before, const std::string& home,
                         deferred_execution_evidence& evidence, const std::string& store_dir, std::string& how) {
  if (auto set = find(root)) {
    std::lock_guard<std::mutex> lock(set->mutex);
    if (set->root) return watched_changes_since(*set->root, before, home, evidence, store_dir, how);
  }
  how = "walk";
  vcs::changes_since(root, before, home, evidence, nullptr, store_dir);
}

// The process's scan server, forked before its first set is opened (so
// that it is small); nullptr when it could not be.
scan_server* process_scan_server() {
  static std::unique_ptr<scan_server> server = scan_server::start();
  return server.get();
}

// A set of `root` whole, its rescans given to `server`; nullopt when the
// set cannot vouch for the tree (the root is walked).
std::optional<watched_root> open_root(const std::string& root, scan_server* server) {
  auto opened = directory_watch::open(root, vcs::max_directories);
  if (!opened || !opened->doubt().empty()) return std::nullopt;
  watched_root out{std::move(*opened), {}, false, {}};
  if (server != nullptr) {
    out.rescan_elsewhere = [server](const std::string& at, const std::string& home, const vcs::vcs_scan& earlier) {
      return server->rescan(at, home, earlier);
    };
  }
  return out;
}

std::shared_ptr<void> open_pool_watches(const sandbox_plan& plan) {
  const post_run_watch* watch = watch_of(plan);
  if (watch == nullptr || watch->repository_scans.empty()) return nullptr;
  scan_server* server = process_scan_server();
  auto held = std::make_shared<std::vector<std::string>>();
  for (const auto& scan : watch->repository_scans) {
    {
      std::lock_guard<std::mutex> lock(registry_mutex);
      auto it = registry().find(scan.root);
      if (it != registry().end()) {
        ++it->second->holders;
        held->push_back(scan.root);
        continue;
      }
    }
    // Opened outside the registry's lock: it lists every directory.
    auto opened = open_root(scan.root, server);
    if (!opened) continue;  // not registered: that root is walked
    auto entry = std::make_shared<registered>();
    entry->root = std::move(opened);
    entry->holders = 1;
    std::lock_guard<std::mutex> lock(registry_mutex);
    auto [it, inserted] = registry().emplace(scan.root, entry);
    if (!inserted) ++it->second->holders;  // another pool opened it meanwhile: this set is closed
    held->push_back(scan.root);
  }
  return std::shared_ptr<void>(held.get(), [held](void*) { release(*held); });
}

void repair_pool_watches(const void* holder) {
  if (holder == nullptr) return;
  for (const auto& root : *static_cast<const std::vector<std::string>*>(holder)) {
    auto entry = find(root);
    if (!entry) continue;
    {
      std::lock_guard<std::mutex> lock(entry->mutex);
      if (!entry->root) continue;
      // What is queued is read now (a doubt shows only then); a directory
      // listed again here means the next scan walks the set's listings,
      // not the last scan's places.
      if (!entry->root->set.refresh().empty()) entry->root->known = false;
      if (entry->root->set.doubt().empty()) continue;
      // Closed first: the user's watch limit holds one set of a large root, not two.
      entry->root.reset();
    }
    auto opened = open_root(root, process_scan_server());  // scans of this root walk meanwhile
    std::lock_guard<std::mutex> lock(entry->mutex);
    entry->root = std::move(opened);
  }
}

void check_pooled_run(const sandbox_plan& plan, run_outcome& outcome) {
  if (const post_run_watch* watch = watch_of(plan)) check_repository_metadata(*watch, outcome);
}

void install_pool_scan_hooks() {
  auto& hooks = core::process_pool_scan_hooks();
  hooks.open.store(&open_pool_watches);
  hooks.check.store(&check_pooled_run);
  hooks.repair.store(&repair_pool_watches);
}

}  // namespace cordon::linux_impl
