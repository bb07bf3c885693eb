// What a pooled call would pay for the repository scan's listings with the
// inotify watch set (linux/directory_watch.h) against the walks it pays now,
// side by side in one run on one tree (docs/benchmarks.md, "Workspace size:
// an inotify watch set"). Not a test: numbers for the document.
//
//   cordon_watch_set_bench ROOT [RUNS]
//
// For ROOT (a workspace, e.g. bench/workspace_floor.py's TREES=dir/ws150000),
// medians of RUNS (default 5), wall and CPU in ms:
//   walk cold     scan_vcs_metadata(ROOT) with no listings kept: every
//                 directory read (in the scan's memory-bounded child)
//   walk kept     the same with the listings of the walk before (one lstat
//                 per directory: what a run pays now, twice per call)
//   watch open    directory_watch::open(ROOT): every directory watched and
//                 listed (what a pool would pay once, while it prepares)
//   refresh 0     refresh() when nothing changed (what a call would pay per
//                 walk replaced, before the stamps of what git reads)
//   refresh 100   refresh() after 100 files made in 100 directories
//   scan watched  linux_impl::watched_scan() the first time: a refresh()
//                 and the launch scan from the set's listings (no directory
//                 read; what git reads stamped), in the scan's memory-bounded
//                 child
//   scan quiet    the same again with nothing changed: the repositories
//                 found again where the last scan found them (no walk)
//   check watched linux_impl::watched_changes_since() with nothing changed:
//                 the post-run check against the scan before
//   check kept    vcs::changes_since() with the kept listings (one lstat per
//                 directory: the post-run check a run pays now)
// and what open() added to this process's resident set and to the kernel's
// slab (/proc/meminfo: the whole host's, so noisy on a busy one).
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "linux/directory_watch.h"
#include "linux/watched_scan.h"
#include "posix/vcs_scan.h"

namespace {

double cpu_ms() {
  rusage usage {};
  ::getrusage(RUSAGE_SELF, &usage);
  rusage children {};
  ::getrusage(RUSAGE_CHILDREN, &children);
  auto ms = [](const timeval& t) { return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_usec) / 1e3; };
  return ms(usage.ru_utime) + ms(usage.ru_stime) + ms(children.ru_utime) + ms(children.ru_stime);
}

struct timing {
  double wall = 0, cpu = 0;
};

timing timed(const std::function<void()>& fn) {
  const double cpu = cpu_ms();
  const auto start = std::chrono::steady_clock::now();
  fn();
  timing t;
  t.wall = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  t.cpu = cpu_ms() - cpu;
  return t;
}

// A line of a /proc file such as "VmRSS:   1234 kB", in KiB; 0 when absent.
long kib(const char* file, const std::string& key) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) == 0) return std::atol(line.c_str() + key.size());
  }
  return 0;
}

timing median(std::vector<timing> v) {
  std::sort(v.begin(), v.end(), [](const timing& a, const timing& b) { return a.wall < b.wall; });
  return v[v.size() / 2];
}

void print(const char* what, const timing& t) { std::printf("%-13s %10.3f %10.3f\n", what, t.wall, t.cpu); }

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: cordon_watch_set_bench ROOT [RUNS]\n");
    return 2;
  }
  const std::string root = argv[1];
  const int runs = argc > 2 ? std::atoi(argv[2]) : 5;
  namespace vcs = cordon::vcs;
  using cordon::linux_impl::directory_watch;
  std::vector<timing> cold, kept, open, quiet, busy, scan_watched, scan_quiet, check_watched, check_kept;
  std::vector<long> rss_kib, slab_kib;  // what open() added: this process's resident set, the kernel's slab
  std::size_t directories = 0;
  for (int i = 0; i < runs; ++i) {
    vcs::vcs_scan first;
    cold.push_back(timed([&] { first = vcs::scan_vcs_metadata(root, "", vcs::max_directories, nullptr, 0); }));
    directories = first.entries_seen;
    kept.push_back(timed([&] {
      auto again = vcs::scan_vcs_metadata(root, "", vcs::max_directories, &first.listings, 0);
      if (again.listings.reused == 0) std::fprintf(stderr, "no listing reused\n");
    }));
    cordon::result<directory_watch> set = cordon::make_error(cordon::error_code::io_error, "not opened");
    const long rss = kib("/proc/self/status", "VmRSS:"), slab = kib("/proc/meminfo", "Slab:");
    open.push_back(timed([&] { set = directory_watch::open(root, vcs::max_directories); }));
    rss_kib.push_back(kib("/proc/self/status", "VmRSS:") - rss);
    slab_kib.push_back(kib("/proc/meminfo", "Slab:") - slab);
    if (!set || !set->doubt().empty()) {
      std::fprintf(stderr, "watch set: %s\n", set ? set->doubt().c_str() : set.error_value().describe().c_str());
      return 1;
    }
    std::size_t quiet_seen = 0;
    quiet.push_back(timed([&] { quiet_seen = set->refresh().size(); }));
    if (quiet_seen != 0) std::fprintf(stderr, "a quiet refresh read %zu directories\n", quiet_seen);
    std::vector<std::string> dirs;
    for (const auto& [path, entries] : set->listings()) {
      if (dirs.size() < 100) dirs.push_back(path);
    }
    for (std::size_t k = 0; k < dirs.size(); ++k) std::ofstream(dirs[k] + "/bench-new" + std::to_string(k)) << "x";
    std::size_t seen = 0;
    busy.push_back(timed([&] { seen = set->refresh().size(); }));
    if (seen != dirs.size()) std::fprintf(stderr, "refresh saw %zu of %zu\n", seen, dirs.size());
    for (std::size_t k = 0; k < dirs.size(); ++k) std::remove((dirs[k] + "/bench-new" + std::to_string(k)).c_str());
    set->refresh();
    cordon::linux_impl::watched_root w{std::move(*set), {}, false, {}};
    cordon::linux_impl::listings_taken how;
    vcs::vcs_scan watched;
    scan_watched.push_back(timed([&] { watched = cordon::linux_impl::watched_scan(w, "", "", how); }));
    if (how != "watch" || watched.entries_seen != directories) {
      std::fprintf(stderr, "scan watched: %s, %llu directories\n", how.c_str(),
                   static_cast<unsigned long long>(watched.entries_seen));
    }
    scan_quiet.push_back(timed([&] { watched = cordon::linux_impl::watched_scan(w, "", "", how); }));
    if (how != "watch" || !w.known) std::fprintf(stderr, "scan quiet: %s\n", how.c_str());
    check_watched.push_back(timed([&] {
      cordon::deferred_execution_evidence evidence;
      cordon::linux_impl::watched_changes_since(w, watched, "", evidence, "", how);
      if (how != "watch" || !evidence.findings.empty()) std::fprintf(stderr, "check watched: %s\n", how.c_str());
    }));
    check_kept.push_back(timed([&] {
      cordon::deferred_execution_evidence evidence;
      vcs::changes_since(root, first, "", evidence);
    }));
  }
  std::printf("%zu directories, %d runs, medians (ms)\n%-13s %10s %10s\n", directories, runs, "", "wall", "cpu");
  print("walk cold", median(cold));
  print("walk kept", median(kept));
  print("watch open", median(open));
  print("refresh 0", median(quiet));
  print("refresh 100", median(busy));
  print("scan watched", median(scan_watched));
  print("scan quiet", median(scan_quiet));
  print("check watched", median(check_watched));
  print("check kept", median(check_kept));
  std::sort(rss_kib.begin(), rss_kib.end());
  std::sort(slab_kib.begin(), slab_kib.end());
  // The largest resident growth (the first run's: later ones reuse what the set before freed).
  std::printf("watch open added %ld KiB resident at most, %ld KiB of kernel slab (median; the host's, noisy)\n",
              rss_kib.back(), slab_kib[slab_kib.size() / 2]);
  return 0;
}
