// src/broker/evidence_stream.cpp — see evidence_stream.h.
#include "broker/evidence_stream.h"

#include <algorithm>
#include <utility>

namespace cordon::broker {

namespace {

bool is_dns(const network_connection& c) { return c.protocol == "dns" || c.protocol == "dns_tcp"; }

// How much an entry says, least first: a DNS query (repeats of one are
// counted into one entry), another decision, a denial, a connection that
// carried bytes. A full list drops the least informative entry first.
int informative(const network_connection& c) {
  if (c.bytes_sent + c.bytes_received > 0) return 3;
  if (c.action == "deny") return 2;
  return is_dns(c) ? 0 : 1;
}

// A listed DNS entry `c` repeats: same protocol, name, rule, action and answer.
bool repeats(const network_connection& listed, const network_connection& c) {
  return is_dns(listed) && listed.protocol == c.protocol && listed.host == c.host && listed.action == c.action &&
         listed.rule_consulted == c.rule_consulted && listed.rule == c.rule && listed.address == c.address &&
         listed.reason == c.reason;
}

}  // namespace

void add_connection(network_evidence& e, network_connection c) {
  e.total += c.count;
  std::uint64_t* counter = &e.error;
  if (c.action == "allow") {
    counter = &e.allowed;
  } else if (c.action == "deny") {
    counter = &e.denied;
  } else if (c.action == "unreachable") {
    counter = &e.unreachable;
  } else if (c.action == "malformed") {
    counter = &e.malformed;
  } else {
    c.action = "error";
  }
  *counter += c.count;
  if (is_dns(c)) {
    for (auto& listed : e.connections) {
      if (!repeats(listed, c)) continue;
      listed.count += c.count;
      listed.duration_ms = std::max(listed.duration_ms, c.duration_ms);
      e.aggregated += c.count;
      return;
    }
  }
  if (e.connections.size() < network_evidence::max_recorded) {
    e.connections.push_back(std::move(c));
    return;
  }
  // Full: the latest of the least informative entries gives way to a more
  // informative one, else the new one is not listed.
  const int rank = informative(c);
  auto weakest = e.connections.end();
  for (auto it = e.connections.begin(); it != e.connections.end(); ++it) {
    if (informative(*it) < rank && (weakest == e.connections.end() || informative(*it) <= informative(*weakest))) weakest = it;
  }
  if (weakest == e.connections.end()) {
    e.not_recorded += c.count;
    return;
  }
  e.not_recorded += weakest->count;
  e.connections.erase(weakest);
  e.connections.push_back(std::move(c));
}

std::uint64_t connection_held_bytes(const network_connection& c) {
  std::uint64_t held = sizeof c + c.protocol.capacity() + c.original.capacity() + c.name_source.capacity() +
                       c.host.capacity() + c.action.capacity() + c.reason.capacity() + c.address.capacity() +
                       c.tls.capacity();
  for (const auto& r : c.requests) {
    held += sizeof r + r.method.capacity() + r.host.capacity() + r.path.capacity() + r.action.capacity() +
            r.reason.capacity();
    for (const auto& i : r.injected) held += sizeof i + i.capacity();
  }
  return held;
}

void streamed_evidence::opened(std::uint64_t id, network_connection c) {
  if (id == 0) return;
  c.requests.clear();  // the final entry lists them; a report of a decision is small
  const auto it = open_.find(id);
  if (it != open_.end()) {
    it->second = std::move(c);
  } else if (open_.size() < max_open_) {
    open_.emplace(id, std::move(c));
  }
}

void streamed_evidence::recorded(std::uint64_t id, network_connection c) {
  if (id != 0) open_.erase(id);
  add_connection(evidence_, std::move(c));
}

void streamed_evidence::finished(network_evidence last) {
  for (auto& c : last.connections) add_connection(evidence_, std::move(c));
  evidence_.memory_peak_bytes = last.memory_peak_bytes;
  evidence_.injections = std::move(last.injections);
  ended_open("the network broker ended without recording this connection");
}

void streamed_evidence::ended_open(const std::string& note) {
  for (auto& [id, c] : open_) {
    c.reason = c.reason.empty() ? note : c.reason + "; " + note;
    add_connection(evidence_, std::move(c));
  }
  open_.clear();
}

}  // namespace cordon::broker
