// src/broker/socks5.h — SOCKS version 5 (RFC 1928) as pure functions: the
// client's method negotiation and request in bytes -> parsed values or the
// reply code to refuse with; the server's replies as bytes. No sockets.
// Only "no authentication required" (method 0x00) and CONNECT are served.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace cordon::broker {

// Reply field values (RFC 1928 §6).
namespace socks5_reply_code {
inline constexpr std::uint8_t succeeded = 0x00;
inline constexpr std::uint8_t general_failure = 0x01;
inline constexpr std::uint8_t not_allowed = 0x02;  // connection not allowed by ruleset
inline constexpr std::uint8_t network_unreachable = 0x03;
inline constexpr std::uint8_t host_unreachable = 0x04;
inline constexpr std::uint8_t connection_refused = 0x05;
inline constexpr std::uint8_t command_not_supported = 0x07;
inline constexpr std::uint8_t address_type_not_supported = 0x08;
}  // namespace socks5_reply_code

namespace socks5_command {
inline constexpr std::uint8_t connect = 0x01;
inline constexpr std::uint8_t bind = 0x02;
inline constexpr std::uint8_t udp_associate = 0x03;
}  // namespace socks5_command

namespace socks5_address_type {
inline constexpr std::uint8_t ipv4 = 0x01;
inline constexpr std::uint8_t domain = 0x03;
inline constexpr std::uint8_t ipv6 = 0x04;
}  // namespace socks5_address_type

enum class socks5_status {
  incomplete,  // read more
  complete,    // parsed; `length` bytes consumed
  error,       // refuse: `error` says why (requests: `reply` is the code to send)
};

// Method negotiation: VER NMETHODS METHODS... (RFC 1928 §3).
struct socks5_greeting_result {
  socks5_status status = socks5_status::incomplete;
  bool no_auth_offered = false;  // method 0x00 is among the client's methods
  std::size_t length = 0;
  std::string error;
};
socks5_greeting_result parse_socks5_greeting(std::string_view data);

// The server's method selection: 0x00, or 0xFF "no acceptable methods" after
// which the client must close (RFC 1928 §3).
std::string socks5_method_selection(bool accepted);

struct socks5_request {
  std::uint8_t command = 0;
  std::uint8_t address_type = 0;
  // IPv4: dotted quad; IPv6: RFC 5952 text, no brackets; domain: the bytes
  // as sent, unchecked (the rule matcher refuses what is not a host name).
  std::string host;
  int port = 0;
};

// Request: VER CMD RSV ATYP DST.ADDR DST.PORT (RFC 1928 §4). RSV is not
// checked. An unsupported command is reported as an error with `request`
// filled in and reply command_not_supported; an unknown address type with
// address_type_not_supported (the length of the rest is then unknown).
struct socks5_request_result {
  socks5_status status = socks5_status::incomplete;
  socks5_request request;
  std::size_t length = 0;
  std::uint8_t reply = socks5_reply_code::general_failure;
  std::string error;
};
socks5_request_result parse_socks5_request(std::string_view data);

// A reply (RFC 1928 §6) with BND.ADDR/BND.PORT: an IPv4 or IPv6 literal
// (anything else is sent as 0.0.0.0) and a port.
std::string socks5_reply(std::uint8_t code, std::string_view bound_address = "0.0.0.0", int bound_port = 0);

}  // namespace cordon::broker
