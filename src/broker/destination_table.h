// src/broker/destination_table.h — where a transparently routed connection
// was going. The supervisor answers the command's connect(2) itself
// (src/linux/connect_redirect.h): it binds the command's socket to a local
// loopback port, notes the original destination here under that source,
// and connects the socket to the broker's transparent listener; the broker
// takes the entry when it accepts the connection (its peer is that source).
// Thread-safe: filled on the supervisor's thread, read on the broker's.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

namespace cordon::broker {

struct original_destination {
  std::string address;  // IP literal, normalized (IPv4-mapped IPv6 as IPv4)
  int port = 0;
};

class destination_table {
 public:
  // At most this many entries wait for their accept; a connect beyond it is
  // refused (the command opened that many connections the broker never saw).
  static constexpr std::size_t max_pending = 4096;

  // Notes `destination` for the connection from `source` ("127.0.0.1:40000",
  // "[::1]:40000"). False when the table is full. A second entry for one
  // source replaces the first (the first connect failed or was abandoned).
  bool put(const std::string& source, original_destination destination) {
    if (forward_) return forward_(source, &destination);
    const std::lock_guard<std::mutex> lock(mutex_);
    if (entries_.size() >= max_pending && entries_.find(source) == entries_.end()) return false;
    entries_[source] = std::move(destination);
    return true;
  }

  // Takes the entry for `source`, if there is one.
  std::optional<original_destination> take(const std::string& source) {
    if (refill_) refill_();
    const std::lock_guard<std::mutex> lock(mutex_);
    auto it = entries_.find(source);
    if (it == entries_.end()) return std::nullopt;
    auto out = std::move(it->second);
    entries_.erase(it);
    return out;
  }

  // Forgets `source` (its connect failed).
  void drop(const std::string& source) {
    if (forward_) {
      (void)forward_(source, nullptr);
      return;
    }
    const std::lock_guard<std::mutex> lock(mutex_);
    entries_.erase(source);
  }

  // The broker in a process of its own (src/linux/broker_process.h): on the
  // supervisor's side every put() and drop() is sent to it instead
  // (`forward(source, &destination)`, `forward(source, nullptr)`; put()
  // returns what forward returns), before the supervisor connects the
  // command's socket; on the broker's side take() first calls `refill`,
  // which reads what was sent so far, so an entry sent before the connect is
  // always there when its connection is accepted. Set before use.
  using forwarder = std::function<bool(const std::string& source, const original_destination* destination)>;
  void set_forward(forwarder forward) { forward_ = std::move(forward); }
  void set_refill(std::function<void()> refill) { refill_ = std::move(refill); }

 private:
  forwarder forward_;
  std::function<void()> refill_;
  std::mutex mutex_;
  std::map<std::string, original_destination> entries_;
};

}  // namespace cordon::broker
