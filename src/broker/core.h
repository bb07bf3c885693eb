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
#include "broker/destination_table.h"
#include "broker/dns_cache.h"

namespace cordon::broker::detail {

using stream = asio::generic::stream_protocol;
using acceptor = asio::basic_socket_acceptor<stream>;

// How a connection ended; each has its own `action` in the evidence
// (cordon/launch.h, network_connection).
enum class outcome {
  allowed,      // relayed to the destination
  denied,       // refused by a rule, the default action or the address check
  unreachable,  // allowed, but resolving or connecting to the destination failed
  malformed,    // no valid request: no rule was consulted
  error,        // the broker's own limits, an internal error, or stop() before a decision
};

inline const char* action_text(outcome o) {
  switch (o) {
    case outcome::allowed: return "allow";
    case outcome::denied: return "deny";
    case outcome::unreachable: return "unreachable";
    case outcome::malformed: return "malformed";
    case outcome::error: return "error";
  }
  return "error";
}

class session;
class dns_server;

struct listener {
  listener(asio::io_context& io, stream p) : socket(io), retry(io), protocol(p) {}
  acceptor socket;
  asio::steady_timer retry;
  stream protocol;
  bool transparent = false;  // connections routed here by the supervisor (broker_options::transparent_listener)
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
  dns_cache dns;                            // what the sandbox resolved through dns_server
  std::shared_ptr<dns_server> dns_service;  // null: no DNS socket

  mutable std::mutex mutex;
  network_evidence evidence;

  void record(network_connection connection, outcome result) {
    connection.action = action_text(result);
    const std::lock_guard<std::mutex> lock(mutex);
    ++evidence.total;
    switch (result) {
      case outcome::allowed: ++evidence.allowed; break;
      case outcome::denied: ++evidence.denied; break;
      case outcome::unreachable: ++evidence.unreachable; break;
      case outcome::malformed: ++evidence.malformed; break;
      case outcome::error: ++evidence.error; break;
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
    c.reason = printable(reason);
    record(std::move(c), outcome::error);
  }
};

// Serves one accepted client connection (session.cpp).
void start_session(core& c, stream::socket client);

// Serves one connection accepted on the transparent listener; `original` is
// where the command connected (empty: unknown, refused).
void start_transparent_session(core& c, stream::socket client, std::optional<original_destination> original);

// Serves the sandbox's DNS on the bound UDP socket `fd` (ownership passes),
// forwarding allowed queries to options.dns_upstream (dns_server.cpp).
// Returns why it cannot, or empty.
std::string start_dns_server(core& c, int fd);
void stop_dns_server(dns_server& s);

// Ends a session at once and records it: the broker stops.
void stop_session(session& s);

}  // namespace cordon::broker::detail
