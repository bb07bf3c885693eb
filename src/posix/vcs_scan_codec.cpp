#include "posix/vcs_scan_codec.h"

#include <unistd.h>

#include <cstdint>
#include <cerrno>
#include <cstring>
#include <utility>

namespace cordon::vcs {
namespace {

constexpr char kMagic[] = "cordon-vcs-scan 2\n";

// Builds the encoding in `out`; with a descriptor, writes it there each
// 1 MiB instead of holding it whole.
struct writer {
  std::string out;
  int fd = -1;
  bool failed = false;
  void flush() {
    std::size_t at = 0;
    while (!failed && at < out.size()) {
      const ssize_t n = ::write(fd, out.data() + at, out.size() - at);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) failed = true;
      else at += static_cast<std::size_t>(n);
    }
    out.clear();
  }
  template <typename T>
  void num(T value) {
    out.append(reinterpret_cast<const char*>(&value), sizeof value);
  }
  void text(const std::string& s) {
    num(static_cast<std::uint64_t>(s.size()));
    out += s;
    if (fd >= 0 && out.size() >= (1u << 20)) flush();
  }
  void texts(const std::vector<std::string>& v) {
    num(static_cast<std::uint64_t>(v.size()));
    for (const auto& s : v) text(s);
  }
  void stamp(const file_stamp& s) {
    num(static_cast<std::uint8_t>(s.present));
    num(static_cast<std::uint64_t>(s.device));
    num(static_cast<std::uint64_t>(s.inode));
    num(static_cast<std::int64_t>(s.changed.tv_sec));
    num(static_cast<std::int64_t>(s.changed.tv_nsec));
    num(static_cast<std::uint32_t>(s.mode));
    text(s.digest);
  }
  void stamps(const std::map<std::string, file_stamp>& m) {
    num(static_cast<std::uint64_t>(m.size()));
    for (const auto& [path, s] : m) {
      text(path);
      stamp(s);
    }
  }
};

struct reader {
  const std::string& data;
  std::size_t at = 0;
  bool ok = true;
  template <typename T>
  T num() {
    T value{};
    if (!ok || data.size() - at < sizeof value) {
      ok = false;
      return value;
    }
    std::memcpy(&value, data.data() + at, sizeof value);
    at += sizeof value;
    return value;
  }
  // A count of items each at least `least` bytes long: larger than what is
  // left is malformed (no allocation follows a count it cannot hold).
  std::uint64_t count(std::size_t least) {
    const auto n = num<std::uint64_t>();
    if (ok && n > (data.size() - at) / least) ok = false;
    return ok ? n : 0;
  }
  std::string text() {
    const auto n = count(1);
    std::string s;
    if (ok) s.assign(data, at, n), at += n;
    return s;
  }
  std::vector<std::string> texts() {
    std::vector<std::string> v(count(8));
    for (auto& s : v) s = text();
    return v;
  }
  file_stamp stamp() {
    file_stamp s;
    s.present = num<std::uint8_t>() != 0;
    s.device = static_cast<dev_t>(num<std::uint64_t>());
    s.inode = static_cast<ino_t>(num<std::uint64_t>());
    s.changed.tv_sec = static_cast<time_t>(num<std::int64_t>());
    s.changed.tv_nsec = static_cast<long>(num<std::int64_t>());
    s.mode = static_cast<mode_t>(num<std::uint32_t>());
    s.digest = text();
    return s;
  }
  std::map<std::string, file_stamp> stamps() {
    std::map<std::string, file_stamp> m;
    for (auto n = count(16); ok && n > 0; --n) {
      std::string path = text();
      m[std::move(path)] = stamp();
    }
    return m;
  }
};

void encode_record(writer& w, const repository_record& r) {
  w.text(r.kind);
  w.stamps(r.metadata);
  w.texts(r.gitlinks);
  w.texts(r.keys);
  w.stamps(r.operation);
  w.texts(r.exec_lines);
}

repository_record decode_record(reader& r) {
  repository_record record;
  record.kind = r.text();
  record.metadata = r.stamps();
  record.gitlinks = r.texts();
  record.keys = r.texts();
  record.operation = r.stamps();
  record.exec_lines = r.texts();
  return record;
}

void encode_listings(writer& w, const listing_cache& cache) {
  w.num(cache.reused);
  w.num(static_cast<std::uint64_t>(cache.listings.size()));
  for (const auto& [id, listing] : cache.listings) {
    w.num(static_cast<std::uint64_t>(id.first));
    w.num(static_cast<std::uint64_t>(id.second));
    w.num(static_cast<std::int64_t>(listing.changed.tv_sec));
    w.num(static_cast<std::int64_t>(listing.changed.tv_nsec));
    w.num(static_cast<std::uint64_t>(listing.entries.size()));
    for (const auto& [name, type] : listing.entries) {
      w.text(name);
      w.num(type);
    }
  }
}

listing_cache decode_listings(reader& r) {
  listing_cache cache;
  cache.reused = r.num<std::uint64_t>();
  for (auto n = r.count(40); r.ok && n > 0; --n) {
    const auto dev = static_cast<dev_t>(r.num<std::uint64_t>());
    const auto ino = static_cast<ino_t>(r.num<std::uint64_t>());
    listing_cache::listing listing;
    listing.changed.tv_sec = static_cast<time_t>(r.num<std::int64_t>());
    listing.changed.tv_nsec = static_cast<long>(r.num<std::int64_t>());
    listing.entries.resize(r.count(9));
    for (auto& [name, type] : listing.entries) {
      name = r.text();
      type = r.num<unsigned char>();
    }
    cache.listings[{dev, ino}] = std::move(listing);
  }
  return cache;
}

void encode(writer& w, const vcs_scan& scan) {
  w.out.append(kMagic, sizeof kMagic - 1);
  for (const auto* v : {&scan.protect, &scan.missing, &scan.absent_gitmodules, &scan.absent_redirects,
                        &scan.repositories, &scan.places}) {
    w.texts(*v);
  }
  w.num(static_cast<std::uint64_t>(scan.records.size()));
  for (const auto& [path, record] : scan.records) {
    w.text(path);
    encode_record(w, record);
  }
  w.stamps(scan.startup);
  w.num(scan.entries_seen);
  w.num(static_cast<std::uint8_t>(scan.truncated));
  w.num(static_cast<std::uint64_t>(scan.incomplete.size()));
  for (const auto& gap : scan.incomplete) {
    w.text(gap.path);
    w.text(gap.reason);
    w.num(static_cast<std::uint8_t>(gap.refuses_launch));
  }
  w.num(static_cast<std::uint64_t>(scan.agent.size()));
  for (const auto& [path, entry] : scan.agent) {
    w.text(path);
    w.stamp(entry.stamp);
    w.num(static_cast<std::uint8_t>(entry.runs_code));
  }
  w.num(scan.config_bytes);
  encode_listings(w, scan.listings);
}

}  // namespace

std::string encode_scan(const vcs_scan& scan) {
  writer w;
  encode(w, scan);
  return std::move(w.out);
}

bool write_scan(int fd, const vcs_scan& scan) {
  writer w;
  w.fd = fd;
  encode(w, scan);
  w.flush();
  return !w.failed;
}

std::optional<vcs_scan> decode_scan(const std::string& bytes) {
  if (bytes.compare(0, sizeof kMagic - 1, kMagic) != 0) return std::nullopt;
  reader r{bytes, sizeof kMagic - 1};
  vcs_scan scan;
  for (auto* v : {&scan.protect, &scan.missing, &scan.absent_gitmodules, &scan.absent_redirects,
                  &scan.repositories, &scan.places}) {
    *v = r.texts();
  }
  for (auto n = r.count(16); r.ok && n > 0; --n) {
    std::string path = r.text();
    scan.records[std::move(path)] = decode_record(r);
  }
  scan.startup = r.stamps();
  scan.entries_seen = r.num<std::uint64_t>();
  scan.truncated = r.num<std::uint8_t>() != 0;
  for (auto n = r.count(17); r.ok && n > 0; --n) {
    scan_gap gap;
    gap.path = r.text();
    gap.reason = r.text();
    gap.refuses_launch = r.num<std::uint8_t>() != 0;
    scan.incomplete.push_back(std::move(gap));
  }
  for (auto n = r.count(16); r.ok && n > 0; --n) {
    std::string path = r.text();
    vcs_scan::agent_path entry;
    entry.stamp = r.stamp();
    entry.runs_code = r.num<std::uint8_t>() != 0;
    scan.agent[std::move(path)] = std::move(entry);
  }
  scan.config_bytes = r.num<std::uint64_t>();
  scan.listings = decode_listings(r);
  if (!r.ok || r.at != bytes.size()) return std::nullopt;
  return scan;
}

}  // namespace cordon::vcs
