// src/broker/core.h — what the broker's listeners (broker.cpp) and its
// sessions (session.cpp) share: the io_context, the options, the live
// sessions and the evidence. Private to src/broker.
#pragma once

#include <asio.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "broker/broker.h"
#include "broker/decision.h"
#include "broker/destination_table.h"
#include "broker/dns_cache.h"
#include "broker/evidence_stream.h"
#include "broker/relay_memory.h"

namespace cordon::broker::detail {

using stream = asio::generic::stream_protocol;
using acceptor = asio::basic_socket_acceptor<stream>;

// How a connection ended; each has its own `action` in the evidence
// (cordon/launch.h, network_connection).
enum class outcome {
  allowed,      // relayed to the destination
  denied,       // refused by a rule, the default action or the address check
  unreachable,  // allowed, but resolving, connecting or (terminated TLS) the upstream TLS or response failed
  malformed,    // no valid request: no rule was consulted; or no valid TLS where the rule required it
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

// A duration as reasons give it: "10000 ms".
inline std::string ms_text(std::chrono::milliseconds ms) { return std::to_string(ms.count()) + " ms"; }

class session;
class dns_server;
class dns_tcp_session;

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
  std::unordered_map<dns_tcp_session*, std::shared_ptr<dns_tcp_session>> dns_sessions;  // dns_tcp.cpp
  bool stopping = false;
  dns_cache dns;                            // what the sandbox resolved through dns_server
  std::shared_ptr<dns_server> dns_service;  // null: no DNS socket
  relay_budget budget;                      // bulk buffer grants and the DNS cache (relay_memory.h)
  std::uint64_t dns_granted = 0;            // of `budget`, what the DNS cache holds (dns_server.cpp)
  std::optional<original_destination> dns_address;  // the sandbox's DNS socket (dns_server.cpp)
  std::optional<asio::ip::tcp::endpoint> dns_upstream;  // options.dns_upstream, parsed
  std::unique_ptr<asio::steady_timer> memory_sampler;
  // Per rule with dns_queries_per_minute (cordon/policy.h): when its current
  // minute began and how many queries it forwarded in it (dns_server.cpp).
  struct dns_rate_window {
    std::chrono::steady_clock::time_point began{};
    std::uint64_t forwarded = 0;
  };
  std::unordered_map<std::size_t, dns_rate_window> dns_rates;
  // The run's broker budget (docs/network.md, "Memory budget"): what the
  // broker held at the last sample (broker.cpp, sample_memory) and what new
  // work admitted since then reserved. New work (a connection, a DNS query
  // sent upstream) is admitted only while their sum and its own reservation
  // fit in broker_limits::memory_budget_bytes; past it, refused and recorded
  // with a reason that starts "broker_budget".
  std::uint64_t held_at_sample = 0;
  std::uint64_t admitted_since_sample = 0;
  // The confined broker's evidence not yet sent to the supervisor
  // (broker_link.cpp), bytes; unset: none.
  std::function<std::uint64_t()> link_held_bytes;

  // May new work reserving `bytes` start? Reserves them when it may.
  bool admit(std::uint64_t bytes) {
    if (held_at_sample + admitted_since_sample + bytes > options.limits.memory_budget_bytes) return false;
    admitted_since_sample += bytes;
    return true;
  }
  // Why new work was refused: "broker_budget: ...".
  std::string budget_refusal() const {
    return "broker_budget: the broker holds " + std::to_string(held_at_sample + admitted_since_sample) +
           " bytes of its " + std::to_string(options.limits.memory_budget_bytes) + "-byte budget";
  }

  mutable std::mutex mutex;
  network_evidence evidence;

  // The confined broker streams its evidence to the supervisor
  // (broker_link.cpp, evidence_stream.h). Set, each entry goes to
  // `on_recorded` when it is complete instead of into `evidence`, and a
  // session still open is reported to `on_decided` when it is decided (and
  // when its action changes). Unset (the broker on a thread of the
  // supervisor), everything stays in `evidence`. Called on the broker's thread.
  std::function<void(std::uint64_t id, network_connection connection)> on_recorded;
  std::function<void(std::uint64_t id, network_connection connection)> on_decided;
  std::uint64_t last_entry_id = 0;  // a session's id for those reports (0: none)

  void record(network_connection connection, outcome result, std::uint64_t id = 0) {
    connection.action = action_text(result);
    if (on_recorded) return on_recorded(id, std::move(connection));
    const std::lock_guard<std::mutex> lock(mutex);
    add_connection(evidence, std::move(connection));
  }

  // Session `id` is still open and decided: `connection` as it stands.
  void decided(std::uint64_t id, const network_connection& connection, outcome result) {
    if (!on_decided) return;
    network_connection now = connection;
    now.action = action_text(result);
    on_decided(id, std::move(now));
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
// What the DNS server holds now (its buffer, queries waiting upstream), bytes.
std::uint64_t dns_server_held_bytes(const dns_server& s);

// The broker's verdict on one DNS query from the sandbox, before any
// upstream: `forward` (allowed: ask the upstream resolver; `record` is
// ready for the answer), or its own `response` (NXDOMAIN for a name no
// rule allows; empty: no answer at all, a malformed query) with `result`.
struct dns_verdict {
  bool forward = false;
  std::string upstream_query;  // when forward: what goes upstream (dns_upstream_query)
  std::string response;
  outcome result = outcome::error;
  network_connection record;  // protocol `protocol`, host, port 53, rule
};
dns_verdict judge_dns_query(core& c, const std::string& query, const char* protocol);

// An upstream answer for `record.host`: remembers its addresses for
// transparent connections (dns_cache.h) and records the first one.
void learn_dns_answer(core& c, network_connection& record, std::string_view response);

// Serves DNS over TCP (RFC 7766) on a connection the supervisor routed to
// the transparent listener for the sandbox's DNS address (dns_tcp.cpp).
void start_dns_tcp_session(core& c, stream::socket client);
void stop_dns_tcp_session(dns_tcp_session& s);

// Ends a session at once and records it: the broker stops.
void stop_session(session& s);

// What a session holds now (kernel queues of its sockets, pipe contents,
// user-space buffers, the session itself), bytes.
std::uint64_t session_held_bytes(session& s);
// What a DNS-over-TCP session holds now, the same way (dns_tcp.cpp).
std::uint64_t dns_tcp_session_held_bytes(dns_tcp_session& s);

// What admitting new work reserves until the next sample counts it (bytes):
// a connection (its session and the request head it may hold), a DNS query
// sent upstream (its state, the query and its answer buffer).
inline constexpr std::uint64_t connection_reservation = 4096 + 32 * 1024;
inline constexpr std::uint64_t dns_query_reservation = 1024 + 2 * 4096;

}  // namespace cordon::broker::detail
