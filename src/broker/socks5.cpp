// src/broker/socks5.cpp — see socks5.h.
#include "broker/socks5.h"

#include <arpa/inet.h>

#include <array>
#include <string>

namespace cordon::broker {
namespace {

constexpr char version = 0x05;

std::uint8_t byte_at(std::string_view data, std::size_t i) { return static_cast<std::uint8_t>(data[i]); }

}  // namespace

socks5_greeting_result parse_socks5_greeting(std::string_view data) {
  socks5_greeting_result r;
  if (data.empty()) return r;
  if (data[0] != version) {
    r.status = socks5_status::error;
    r.error = "not SOCKS version 5";
    return r;
  }
  if (data.size() < 2) return r;
  const std::size_t methods = byte_at(data, 1);
  if (data.size() < 2 + methods) return r;
  for (std::size_t i = 0; i < methods; ++i) {
    if (byte_at(data, 2 + i) == 0x00) r.no_auth_offered = true;
  }
  r.status = socks5_status::complete;
  r.length = 2 + methods;
  return r;
}

std::string socks5_method_selection(bool accepted) {
  return std::string{version, static_cast<char>(accepted ? 0x00 : 0xff)};
}

socks5_request_result parse_socks5_request(std::string_view data) {
  socks5_request_result r;
  auto fail = [&](std::uint8_t reply, std::string error) {
    r.status = socks5_status::error;
    r.reply = reply;
    r.error = std::move(error);
    return r;
  };
  if (data.empty()) return r;
  if (data[0] != version) return fail(socks5_reply_code::general_failure, "not SOCKS version 5");
  if (data.size() < 4) return r;
  r.request.command = byte_at(data, 1);
  r.request.address_type = byte_at(data, 3);
  std::size_t address_length = 0;
  std::size_t offset = 4;
  switch (r.request.address_type) {
    case socks5_address_type::ipv4:
      address_length = 4;
      break;
    case socks5_address_type::ipv6:
      address_length = 16;
      break;
    case socks5_address_type::domain:
      if (data.size() < 5) return r;
      address_length = byte_at(data, 4);
      offset = 5;
      break;
    default:
      return fail(socks5_reply_code::address_type_not_supported,
                  "unknown address type " + std::to_string(r.request.address_type));
  }
  const std::size_t length = offset + address_length + 2;
  if (data.size() < length) return r;
  const std::string_view address = data.substr(offset, address_length);
  if (r.request.address_type == socks5_address_type::domain) {
    r.request.host = std::string(address);
  } else {
    std::array<char, INET6_ADDRSTRLEN> text{};
    const int family = r.request.address_type == socks5_address_type::ipv4 ? AF_INET : AF_INET6;
    if (inet_ntop(family, address.data(), text.data(), text.size()) == nullptr) {
      return fail(socks5_reply_code::general_failure, "unprintable address");
    }
    r.request.host = text.data();
  }
  r.request.port = (int{byte_at(data, offset + address_length)} << 8) | int{byte_at(data, offset + address_length + 1)};
  r.length = length;
  if (r.request.command != socks5_command::connect) {
    const std::uint8_t c = r.request.command;
    const std::string name = c == socks5_command::bind            ? "BIND"
                             : c == socks5_command::udp_associate ? "UDP ASSOCIATE"
                                                                  : "command " + std::to_string(c);
    return fail(socks5_reply_code::command_not_supported, name + " is not supported, only CONNECT");
  }
  r.status = socks5_status::complete;
  return r;
}

std::string socks5_reply(std::uint8_t code, std::string_view bound_address, int bound_port) {
  std::string out{version, static_cast<char>(code), 0x00};
  const std::string literal(bound_address);
  std::array<unsigned char, 16> raw{};
  if (inet_pton(AF_INET6, literal.c_str(), raw.data()) == 1) {
    out += static_cast<char>(socks5_address_type::ipv6);
    out.append(reinterpret_cast<const char*>(raw.data()), 16);
  } else {
    if (inet_pton(AF_INET, literal.c_str(), raw.data()) != 1) raw = {};
    out += static_cast<char>(socks5_address_type::ipv4);
    out.append(reinterpret_cast<const char*>(raw.data()), 4);
  }
  out += static_cast<char>((bound_port >> 8) & 0xff);
  out += static_cast<char>(bound_port & 0xff);
  return out;
}

}  // namespace cordon::broker
