// src/broker/http_request.h — the proxy's HTTP side as pure functions: a
// request head in bytes -> a parsed request or the status to refuse it with;
// the head forwarded to an origin; the broker's own responses. No sockets.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace cordon::broker {

enum class http_kind {
  connect,  // CONNECT host:port (RFC 9110 §9.3.6), authority form
  forward,  // METHOD http://host[:port]/path (RFC 9112 §3.2.2), absolute form
};

struct http_header {
  std::string name;   // as sent
  std::string value;  // without surrounding whitespace
};

struct http_request {
  http_kind kind = http_kind::connect;
  std::string method;     // case-sensitive, as sent ("GET")
  std::string host;       // as named: a DNS name, an IPv4 literal, or "[IPv6]" with its brackets
  int port = 0;           // as sent (not range-checked here); 80 when absent from an http:// URI
  std::string authority;  // host[:port] as sent in the target (forward: without userinfo)
  std::string path;       // forward: origin form "/path?query" (fragment dropped); connect: empty
  std::string version;    // "HTTP/1.0" or "HTTP/1.1"
  std::vector<http_header> headers;
};

enum class http_parse_status {
  incomplete,   // no complete head yet and nothing wrong so far: read more
  complete,     // `request` and `head_length` are set
  bad_request,  // 400: `error` says why
  too_large,    // 431: the head does not fit in the limit
};

struct http_parse_result {
  http_parse_status status = http_parse_status::incomplete;
  // Complete: the request. bad_request: as far as parsed; `method` is set
  // once the request line was recognized as HTTP (then `kind` is right too).
  http_request request;
  std::size_t head_length = 0;  // bytes of the head, final empty line included; what follows is payload
  std::string error;            // one line, printable ASCII
};

// Parses the request head at the start of `data` (RFC 9112 §2-§5): lines end
// in CRLF, the head in an empty line. `max_head_bytes` bounds the head. A
// request line that is already complete is checked before the rest arrives,
// and bytes no request head contains (control characters, a bare CR or LF)
// are refused at once, so a client speaking something else (TLS sent
// straight to the proxy) is told no without waiting for the timeout.
http_parse_result parse_http_request(std::string_view data, std::size_t max_head_bytes);

// The head sent to the origin for a forward request: origin-form request
// line; Host replaced by the target's authority (RFC 9112 §3.2.2: a proxy
// MUST ignore the received Host); Connection, Keep-Alive, every Proxy-*
// field (Proxy-Connection, Proxy-Authorization, ...) and every field
// Connection names dropped (hop-by-hop, RFC 9110 §7.6.1); "Connection:
// close" added (one request per connection).
std::string forward_request_head(const http_request& request);

// A complete response of the broker's own: status line, Content-Type
// text/plain, Content-Length, "Connection: close", `extra` headers, `body`.
std::string http_response(int status, std::string_view body, const std::vector<http_header>& extra = {});

// The reason phrase for the statuses the broker sends ("Forbidden").
std::string_view http_reason_phrase(int status);

}  // namespace cordon::broker
