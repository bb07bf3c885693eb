// cordon/governance/audit.h — what happened, recorded so that it can be
// checked later (docs/governance.md, "Audit").
//
// An audit_event names its module and event, the ids it concerns, an
// outcome, when it happened and how long it took, and string attributes;
// `documents` carries whole JSON documents (the run report) embedded as JSON.
//
// Sinks: in memory (tests, hosts that forward events), and a JSON Lines file
// that is tamper-evident. Each line of the file is one record:
//   {"event": {...}, "hash": "sha256:H", "prev": "sha256:P", "seq": N}
// where N counts from 1, P is the previous record's hash ("sha256:" and 64
// zeros for the first), and H is SHA-256 over the canonical JSON of
// {"event", "prev", "seq"} (keys sorted, no whitespace). Beside it,
// FILE.head holds {"hash", "seq"} of the last record made durable, replaced
// atomically, so that records cut off the end of the file are detected too.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/result.h"

namespace cordon::governance {

struct audit_event {
  std::string module;     // "execution", "session"
  std::string event;      // e.g. "policy.decision", "run.started", "run.completed"
  std::map<std::string, std::string> ids;  // run_id, session_id, trace_id, request_digest, ...
  std::string outcome;    // e.g. "allow", "approved", "exited", "refused"
  std::string timestamp;  // RFC 3339, UTC, milliseconds ("2026-12-01T08:00:00.123Z"); set by make_audit_event
  std::int64_t elapsed_ms = 0;  // since the start of the operation the event belongs to
  std::map<std::string, std::string> attributes;
  std::map<std::string, std::string> documents;  // name -> JSON text, embedded as JSON
  bool operator==(const audit_event&) const = default;
};

// An event stamped with the current time.
audit_event make_audit_event(std::string module, std::string event, std::string outcome);

// The current UTC time as audit events spell it.
std::string audit_timestamp_now();

// The event as one canonical JSON object (documents parsed and embedded; a
// document that is not JSON is embedded as a string under its name).
std::string audit_event_json(const audit_event& event);

class audit_sink {
 public:
  virtual ~audit_sink() = default;
  // Records one event. When this returns ok the event is acknowledged: it
  // survives the death of this process (and, per the sink's fsync policy, of
  // the machine). Errors are the sink's own (io_error with errno); after one,
  // a durable sink refuses every later event with the same error.
  virtual result<void> append(const audit_event& event) = 0;
  // Makes every acknowledged event durable now.
  virtual result<void> flush() { return ok; }
  virtual std::string_view name() const noexcept = 0;
};

class in_memory_audit_sink final : public audit_sink {
 public:
  result<void> append(const audit_event& event) override;
  std::string_view name() const noexcept override { return "memory"; }
  std::vector<audit_event> events() const;
  // Events named `event`, in order.
  std::vector<audit_event> named(std::string_view event) const;

 private:
  mutable std::mutex mutex_;
  std::vector<audit_event> events_;
};

enum class fsync_policy {
  every_event,  // fdatasync the file and replace the head after every event
  batched,      // after `batch_events` events or `batch_interval`, and on flush/close
};

struct jsonl_sink_options {
  fsync_policy fsync = fsync_policy::every_event;
  std::size_t batch_events = 64;
  std::chrono::milliseconds batch_interval{200};
  // Non-empty: the head file also carries an HMAC-SHA256 (OpenSSL) of its
  // sequence number and hash under this key (raw bytes, at least 16), so a
  // writer without the key cannot re-chain the log and write a head that
  // verifies (docs/governance.md, "What the chain proves, against whom"). The key must be
  // kept where the logged commands cannot read it.
  std::string head_key;
};

// The tamper-evident file sink. Every record is written with one write(2)
// before append returns, so a kill -9 of the writer at any point loses no
// acknowledged event; fsync_policy decides when it also survives a power cut
// (batched: the last batch may be lost, and the head file lags it, so a cut
// within that batch is not detected). Several sinks (processes) may append to
// one log: each append holds the file's flock(2) and first takes in, checked,
// the records the others appended, so the chain stays one chain.
class jsonl_audit_sink final : public audit_sink {
 public:
  // Opens (creating, mode 0600) the log at `path` and continues its chain.
  // An existing file must verify (verify_audit_log; with options.head_key,
  // under that key, so records after the keyed head are refused too), else
  // the error names the first bad line: a sink never appends to a log it
  // cannot vouch for.
  // Errors: io_error (errno), invalid_policy (the existing log is bad).
  static result<std::unique_ptr<jsonl_audit_sink>> open(const std::string& path, jsonl_sink_options options = {});
  ~jsonl_audit_sink() override;
  jsonl_audit_sink(const jsonl_audit_sink&) = delete;
  jsonl_audit_sink& operator=(const jsonl_audit_sink&) = delete;

  result<void> append(const audit_event& event) override;
  result<void> flush() override;
  std::string_view name() const noexcept override { return "jsonl"; }
  std::uint64_t last_sequence() const;
  const std::string& path() const noexcept { return path_; }

 private:
  jsonl_audit_sink(std::string path, jsonl_sink_options options, int fd, std::uint64_t seq, std::string hash,
                   std::uint64_t size);
  result<void> sync_locked();
  // With the file's flock held: takes in the records other writers appended
  // since this sink's last one, each checked to continue the chain.
  result<void> catch_up_locked();

  mutable std::mutex mutex_;
  std::string path_;
  jsonl_sink_options options_;
  int fd_ = -1;
  std::uint64_t seq_ = 0;
  std::string last_hash_;
  std::uint64_t size_ = 0;  // the end of the last record this sink knows of
  std::size_t pending_ = 0;
  std::chrono::steady_clock::time_point last_sync_;
  std::optional<error> failed_;
};

// One record read back from a log.
struct audit_record {
  std::uint64_t seq = 0;
  std::string hash;
  audit_event event;
};

struct audit_verification {
  bool ok = false;
  std::size_t events = 0;     // records that verified, from the start
  std::size_t bad_line = 0;   // 1-based line of the first problem; 0 when ok
  std::string problem;        // one line, e.g. "hash mismatch (edited?)"
  std::string last_hash;      // of the last good record
  // run_id of every "run.started" without a completion, failure, refusal,
  // cancellation or timeout after it: runs that were interrupted (the writer
  // died). Not a verification failure.
  std::vector<std::string> interrupted_runs;
  std::vector<audit_record> records;  // the good records, in order
  bool head_present = false;  // FILE.head exists (and was read)
  bool head_keyed = false;    // it carries a MAC (checked only when a key was given)
  std::uint64_t head_seq = 0; // the record it names
};

// How strict verify_audit_log is about the head file.
struct audit_verify_options {
  // A log with records and no FILE.head fails (its last records could have
  // been cut with nothing to show it). `cordon audit verify` sets this
  // unless told `--no-head`.
  bool require_head = false;
  // Non-empty: the head must exist, carry a MAC that verifies under this key
  // (jsonl_sink_options::head_key) and name the last record; a log without
  // records is the only exception.
  std::string head_key;
};

// Checks a log: every line a record, sequence numbers 1, 2, 3, ..., each
// record's prev the hash before it, each hash recomputed, the last line
// complete, and at least as many records as FILE.head names (with the hash
// it names). Detects edited, removed, inserted, reordered and truncated
// records and names the first bad line. The head rules are `options`'s.
// Errors: io_error only (a bad log is a result with ok == false).
result<audit_verification> verify_audit_log(const std::string& path, const audit_verify_options& options = {});

// The smallest key jsonl_sink_options::head_key and
// audit_verify_options::head_key accept, in bytes.
inline constexpr std::size_t audit_head_key_min_bytes = 16;

// Names of the events that end a run (for interrupted_runs).
bool ends_run(std::string_view event) noexcept;

}  // namespace cordon::governance
