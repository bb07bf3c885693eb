// src/broker/http_exchange.h — HTTP/1.1 inside a terminated TLS connection
// (docs/tls.md) as pure functions: origin-form request heads, response
// heads, message framing (RFC 9112 §6), the per-rule request decision and
// the head forwarded upstream with a credential injected. No sockets.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "broker/http_request.h"
#include "cordon/policy.h"

namespace cordon::broker {

// How a message's body ends (RFC 9112 §6.3).
enum class body_framing {
  none,            // no body
  length,          // exactly `length` bytes
  chunked,         // chunked transfer coding, through the last chunk and trailers
  until_close,     // a response read to the end of the connection
};

struct http_message_head {
  bool ok = false;
  std::string error;       // when !ok: one printable line
  std::string method;      // request
  std::string target;      // request: as sent
  std::string path;        // request: target without query; "/" for "*" never (refused)
  int status = 0;          // response
  std::string version;     // "HTTP/1.1", "HTTP/1.0"
  std::vector<http_header> headers;
  body_framing framing = body_framing::none;
  std::uint64_t length = 0;
  bool close = false;      // no further message on this connection after this one
};

// Parses a request head (`head` ends with its empty line). Refused (ok ==
// false): anything but origin-form targets, HTTP versions other than 1.0 and
// 1.1, obsolete line folding, both Content-Length and Transfer-Encoding,
// conflicting lengths, a transfer coding other than chunked (request
// smuggling defences, RFC 9112 §6.1, §6.3).
http_message_head parse_request_head(std::string_view head);

// Parses a response head to a request with `request_method`.
http_message_head parse_response_head(std::string_view head, std::string_view request_method);

// The first value of field `name` (case-insensitive), or nullopt.
std::optional<std::string> header_value(const std::vector<http_header>& headers, std::string_view name);

// Is this request allowed by a terminated `rule` for `host`? Returns why
// not, or empty. TRACE and TRACK are always refused (they echo the request,
// an injected credential included); an Upgrade turns the connection into
// something no method or path rule can judge, so it is refused unless the
// rule says `websocket` and the request is a WebSocket opening handshake
// (is_websocket_upgrade), which is then judged like any request (its GET
// by `methods`, its path by `paths`); h2c and every other protocol are
// always refused; a path with dot
// segments or percent-encoded '.', '/' or '\' is refused when the rule
// limits paths, so a prefix cannot be escaped by the server's decoding;
// a Host field naming another host is refused (virtual-host fronting).
std::string judge_request(const network_rule& rule, const std::string& host, int port,
                          const http_message_head& request);

// Is `request` a WebSocket opening handshake (RFC 6455 §4.1) the broker can
// forward? Returns why not, or empty: HTTP/1.1, GET, no body, exactly one
// Upgrade field whose value is the one token `websocket` (any case; a list
// such as "websocket, h2c" would let the server pick another protocol), and
// `upgrade` among the Connection field's tokens.
std::string websocket_upgrade_problem(const http_message_head& request);

// May the broker relay the connection unjudged after `response` (status
// 101) to `request` (a request judge_request allowed)? Returns why not, or
// empty: the request asked for a WebSocket and the response's Upgrade field
// is the one token `websocket`. A 101 to anything else is not a response
// the broker can pass on (the client did not ask to switch, or would be
// switched to a protocol no rule allowed).
std::string judge_switch(const http_message_head& request, const http_message_head& response);

// A header the broker sets: `name: value`.
struct injected_header {
  std::string name;
  std::string value;
};

// The head sent upstream: the request line and fields as received, minus
// every Proxy-* field and every field named like an injected one (the
// client's own copy is stripped), plus the injected fields.
std::string upstream_request_head(const http_message_head& request, const std::vector<injected_header>& inject);

}  // namespace cordon::broker
