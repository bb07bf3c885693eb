// src/broker/first_bytes.h — what a client's first bytes say about its
// destination, read the way the server will read them, as pure functions
// (no sockets):
// - a TLS ClientHello (RFC 8446 §4.1.2, SNI RFC 6066 §3), assembled from as
//   many records as the client split it into (empty records included,
//   RFC 8446 §5.1 lets a handshake message span records), up to
//   max_client_hello_bytes;
// - an HTTP/1 request head as a lenient server parses it (RFC 9112: empty
//   lines before the request line are skipped, §2.2; any whitespace
//   separates the request line's words, §3; a bare LF ends a line, §2.2):
//   the host of its target in absolute form, which the server goes by, else
//   of its Host field (§3.2, §3.2.2), and how its body is framed (§6).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace cordon::broker {

// The most bytes of TLS records read to find a complete ClientHello. A
// ClientHello is one handshake message of at most a few KiB in practice
// (post-quantum key shares included); 32 KiB leaves room for a client
// that splits it into many records.
inline constexpr std::size_t max_client_hello_bytes = 32 * 1024;

enum class first_bytes_status {
  incomplete,  // could still become a ClientHello or a request head: read more
  tls,         // a complete ClientHello; `name` is its SNI host name, empty when it sends none
  http,        // a complete request head; `name` is the host of its absolute-form target, else of
               // its Host field (empty when absent)
  other,       // neither TLS nor HTTP: another protocol
  malformed,   // TLS or HTTP that no check can read (`problem` says why); never passed as `other`
};

struct first_bytes_result {
  first_bytes_status status = first_bytes_status::incomplete;
  std::string name;     // as sent (the caller normalizes and validates it); IPv6 with brackets
  std::string problem;  // malformed: why
};

// Classifies the bytes a client sent first. `data` is everything received so
// far; `max_head_bytes` bounds an HTTP request head (more is `malformed`).
first_bytes_result classify_first_bytes(std::string_view data, std::size_t max_head_bytes = 16 * 1024);

// For a transparent connection whose first bytes are `incomplete`: is the
// name they may carry worth waiting for? True for TLS being assembled, for
// a known method's prefix and for a token followed by whitespace (a request
// line under way); false for a lone other token, which is decided at once
// by its address (a client that sends one word and waits is not held; the
// connection's later bytes are still judged, client_judge.h).
bool worth_waiting_for(std::string_view data);

// ---- the two scanners it is made of (client_judge.h uses them too) ---------

// TLS records from the start of `data` until a complete ClientHello.
struct client_hello_scan {
  first_bytes_status status = first_bytes_status::incomplete;  // incomplete, tls or malformed
  std::string name;                                            // tls: the SNI, empty when none
  std::string problem;                                         // malformed: why
};
client_hello_scan scan_client_hello(std::string_view data);

// One HTTP/1 request head from the start of `data`.
struct request_head {
  first_bytes_status status = first_bytes_status::incomplete;  // incomplete, http, other or malformed
  std::size_t length = 0;       // http: bytes of the head, empty lines before it and the final one included
  std::string method;           // http
  std::string host;             // http: absolute-form target's host, else Host's, without port; empty: none
  bool absolute_form = false;   // the host came from the target
  bool chunked = false;         // Transfer-Encoding: chunked (the only coding accepted)
  std::uint64_t content_length = 0;  // when not chunked
  bool upgrade = false;         // an Upgrade field is present
  std::string problem;          // malformed: why
};
request_head scan_request_head(std::string_view data, std::size_t max_head_bytes);

}  // namespace cordon::broker
