// src/broker/core.h — what the broker's listeners (broker.cpp) and its
// sessions (session.cpp) share: the io_context, the options, the live
// sessions and the evidence. Private to src/broker.
#pragma once

#include <asio.hpp>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "broker/broker.h"
#include "broker/decision.h"

namespace cordon::broker::detail {

using stream = asio::generic::stream_protocol;
using acceptor = asio::basic_socket_acceptor<stream>;

enum class outcome { allowed, denied, failed };

class session;

struct listener {
  listener(asio::io_context& io, stream p) : socket(io), retry(io), protocol(p) {}
  acceptor socket;
  asio::steady_timer retry;
  stream protocol;
};

// What every session shares. The io_context is the first member so that it is
// destroyed last: sockets must not outlive it. Everything but `mutex` and
// `evidence` is used on the broker's thread only (before it starts and after
// it ended, on the thread that starts or stops the broker).
struct core {
  asio::io_context io;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  broker_options options;
  std::vector<std::unique_ptr<listener>> listeners;
  std::unordered_map<session*, std::shared_ptr<session>> sessions;
  bool stopping = false;

  mutable std::mutex mutex;
  network_evidence evidence;

  void record(network_connection connection, outcome result) {
    const std::lock_guard<std::mutex> lock(mutex);
    ++evidence.total;
    switch (result) {
      case outcome::allowed:
        ++evidence.allowed;
        break;
      case outcome::denied:
        ++evidence.denied;
        break;
      case outcome::failed:
        ++evidence.failed;
        break;
    }
    if (evidence.connections.size() < network_evidence::max_recorded) {
      evidence.connections.push_back(std::move(connection));
    } else {
      ++evidence.not_recorded;
    }
  }

  void record_failure(std::string reason) {
    network_connection c;
    c.protocol = "unknown";
    c.action = "deny";
    c.reason = printable(reason);
    record(std::move(c), outcome::failed);
  }
};

// Serves one accepted client connection (session.cpp).
void start_session(core& c, stream::socket client);

// Ends a session at once and records it: the broker stops.
void stop_session(session& s);

}  // namespace cordon::broker::detail
