// audit_file.cpp — the tamper-evident JSON Lines sink and its verifier
// (record format in cordon/governance/audit.h).
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <set>
#include <sstream>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "cordon/governance/audit.h"
#include "cordon/governance/capability_request.h"
#include "cordon/report.h"
#include "posix/atomic_file.h"
#include "posix/unique_fd.h"
#include "governance/json_util.h"

namespace cordon::governance {
namespace detail {
json audit_event_value(const audit_event& e);
}  // namespace detail

namespace {

using detail::json;

const std::string kGenesis = "sha256:" + std::string(64, '0');

std::string record_hash(std::uint64_t seq, const std::string& prev, const json& event) {
  return sha256_digest(detail::canonical({{"event", event}, {"prev", prev}, {"seq", seq}}));
}

std::string head_path(const std::string& path) { return path + ".head"; }

// The head's MAC: HMAC-SHA256 (OpenSSL) under `key` of the canonical
// {"hash","seq"} it names, "hmac-sha256:<hex>".
std::string head_mac(const std::string& key, std::uint64_t seq, const std::string& hash) {
  const std::string message = detail::canonical({{"seq", seq}, {"hash", hash}});
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (::HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
             reinterpret_cast<const unsigned char*>(message.data()), message.size(), out, &size) == nullptr) {
    return {};
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string text = "hmac-sha256:";
  for (unsigned int i = 0; i < size; ++i) {
    text.push_back(kHex[out[i] >> 4]);
    text.push_back(kHex[out[i] & 0xF]);
  }
  return text;
}

bool same_text(const std::string& a, const std::string& b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

result<audit_event> event_from(const json& j) {
  audit_event e;
  try {
    e.module = j.at("module").get<std::string>();
    e.event = j.at("event").get<std::string>();
    e.ids = j.at("ids").get<std::map<std::string, std::string>>();
    e.outcome = j.at("outcome").get<std::string>();
    e.timestamp = j.at("timestamp").get<std::string>();
    e.elapsed_ms = j.at("elapsed_ms").get<std::int64_t>();
    e.attributes = j.at("attributes").get<std::map<std::string, std::string>>();
    for (const auto& [name, doc] : j.at("documents").items()) e.documents[name] = doc.dump();
  } catch (const json::exception& ex) {
    return make_error(error_code::invalid_policy, std::string("not an audit event: ") + ex.what());
  }
  return e;
}

result<void> write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    ssize_t w = ::write(fd, text.data() + done, text.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return make_error(error_code::io_error, "writing the audit log", {}, w < 0 ? errno : EIO);
    done += static_cast<std::size_t>(w);
  }
  return ok;
}

// Holds the log's flock(2) for a scope: appends by other sinks, in this
// process or another, wait for it.
class file_lock {
 public:
  explicit file_lock(int fd) : fd_(fd) {
    while ((rc_ = ::flock(fd_, LOCK_EX)) != 0 && errno == EINTR) {
    }
    if (rc_ != 0) errno_ = errno;
  }
  ~file_lock() {
    if (rc_ == 0) ::flock(fd_, LOCK_UN);
  }
  file_lock(const file_lock&) = delete;
  file_lock& operator=(const file_lock&) = delete;
  result<void> status(const std::string& path) const {
    if (rc_ == 0) return ok;
    return make_error(error_code::io_error, "cannot lock the audit log " + path, {}, errno_);
  }

 private:
  int fd_;
  int rc_ = -1;
  int errno_ = 0;
};

}  // namespace

result<audit_verification> verify_audit_log(const std::string& path, const audit_verify_options& options) {
  if (!options.head_key.empty() && options.head_key.size() < audit_head_key_min_bytes) {
    return make_error(error_code::invalid_policy, "the audit head key has fewer than " +
                                                      std::to_string(audit_head_key_min_bytes) + " bytes");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(error_code::io_error, "cannot read " + path, {}, errno);
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  audit_verification v;
  std::string prev = kGenesis;
  std::map<std::string, std::size_t> open_runs;  // run_id -> order
  std::size_t line_no = 0, pos = 0;
  auto fail = [&](std::size_t line, std::string why) {
    v.ok = false;
    v.events = v.records.size();
    v.bad_line = line;
    v.problem = std::move(why);
    return v;
  };
  while (pos < text.size()) {
    ++line_no;
    auto eol = text.find('\n', pos);
    if (eol == std::string::npos) return fail(line_no, "incomplete last line (truncated)");
    std::string line = text.substr(pos, eol - pos);
    pos = eol + 1;
    json record = json::parse(line, nullptr, false);
    if (record.is_discarded() || !record.is_object() || record.size() != 4 || !record.contains("seq") ||
        !record["seq"].is_number_unsigned() || !record.contains("prev") || !record["prev"].is_string() ||
        !record.contains("hash") || !record["hash"].is_string() || !record.contains("event")) {
      return fail(line_no, "not an audit record");
    }
    auto seq = record["seq"].get<std::uint64_t>();
    if (seq != line_no) {
      return fail(line_no, "sequence " + std::to_string(seq) + " where " + std::to_string(line_no) +
                               " was expected (removed, inserted or reordered)");
    }
    if (record["prev"] != prev) return fail(line_no, "previous hash does not match the record before (removed or reordered)");
    std::string hash = record_hash(seq, prev, record["event"]);
    if (record["hash"] != hash) return fail(line_no, "hash mismatch (the record was edited)");
    auto event = event_from(record["event"]);
    if (!event) return fail(line_no, event.error_value().message);
    if (line != detail::canonical(record)) return fail(line_no, "not in canonical form (the record was edited)");
    auto run = event->ids.find("run_id");
    if (run != event->ids.end()) {
      if (event->event == "run.started") open_runs[run->second] = line_no;
      if (ends_run(event->event)) open_runs.erase(run->second);
    }
    prev = hash;
    v.records.push_back({seq, hash, std::move(*event)});
  }
  v.events = v.records.size();
  v.last_hash = prev;
  std::ifstream head_in(head_path(path), std::ios::binary);
  if (head_in) {
    json head = json::parse(head_in, nullptr, false);
    if (head.is_discarded() || !head.is_object() || !head.contains("seq") || !head["seq"].is_number_unsigned() ||
        !head.contains("hash") || !head["hash"].is_string() || (head.contains("mac") && !head["mac"].is_string())) {
      return fail(v.events + 1, "the head file " + head_path(path) + " is unreadable");
    }
    v.head_present = true;
    v.head_seq = head["seq"].get<std::uint64_t>();
    v.head_keyed = head.contains("mac");
    if (v.head_seq > v.events) {
      return fail(v.events + 1, "record " + std::to_string(v.events + 1) + " is missing: the head file " +
                                    head_path(path) + " records " + std::to_string(v.head_seq) +
                                    " (the log was truncated; to start a new log, move both files away)");
    }
    if (v.head_seq > 0 && v.records[v.head_seq - 1].hash != head["hash"]) {
      return fail(v.head_seq, "record " + std::to_string(v.head_seq) + " does not match the head file");
    }
    if (!options.head_key.empty()) {
      if (!v.head_keyed) return fail(v.events + 1, "the head file " + head_path(path) + " is not keyed");
      const std::string expected = head_mac(options.head_key, v.head_seq, head["hash"].get<std::string>());
      if (expected.empty() || !same_text(expected, head["mac"].get<std::string>())) {
        return fail(v.events + 1, "the head file's MAC does not verify under this key (re-chained or re-keyed)");
      }
      if (v.head_seq < v.events) {
        return fail(v.head_seq + 1, "record " + std::to_string(v.head_seq + 1) +
                                        " comes after the keyed head: no key vouches for it");
      }
    }
  } else if (v.events > 0 && (options.require_head || !options.head_key.empty())) {
    return fail(v.events + 1, "no head file " + head_path(path) +
                                  ": records cut from the end would not show (say that no head is kept to "
                                  "verify the chain alone)");
  }
  std::vector<std::pair<std::size_t, std::string>> ordered;
  for (const auto& [id, at] : open_runs) ordered.emplace_back(at, id);
  std::sort(ordered.begin(), ordered.end());
  for (const auto& [at, id] : ordered) v.interrupted_runs.push_back(id);
  v.ok = true;
  return v;
}

jsonl_audit_sink::jsonl_audit_sink(std::string path, jsonl_sink_options options, int fd, std::uint64_t seq,
                                   std::string hash, std::uint64_t size)
    : path_(std::move(path)), options_(options), fd_(fd), seq_(seq), last_hash_(std::move(hash)), size_(size),
      last_sync_(std::chrono::steady_clock::now()) {}

jsonl_audit_sink::~jsonl_audit_sink() {
  {
    std::lock_guard lock(mutex_);
    if (!failed_ && pending_ > 0) {
      file_lock held(fd_);
      if (held.status(path_) && catch_up_locked()) (void)sync_locked();
    }
  }
  if (fd_ >= 0) ::close(fd_);
}

result<std::unique_ptr<jsonl_audit_sink>> jsonl_audit_sink::open(const std::string& path, jsonl_sink_options options) {
  if (!options.head_key.empty() && options.head_key.size() < audit_head_key_min_bytes) {
    return make_error(error_code::invalid_policy, "the audit head key has fewer than " +
                                                      std::to_string(audit_head_key_min_bytes) + " bytes");
  }
  // O_RDWR: the sink reads back what other writers appended (catch_up_locked).
  unique_fd fd(::open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0600));
  if (!fd) return make_error(error_code::io_error, "cannot open the audit log " + path, {}, errno);
  file_lock held(fd.get());  // no writer appends between the verification and the size
  if (auto locked = held.status(path); !locked) return std::move(locked).error_value();
  // A keyed sink continues only a chain its key vouches for: signing a head
  // over records someone re-chained would launder them.
  audit_verify_options verify;
  verify.head_key = options.head_key;
  auto checked = verify_audit_log(path, verify);
  if (!checked) return std::move(checked).error_value();
  if (!checked->ok) {
    return make_error(error_code::invalid_policy, "the audit log " + path + " does not verify: line " +
                                                      std::to_string(checked->bad_line) + ": " + checked->problem);
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return make_error(error_code::io_error, "cannot stat the audit log " + path, {}, errno);
  return std::unique_ptr<jsonl_audit_sink>(new jsonl_audit_sink(path, options, fd.release(), checked->events, checked->last_hash,
                                                                static_cast<std::uint64_t>(st.st_size)));
}

result<void> jsonl_audit_sink::catch_up_locked() {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) return make_error(error_code::io_error, "cannot stat the audit log " + path_, {}, errno);
  auto end = static_cast<std::uint64_t>(st.st_size);
  if (end == size_) return ok;
  if (end < size_) return make_error(error_code::invalid_policy, "the audit log " + path_ + " was truncated while open");
  std::string added(end - size_, '\0');
  std::size_t done = 0;
  while (done < added.size()) {
    ssize_t r = ::pread(fd_, added.data() + done, added.size() - done, static_cast<off_t>(size_ + done));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return make_error(error_code::io_error, "reading the audit log " + path_, {}, r < 0 ? errno : EIO);
    done += static_cast<std::size_t>(r);
  }
  std::size_t pos = 0;
  while (pos < added.size()) {
    auto eol = added.find('\n', pos);
    std::string line = added.substr(pos, eol == std::string::npos ? std::string::npos : eol - pos);
    json record = json::parse(line, nullptr, false);
    std::uint64_t seq = seq_ + 1;
    bool chained = eol != std::string::npos && !record.is_discarded() && record.is_object() && record.size() == 4 &&
                   record.contains("event") && record.value("seq", json()) == json(seq) &&
                   record.value("prev", json()) == json(last_hash_) &&
                   record.value("hash", json()) == json(record_hash(seq, last_hash_, record["event"])) &&
                   event_from(record["event"]) && line == detail::canonical(record);
    if (!chained) {
      return make_error(error_code::invalid_policy, "the audit log " + path_ + " was appended to with a record that " +
                                                        "does not continue its chain (record " + std::to_string(seq) + ")");
    }
    seq_ = seq;
    last_hash_ = record["hash"].get<std::string>();
    pos = eol + 1;
  }
  size_ = end;
  return ok;
}

std::uint64_t jsonl_audit_sink::last_sequence() const {
  std::lock_guard lock(mutex_);
  return seq_;
}

result<void> jsonl_audit_sink::sync_locked() {
  if (::fdatasync(fd_) != 0) {
    failed_ = make_error(error_code::io_error, "fdatasync of the audit log " + path_, {}, errno);
    return *failed_;
  }
  json fields = {{"seq", seq_}, {"hash", last_hash_}};
  if (!options_.head_key.empty()) fields["mac"] = head_mac(options_.head_key, seq_, last_hash_);
  std::string head = detail::canonical(fields) + "\n";
  if (auto written = write_file_atomically(head_path(path_), head); !written) {
    failed_ = written.error_value();
    failed_->message = "the audit head file: " + failed_->message;
    return *failed_;
  }
  pending_ = 0;
  last_sync_ = std::chrono::steady_clock::now();
  return ok;
}

result<void> jsonl_audit_sink::append(const audit_event& event) {
  std::lock_guard lock(mutex_);
  if (failed_) return *failed_;
  json value;
  std::string line;
  file_lock held(fd_);
  if (auto locked = held.status(path_); !locked) {
    failed_ = locked.error_value();
    return *failed_;
  }
  if (auto caught = catch_up_locked(); !caught) {
    failed_ = caught.error_value();
    return *failed_;
  }
  try {
    value = detail::audit_event_value(event);
    std::uint64_t seq = seq_ + 1;
    std::string hash = record_hash(seq, last_hash_, value);
    line = detail::canonical({{"event", value}, {"prev", last_hash_}, {"seq", seq}, {"hash", hash}}) + "\n";
    // One write(2): the record is in the file (the page cache) or not at all.
    if (auto written = write_all(fd_, line); !written) {
      failed_ = written.error_value();
      return *failed_;
    }
    seq_ = seq;
    last_hash_ = hash;
    size_ += line.size();
  } catch (const json::exception& ex) {
    return make_error(error_code::invalid_policy, std::string("audit event is not UTF-8 text: ") + ex.what());
  }
  ++pending_;
  bool due = options_.fsync == fsync_policy::every_event || pending_ >= options_.batch_events ||
             std::chrono::steady_clock::now() - last_sync_ >= options_.batch_interval;
  return due ? sync_locked() : result<void>(ok);
}

result<void> jsonl_audit_sink::flush() {
  std::lock_guard lock(mutex_);
  if (failed_) return *failed_;
  if (pending_ == 0) return ok;
  file_lock held(fd_);
  if (auto locked = held.status(path_); !locked) return locked;
  // The head names the file's last record, not an older one of this sink's.
  if (auto caught = catch_up_locked(); !caught) {
    failed_ = caught.error_value();
    return *failed_;
  }
  return sync_locked();
}

}  // namespace cordon::governance
