// src/broker/evidence_stream.h — the confined broker's evidence as a stream
// (docs/network.md, "The broker's process"): the broker sends each entry over
// its channel when it is complete, and a connection still open when it is
// decided, so that a broker killed in the middle of the run still leaves
// every decision it made in the report. This is the supervisor's side: it
// merges what arrived, in order, with the same counting the broker uses, and
// holds a bounded amount.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "cordon/launch.h"

namespace cordon::broker {

// Adds `connection` to `evidence` as the broker records an entry: counted
// under its action (one that is not one of the five values becomes, and
// counts as, "error"), `count` times (1 but for an aggregated DNS entry).
// A DNS query that repeats a listed one (same protocol, name, rule, action,
// answer and reason) is counted into that entry's `count` and into
// `aggregated`. Otherwise it is listed while fewer than
// network_evidence::max_recorded are; when the list is full, the latest of
// the least informative listed entries (DNS, then other decisions, then
// denials, then connections that carried bytes) gives way to a more
// informative one and is counted in not_recorded, else the new one is. So
// no flood of cheaper entries crowds a denial or a connection that carried
// bytes out of the list. The counters are always the entries'.
void add_connection(network_evidence& evidence, network_connection connection);

// What `connection` holds in memory (its strings, its requests'), bytes;
// counted into the broker's memory peak and budget wherever entries wait
// (the in-thread broker's list, the confined broker's unsent reports).
std::uint64_t connection_held_bytes(const network_connection& connection);

// The supervisor's copy of a streamed evidence. Holds at most max_recorded
// listed entries (the counters count the rest) and at most `max_open`
// connections reported open at once: a broker has no more sessions than its
// connection limit, so a report beyond that is ignored (the entry still
// counts once it is recorded). Not thread-safe: the caller locks.
class streamed_evidence {
 public:
  explicit streamed_evidence(std::size_t max_open) : max_open_(max_open) {}

  // Connection `id` (never 0), still open, was decided or its action
  // changed: `connection` as it stands now replaces what was reported for it.
  void opened(std::uint64_t id, network_connection connection);

  // An entry is complete: a connection that ended (`id` as reported open,
  // or 0 for one never reported open, a DNS query, a broker failure).
  void recorded(std::uint64_t id, network_connection connection);

  // The broker's last message: entries it had not streamed (added as
  // recorded), its memory peak and its injections. A connection still
  // reported open then is added as ended_open() adds it.
  void finished(network_evidence last);

  // The broker is gone: each connection still reported open is added with
  // the action it was last reported with (its bytes and duration as of
  // that report, requests not listed) and `note` appended to its reason.
  void ended_open(const std::string& note);

  network_evidence& evidence() { return evidence_; }
  const network_evidence& evidence() const { return evidence_; }

  // How many connections are reported open now (and not yet ended).
  std::size_t open_count() const { return open_.size(); }

 private:
  network_evidence evidence_;
  std::size_t max_open_;
  std::map<std::uint64_t, network_connection> open_;  // by id: the order the broker accepted them
};

}  // namespace cordon::broker
