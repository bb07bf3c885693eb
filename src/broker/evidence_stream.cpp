// src/broker/evidence_stream.cpp — see evidence_stream.h.
#include "broker/evidence_stream.h"

#include <utility>

namespace cordon::broker {

void add_connection(network_evidence& e, network_connection c) {
  ++e.total;
  if (c.action == "allow") {
    ++e.allowed;
  } else if (c.action == "deny") {
    ++e.denied;
  } else if (c.action == "unreachable") {
    ++e.unreachable;
  } else if (c.action == "malformed") {
    ++e.malformed;
  } else {
    c.action = "error";
    ++e.error;
  }
  if (e.connections.size() < network_evidence::max_recorded) {
    e.connections.push_back(std::move(c));
  } else {
    ++e.not_recorded;
  }
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
