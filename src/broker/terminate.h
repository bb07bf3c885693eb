// src/broker/terminate.h — a connection whose rule says `tls: "terminate"`
// (docs/tls.md): the broker ends the command's TLS with a leaf of the run's
// authority, opens its own TLS to the destination (verified against
// tls_options::upstream_ca_file or the system store, HTTP/1.1 by ALPN), and
// reads HTTP/1.1 requests one by one: each is decided against the rule
// (methods, paths, TRACE/TRACK, Upgrade, Host), gets the host's credentials
// (the client's own field of that name stripped), and is recorded with its
// status and bytes. A refused request gets a 403 and ends the connection.
// On a rule with `websocket` a WebSocket upgrade is judged and forwarded
// like any request; once the destination answers 101 with Upgrade:
// websocket the connection's bytes are relayed both ways unjudged until
// either side ends, and its entry records `upgraded` and those bytes.
// Private to src/broker; runs on the broker's thread as a C++20 coroutine.
//
// The connection's action (docs/network.md, docs/tls.md) is kept true at
// every moment, because the run may end and the broker stop as soon as the
// client has read the broker's answer: `error` until both TLS handshakes
// completed, then `allow`; `deny` (the client's SNI names another host),
// `unreachable` (the upstream TLS failed, or the destination gave no usable
// response head) or `malformed` (the client's TLS handshake failed) are set
// before the client can see them.
//
// Deadlines (docs/tls.md): the client's handshake (the broker's clear-text
// answer included) must complete within limits.request_timeout, as a plain
// request must, else `malformed`; the destination's handshake within
// limits.connect_timeout, as its connect must, else `unreachable` and a 504.
// Either way the connection is closed.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "broker/core.h"

namespace cordon::broker::detail {

struct terminated_connection {
  core* c = nullptr;
  stream::socket* client = nullptr;          // owned by the session, which outlives this (keepalive)
  asio::ip::tcp::socket* upstream = nullptr;  // connected to the destination
  std::string reply;   // clear text the client gets first (CONNECT's 200, a SOCKS5 success); may be empty
  std::string prefix;  // bytes already read from the client (its ClientHello, or part of it)
  std::size_t rule = 0;  // index in c->options.policy.rules
  std::string host;      // the decided host, normalized
  int port = 0;
  network_connection* record = nullptr;  // the session's; requests are appended here, `reason` set
  outcome* result = nullptr;             // the session's: what it records as the connection's action
  // Called once when the connection is over (record and result are final).
  std::function<void()> done;
  // Called when *result changed while the connection is still open.
  std::function<void()> decided;
  std::shared_ptr<void> keepalive;  // the session
};

// What a terminated connection's two TLS connections hold in OpenSSL
// (bytes): its SSL objects and their record buffers (a 16 KiB record plus
// overhead each way, each side). An estimate, not measured: OpenSSL's
// allocations are not visible to the broker. Counted into the session's
// held bytes (docs/network.md, "Memory budget").
inline constexpr std::uint64_t terminated_tls_bytes = 2 * 48 * 1024;

// Is rule `index` of the broker's policy a terminated one?
bool rule_terminates(const core& c, std::size_t index);

// Starts serving `t` on c->io; returns at once, with *t.result `error`
// ("the run ended before ...") until the handshakes complete.
void start_terminated(terminated_connection t);

}  // namespace cordon::broker::detail
