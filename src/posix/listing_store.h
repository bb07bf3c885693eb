// listing_store.h — the repository scan's directory listings kept between
// runs, per user and per writable root (docs/deferred-execution.md, "Cost").
//
// A cold `cordon run` takes the listings the last run of the same root left
// (posix/vcs_scan.h, listing_cache) and reads again only the directories
// whose identity or ctime changed. The store is trusted only as far as no
// sandbox can write it: it lives in the user's cache directory
// ($XDG_CACHE_HOME/cordon/scan-listings, else ~/.cache/cordon/...), which
// every Linux plan binds read-only when a writable root holds it (whether or
// not it protects repository metadata), a directory not owned by this user
// or writable by others is not read, a file not owned by this user, linked
// elsewhere, larger than max_listing_store_bytes or malformed in any way is
// ignored whole (the scan then reads every directory, as with no store).
// POSIX: open(2) with O_NOFOLLOW, fstat(2), rename(2).
#pragma once

#include <cstdint>
#include <string>

#include "cordon/result.h"
#include "posix/vcs_scan.h"

namespace cordon::vcs {

inline constexpr std::uint64_t max_listing_store_bytes = 64ull << 20;  // 200,000 directories of 255-byte names: 51 MB
// A temporary file of the store (".<file>.tmp.<n>", posix/atomic_file.h)
// whose mtime is this many seconds old is one a writer left when it died
// mid-write: save_listings() removes it. A live writer holds one for at most
// the scan's time budget and the 10 s its child is given past it (40 s).
inline constexpr std::int64_t listing_store_stale_seconds = 600;

// The store's directory for `home` and the process's XDG_CACHE_HOME (an
// absolute value only); "" when neither is known.
std::string listing_store_dir(const std::string& home);

// The listings stored for `root` (a resolved directory), or an empty cache
// when there are none or they are not to be trusted (above).
listing_cache load_listings(const std::string& store_dir, const std::string& root);

// Makes `store_dir` (each new level mode 0700) and checks it is this
// user's own and not writable by others. Errors: io_error.
result<void> prepare_listing_store(const std::string& store_dir);

// Replaces the listings stored for `root` (the directory is made, mode
// 0700, if absent). First removes the store's temporary files of this user
// older than listing_store_stale_seconds (a writer that died between making
// one and renaming it into place left it; others' files and newer ones are
// left alone). When the stored file holds these listings already,
// nothing is written (a run that changed nothing costs no fsync). Errors: io_error (with errno when a call failed), also
// when the directory is not this user's own or others may write it.
result<void> save_listings(const std::string& store_dir, const std::string& root, const listing_cache& cache);

}  // namespace cordon::vcs
