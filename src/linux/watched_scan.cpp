// The repository scan from a watch set's listings (linux/watched_scan.h).
#include "linux/watched_scan.h"

#include <utility>

namespace cordon::linux_impl {

vcs::vcs_scan watched_scan(watched_root& root, const std::string& home, const std::string& store_dir,
                           listings_taken& how) {
  directory_watch& set = root.set;
  const bool listed_again = !set.refresh().empty();
  if (!set.doubt().empty()) {
    root.known = false;
    how = "walk: " + set.doubt();
    return vcs::scan_vcs_metadata(set.root(), home, vcs::max_directories, nullptr, vcs::listing_settle_ns,
                                  vcs::scan_memory_bound_bytes, store_dir);
  }
  how = "watch";
  if (root.known && !listed_again) {
    if (root.rescan_elsewhere) {
      if (auto scan = root.rescan_elsewhere(set.root(), home, root.last)) return std::move(*scan);
    }
    return vcs::rescan_places(set.root(), home, root.last);
  }
  const vcs::trusted_listings listings = set.trusted();
  vcs::vcs_scan scan = vcs::scan_vcs_metadata(set.root(), home, vcs::max_directories, nullptr,
                                              vcs::listing_settle_ns, vcs::scan_memory_bound_bytes, "", &listings);
  // A scan with a gap is not one to find repositories again from.
  root.known = scan.incomplete.empty() && !scan.truncated;
  root.last = vcs::vcs_scan{};
  root.last.places = scan.places;
  root.last.entries_seen = scan.entries_seen;
  return scan;
}

void watched_changes_since(watched_root& root, const vcs::vcs_scan& before, const std::string& home,
                           deferred_execution_evidence& evidence, const std::string& store_dir,
                           listings_taken& how) {
  vcs::vcs_scan now = watched_scan(root, home, store_dir, how);
  vcs::changes_between(root.set.root(), before, std::move(now), home, evidence);
}

}  // namespace cordon::linux_impl
