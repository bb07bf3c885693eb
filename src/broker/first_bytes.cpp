// src/broker/first_bytes.cpp — SNI and Host from a connection's first bytes
// (first_bytes.h).
#include "broker/first_bytes.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace cordon::broker {
namespace {

// A bounds-checked reader over the ClientHello. Every read past the end sets
// `bad` and yields 0, so the parser needs no checks between steps.
struct reader {
  std::string_view data;
  std::size_t at = 0;
  bool bad = false;

  std::size_t left() const { return at <= data.size() ? data.size() - at : 0; }
  std::uint32_t number(std::size_t bytes) {
    if (bad || left() < bytes) {
      bad = true;
      return 0;
    }
    std::uint32_t v = 0;
    for (std::size_t i = 0; i < bytes; ++i) v = (v << 8) | static_cast<unsigned char>(data[at++]);
    return v;
  }
  std::string_view take(std::size_t n) {
    if (bad || left() < n) {
      bad = true;
      return {};
    }
    const auto out = data.substr(at, n);
    at += n;
    return out;
  }
};

constexpr std::uint8_t handshake_record = 0x16;
constexpr std::uint8_t client_hello = 0x01;
constexpr std::uint16_t server_name_extension = 0x0000;
constexpr std::uint8_t host_name_type = 0x00;

// The SNI host name of a ClientHello handshake message body, empty when it
// has none. `ok` false: not a well-formed ClientHello.
std::string client_hello_name(std::string_view body, bool& ok) {
  reader r{body};
  r.take(2 + 32);               // legacy_version, random
  r.take(r.number(1));          // legacy_session_id
  r.take(r.number(2));          // cipher_suites
  r.take(r.number(1));          // legacy_compression_methods
  if (r.bad) return ok = false, std::string();
  if (r.left() == 0) return ok = true, std::string();  // no extensions at all
  reader ext{r.take(r.number(2))};
  std::string name;
  while (!ext.bad && ext.left() > 0) {
    const auto type = ext.number(2);
    reader value{ext.take(ext.number(2))};
    if (ext.bad || type != server_name_extension) continue;
    reader list{value.take(value.number(2))};
    while (!list.bad && list.left() > 0) {
      const auto kind = list.number(1);
      const auto host = list.take(list.number(2));
      if (!list.bad && kind == host_name_type && name.empty()) name = std::string(host);
    }
    if (list.bad || value.bad) return ok = false, std::string();
  }
  ok = !r.bad && !ext.bad;
  return name;
}

first_bytes_result classify_tls(std::string_view data) {
  first_bytes_result out;
  if (data.size() < 5) return out.needed = 5, out;
  reader header{data};
  header.number(1);                           // content type
  const auto version = header.number(2);      // legacy_record_version
  const auto length = header.number(2);
  if ((version >> 8) != 0x03 || length == 0 || length > 16384 + 256) return out.status = first_bytes_status::other, out;
  if (data.size() < 5 + length) return out.needed = 5 + length, out;
  // The ClientHello may span records; one record holds it in practice (a
  // client that splits it is decided as if it sent no name).
  reader handshake{data.substr(5, length)};
  const auto message = handshake.number(1);
  const auto body_length = handshake.number(3);
  if (handshake.bad || message != client_hello) return out.status = first_bytes_status::other, out;
  if (body_length > handshake.left()) return out.status = first_bytes_status::tls, out;  // split: no name seen
  bool ok = false;
  out.name = client_hello_name(handshake.take(body_length), ok);
  out.status = ok ? first_bytes_status::tls : first_bytes_status::other;
  if (!ok) out.name.clear();
  return out;
}

bool token_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

// The methods a request head may start with (RFC 9110 §9, RFC 5789 PATCH,
// WebDAV's RFC 4918). Only these are waited for: bytes that cannot begin
// one of them are some other protocol, decided at once, so that a client
// sending one byte and waiting for its answer is not held.
constexpr std::string_view known_methods[] = {"GET",      "HEAD",  "POST",     "PUT",   "DELETE", "OPTIONS",
                                              "TRACE",    "PATCH", "PROPFIND", "MKCOL", "COPY",   "MOVE",
                                              "PROPPATCH", "LOCK", "UNLOCK",   "REPORT", "CONNECT"};

// host [":" port] without the port; an IPv6 literal keeps its brackets.
std::string_view without_port(std::string_view value) {
  const auto close = value.rfind(']');
  const auto port = value.rfind(':');
  if (port != std::string_view::npos && (close == std::string_view::npos || port > close)) value = value.substr(0, port);
  return value;
}

// The host of an absolute-form request target ("http://user@host:port/path",
// RFC 9112 §3.2.2), or nullopt when the target is in another form. A server
// that gets this form routes by it and ignores the Host field, so it, not
// Host, names the destination.
std::optional<std::string_view> absolute_form_host(std::string_view request_line) {
  const auto space = request_line.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  std::string_view target = request_line.substr(space + 1);
  target = target.substr(0, target.find(' '));
  const auto scheme_end = target.find("://");
  if (scheme_end == std::string_view::npos || scheme_end == 0 ||
      !std::all_of(target.begin(), target.begin() + static_cast<std::ptrdiff_t>(scheme_end),
                   [](char c) { return token_char(c) || c == '+' || c == '.'; })) {
    return std::nullopt;
  }
  std::string_view authority = target.substr(scheme_end + 3);
  authority = authority.substr(0, authority.find_first_of("/?#"));
  if (const auto at = authority.rfind('@'); at != std::string_view::npos) authority.remove_prefix(at + 1);
  return without_port(authority);
}

first_bytes_result classify_http(std::string_view data) {
  first_bytes_result out;
  bool may_be_method = false;
  for (const auto method : known_methods) {
    const std::string line_start = std::string(method) + " ";
    const std::size_t n = std::min(data.size(), line_start.size());
    if (data.substr(0, n) == std::string_view(line_start).substr(0, n)) may_be_method = true;
  }
  if (!may_be_method) return out.status = first_bytes_status::other, out;
  std::size_t i = 0;
  while (i < data.size() && i < 32 && token_char(data[i])) ++i;
  if (i == data.size()) return out;  // still the method
  const auto end = data.find("\r\n\r\n");
  if (end == std::string_view::npos) return out;
  std::string_view head = data.substr(0, end + 2);
  const std::string_view request_line = head.substr(0, head.find("\r\n"));
  head.remove_prefix(std::min(head.size(), head.find("\r\n") + 2));  // the request line
  out.status = first_bytes_status::http;
  if (const auto host = absolute_form_host(request_line)) {
    out.name = std::string(*host);
    return out;
  }
  while (!head.empty()) {
    const auto eol = head.find("\r\n");
    std::string_view line = head.substr(0, eol);
    head.remove_prefix(eol == std::string_view::npos ? head.size() : eol + 2);
    const auto colon = line.find(':');
    if (colon != 4) continue;
    std::string field(line.substr(0, 4));
    std::transform(field.begin(), field.end(), field.begin(), [](char c) { return static_cast<char>(c | 0x20); });
    if (field != "host") continue;
    std::string_view value = line.substr(5);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
    out.name = std::string(without_port(value));
    return out;  // the first Host field decides (a second one is a malformed request, RFC 9112 §3.2)
  }
  return out;
}

}  // namespace

first_bytes_result classify_first_bytes(std::string_view data) {
  if (data.empty()) return {};
  if (static_cast<std::uint8_t>(data[0]) == handshake_record) return classify_tls(data);
  return classify_http(data);
}

}  // namespace cordon::broker
