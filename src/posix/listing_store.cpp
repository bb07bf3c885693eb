#include "posix/listing_store.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "core/sha256.h"
#include "posix/atomic_file.h"
#include "posix/unique_fd.h"

namespace cordon::vcs {
namespace {

constexpr char kMagic[] = "cordon-scan-listings 1\n";

// This user's own directory, not writable by others; else no descriptor.
unique_fd open_own_directory(const std::string& dir) {
  unique_fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) return fd;
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || st.st_uid != ::geteuid() || (st.st_mode & 022) != 0) return unique_fd();
  return fd;
}

std::string file_name_of(const std::string& root) { return detail::sha256_hex(root); }

// Is `name` a temporary file write_file_atomically_at() makes beside a
// store file: "." + 64 hex digits + ".tmp." + decimal digits?
bool is_store_temporary(const char* name) {
  const std::size_t length = std::strlen(name);
  constexpr std::size_t hex = 64, suffix = sizeof ".tmp." - 1;
  if (length <= 1 + hex + suffix || name[0] != '.') return false;
  for (std::size_t i = 1; i <= hex; ++i) {
    const char c = name[i];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  if (std::strncmp(name + 1 + hex, ".tmp.", suffix) != 0) return false;
  for (std::size_t i = 1 + hex + suffix; i < length; ++i) {
    if (name[i] < '0' || name[i] > '9') return false;
  }
  return true;
}

// Removes the temporary files a writer left when it died between creating
// and renaming one (the scan's child killed past its time or memory bound,
// a crash): those of this user, regular, whose mtime (which each write of
// the writer moves) is at least listing_store_stale_seconds old. Only this
// user writes the store (every sandbox sees it read-only), so an mtime set
// back is the user's own doing. Reads at most max_directory_entries names (the store holds one file
// per root). Nothing is reported: a file left costs disk space, not safety.
void remove_stale_temporaries(int dir) {
  unique_fd listing(::openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!listing) return;
  DIR* entries = ::fdopendir(listing.get());
  if (entries == nullptr) return;
  listing.release();  // the DIR owns it now; closedir() below closes it
  timespec now {};
  ::clock_gettime(CLOCK_REALTIME, &now);
  std::size_t names = 0;
  while (const dirent* entry = ::readdir(entries)) {
    if (++names > max_directory_entries) break;
    if (!is_store_temporary(entry->d_name)) continue;
    struct stat st {};
    if (::fstatat(dir, entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
        st.st_uid != ::geteuid() || now.tv_sec - st.st_mtim.tv_sec < listing_store_stale_seconds) {
      continue;
    }
    ::unlinkat(dir, entry->d_name, 0);
  }
  ::closedir(entries);
}

// Does `name` in `dir` hold exactly `data` already (this user's own regular
// file)? Then a run that changed nothing writes nothing: no temporary file,
// fsync or rename on every launch.
bool holds_already(int dir, const std::string& name, const std::string& data) {
  unique_fd file(::openat(dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  struct stat st {};
  if (!file || ::fstat(file.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid() ||
      st.st_nlink != 1 || (st.st_mode & 022) != 0 || static_cast<std::uint64_t>(st.st_size) != data.size()) {
    return false;
  }
  std::string seen(data.size(), '\0');
  std::size_t got = 0;
  while (got < seen.size()) {
    const ssize_t n = ::read(file.get(), seen.data() + got, seen.size() - got);
    if (n <= 0) return false;
    got += static_cast<std::size_t>(n);
  }
  return seen == data;
}

template <typename T>
void put(std::string& out, T value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof value);
}

struct reader {
  const std::string& data;
  std::size_t at = 0;
  template <typename T>
  bool get(T& value) {
    if (data.size() - at < sizeof value) return false;
    std::memcpy(&value, data.data() + at, sizeof value);
    at += sizeof value;
    return true;
  }
  bool get_bytes(std::string& out, std::size_t n) {
    if (data.size() - at < n) return false;
    out.assign(data, at, n);
    at += n;
    return true;
  }
};

bool parse(const std::string& data, const std::string& root, listing_cache& cache) {
  reader r{data};
  std::string magic, stored_root;
  std::uint32_t root_size = 0;
  if (!r.get_bytes(magic, sizeof kMagic - 1) || magic != kMagic) return false;
  if (!r.get(root_size) || !r.get_bytes(stored_root, root_size) || stored_root != root) return false;
  while (r.at < data.size()) {
    std::uint64_t dev = 0, ino = 0;
    std::int64_t sec = 0, nsec = 0;
    std::uint32_t count = 0;
    if (!r.get(dev) || !r.get(ino) || !r.get(sec) || !r.get(nsec) || !r.get(count)) return false;
    if (count > max_directory_entries || nsec < 0 || nsec >= 1000000000) return false;
    listing_cache::listing listing;
    listing.changed.tv_sec = static_cast<time_t>(sec);
    listing.changed.tv_nsec = static_cast<long>(nsec);
    for (std::uint32_t i = 0; i < count; ++i) {
      unsigned char type = 0;
      std::uint16_t size = 0;
      std::string name;
      if (!r.get(type) || !r.get(size) || size == 0 || !r.get_bytes(name, size)) return false;
      if (name.find('/') != std::string::npos || name.find('\0') != std::string::npos || name == "." || name == "..")
        return false;
      listing.entries.emplace_back(std::move(name), type);
    }
    cache.listings[{static_cast<dev_t>(dev), static_cast<ino_t>(ino)}] = std::move(listing);
  }
  return true;
}

}  // namespace

std::string listing_store_dir(const std::string& home) {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && xdg[0] == '/') return std::string(xdg) + "/cordon/scan-listings";
  if (home.empty() || home == "/") return {};
  return home + "/.cache/cordon/scan-listings";
}

listing_cache load_listings(const std::string& store_dir, const std::string& root) {
  listing_cache cache;
  if (store_dir.empty()) return cache;
  unique_fd dir = open_own_directory(store_dir);
  if (!dir) return cache;
  unique_fd file(::openat(dir.get(), file_name_of(root).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  if (!file) return cache;
  struct stat st {};
  if (::fstat(file.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid() || st.st_nlink != 1 ||
      (st.st_mode & 022) != 0 || static_cast<std::uint64_t>(st.st_size) > max_listing_store_bytes) {
    return cache;
  }
  std::string data;
  data.resize(static_cast<std::size_t>(st.st_size));
  std::size_t got = 0;
  while (got < data.size()) {
    ssize_t n = ::read(file.get(), data.data() + got, data.size() - got);
    if (n <= 0) return cache;
    got += static_cast<std::size_t>(n);
  }
  if (!parse(data, root, cache)) return listing_cache{};
  return cache;
}

result<void> prepare_listing_store(const std::string& store_dir) {
  if (store_dir.empty()) return make_error(error_code::io_error, "no cache directory (no home, no XDG_CACHE_HOME)");
  // Make the path, each new level 0700 (an existing one is only checked at the end).
  for (std::size_t slash = store_dir.find('/', 1);; slash = store_dir.find('/', slash + 1)) {
    const std::string part = slash == std::string::npos ? store_dir : store_dir.substr(0, slash);
    if (::mkdir(part.c_str(), 0700) != 0 && errno != EEXIST) {
      return make_error(error_code::io_error, "cannot make " + part, {}, errno);
    }
    if (slash == std::string::npos) break;
  }
  if (!open_own_directory(store_dir)) {
    return make_error(error_code::io_error, store_dir + " is not this user's own directory, or others may write it");
  }
  return ok;
}

result<void> save_listings(const std::string& store_dir, const std::string& root, const listing_cache& cache) {
  if (auto made = prepare_listing_store(store_dir); !made) return made;
  unique_fd dir = open_own_directory(store_dir);
  if (!dir) return make_error(error_code::io_error, store_dir + " is not this user's own directory, or others may write it");
  remove_stale_temporaries(dir.get());
  std::string out(kMagic);
  put(out, static_cast<std::uint32_t>(root.size()));
  out += root;
  for (const auto& [key, listing] : cache.listings) {
    put(out, static_cast<std::uint64_t>(key.first));
    put(out, static_cast<std::uint64_t>(key.second));
    put(out, static_cast<std::int64_t>(listing.changed.tv_sec));
    put(out, static_cast<std::int64_t>(listing.changed.tv_nsec));
    put(out, static_cast<std::uint32_t>(listing.entries.size()));
    for (const auto& [name, type] : listing.entries) {
      put(out, type);
      put(out, static_cast<std::uint16_t>(name.size()));
      out += name;
    }
    if (out.size() > max_listing_store_bytes) return make_error(error_code::io_error, "listings larger than the store's bound");
  }
  if (holds_already(dir.get(), file_name_of(root), out)) return ok;
  return write_file_atomically_at(dir.get(), file_name_of(root), out);
}

}  // namespace cordon::vcs
