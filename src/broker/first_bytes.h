// src/broker/first_bytes.h — what the first bytes of a transparent
// connection say about its destination, as pure functions: the server name
// of a TLS ClientHello (RFC 8446 §4.1.2, SNI RFC 6066 §3) or the Host field
// of an HTTP/1 request in origin form (RFC 9112 §3.2), or the host of its
// target in absolute form, which the server goes by instead of Host
// (RFC 9112 §3.2.2). No sockets.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace cordon::broker {

enum class first_bytes_status {
  incomplete,  // could still become a ClientHello or a request head (a known method): read more
  tls,         // a complete ClientHello; `name` is its SNI host name, empty when it sends none
  http,        // a complete request head; `name` is the host of its absolute-form target, else of
               // its Host field (empty when absent)
  other,       // neither (or malformed): decide by the address
};

struct first_bytes_result {
  first_bytes_status status = first_bytes_status::incomplete;
  std::string name;  // as sent (the caller normalizes and validates it); IPv6 with brackets
  // Bytes the caller must hold before `status` can be known; a ClientHello
  // record may be 16 KiB + 5.
  std::size_t needed = 0;
};

// Classifies the bytes a client sent first. `data` is everything received so
// far (the caller stops reading at `max` bytes and then treats the connection
// as `other`).
first_bytes_result classify_first_bytes(std::string_view data);

}  // namespace cordon::broker
