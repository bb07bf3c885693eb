// src/broker/first_bytes.cpp — SNI and Host from a client's first bytes,
// read as the server reads them (first_bytes.h).
#include "broker/first_bytes.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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

constexpr std::uint8_t change_cipher_spec_record = 0x14;
constexpr std::uint8_t alert_record = 0x15;
constexpr std::uint8_t handshake_record = 0x16;
constexpr std::uint8_t application_data_record = 0x17;
constexpr std::uint8_t client_hello = 0x01;
constexpr std::uint16_t server_name_extension = 0x0000;
constexpr std::uint8_t host_name_type = 0x00;
constexpr std::size_t max_record_bytes = 16384;  // TLSPlaintext.length (RFC 8446 §5.1)

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
  int server_names = 0;
  while (!ext.bad && ext.left() > 0) {
    const auto type = ext.number(2);
    reader value{ext.take(ext.number(2))};
    if (ext.bad || type != server_name_extension) continue;
    if (++server_names > 1) return ok = false, std::string();  // RFC 8446 §4.2: at most one of each
    reader list{value.take(value.number(2))};
    while (!list.bad && list.left() > 0) {
      const auto kind = list.number(1);
      const auto host = list.take(list.number(2));
      if (!list.bad && kind == host_name_type && name.empty()) name = std::string(host);
    }
    if (list.bad || value.bad) return ok = false, std::string();
  }
  ok = !r.bad && !ext.bad && r.left() == 0;
  return name;
}

client_hello_scan tls_malformed(std::string problem) {
  client_hello_scan out;
  out.status = first_bytes_status::malformed;
  out.problem = std::move(problem);
  return out;
}

bool is_tchar(char c) {
  static constexpr std::string_view extra = "!#$%&'*+-.^_`|~";
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
         extra.find(c) != std::string_view::npos;
}

// Whitespace a lenient server splits a request line on (RFC 9112 §3): SP,
// HTAB, VT, FF and a bare CR.
bool is_line_space(char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r'; }

bool is_visible(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u > 0x20 && u != 0x7f;
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c | 0x20) : c; });
  return out;
}

std::string_view trim(std::string_view v) {
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
  return v;
}

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
std::optional<std::string_view> absolute_form_host(std::string_view target) {
  const auto scheme_end = target.find("://");
  if (scheme_end == std::string_view::npos || scheme_end == 0 ||
      !std::all_of(target.begin(), target.begin() + static_cast<std::ptrdiff_t>(scheme_end),
                   [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                                       c == '+' || c == '-' || c == '.'; })) {
    return std::nullopt;
  }
  std::string_view authority = target.substr(scheme_end + 3);
  authority = authority.substr(0, authority.find_first_of("/?#"));
  if (const auto at = authority.rfind('@'); at != std::string_view::npos) authority.remove_prefix(at + 1);
  return without_port(authority);
}

request_head head_status(first_bytes_status status, std::string problem = {}) {
  request_head out;
  out.status = status;
  out.problem = std::move(problem);
  return out;
}

// The request line's words (split on any line whitespace), or the status
// that ends the scan: `other` when the bytes cannot be a request line,
// `malformed` when they look like one no check can read. `complete` tells
// whether the line's LF was seen.
struct request_line_scan {
  std::optional<first_bytes_status> verdict;
  std::vector<std::string_view> words;
};

request_line_scan scan_request_line(std::string_view line, bool complete) {
  request_line_scan out;
  std::size_t i = 0;
  while (i < line.size()) {
    if (is_line_space(line[i])) {
      ++i;
      continue;
    }
    const std::size_t start = i;
    const bool method = out.words.empty();
    while (i < line.size() && !is_line_space(line[i])) {
      // The method is a token; once a token and whitespace came, the line is
      // a request line and a byte no request line holds makes it malformed.
      if (method ? !is_tchar(line[i]) : !is_visible(line[i])) {
        out.verdict = method ? first_bytes_status::other : first_bytes_status::malformed;
        return out;
      }
      ++i;
    }
    out.words.push_back(line.substr(start, i - start));
  }
  if (!complete) return out;
  const auto version_like = [](std::string_view w) { return lower(w.substr(0, 5)) == "http/"; };
  if (out.words.size() <= 1) out.verdict = first_bytes_status::other;
  else if (out.words.size() == 2) out.verdict = out.words[0] == "GET" ? first_bytes_status::http : first_bytes_status::other;
  else if (out.words.size() == 3 && version_like(out.words[2])) out.verdict = first_bytes_status::http;
  else if (version_like(out.words.back())) out.verdict = first_bytes_status::malformed;
  else out.verdict = first_bytes_status::other;
  return out;
}

// Reads the field lines of a head after its request line; fills `out`.
void scan_fields(std::string_view data, std::size_t at, std::size_t max_head_bytes, request_head& out) {
  int hosts = 0;
  std::optional<std::uint64_t> content_length;
  std::string codings;
  std::string host_field;
  while (true) {
    const auto lf = data.find('\n', at);
    if (lf == std::string_view::npos) {
      out.status = data.size() > max_head_bytes ? first_bytes_status::malformed : first_bytes_status::incomplete;
      if (out.status == first_bytes_status::malformed) out.problem = "request head larger than the limit";
      return;
    }
    if (lf + 1 > max_head_bytes) {
      out.status = first_bytes_status::malformed;
      out.problem = "request head larger than the limit";
      return;
    }
    std::string_view line = data.substr(at, lf - at);
    at = lf + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) break;
    const auto bad = [&](std::string problem) {
      out.status = first_bytes_status::malformed;
      out.problem = std::move(problem);
    };
    if (line.find('\r') != std::string_view::npos || line.find('\0') != std::string_view::npos) {
      return bad("a control character in a field line");
    }
    if (line.front() == ' ' || line.front() == '\t') return bad("obsolete line folding");
    const auto colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) return bad("a field line without a name");
    const std::string_view name = line.substr(0, colon);
    if (!std::all_of(name.begin(), name.end(), is_tchar)) return bad("whitespace or a separator in a field name");
    const std::string key = lower(name);
    const std::string_view value = trim(line.substr(colon + 1));
    if (key == "host") {
      if (++hosts > 1) return bad("more than one Host field");
      host_field = std::string(without_port(value));
    } else if (key == "content-length") {
      if (value.empty() || value.size() > 18 || !std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        return bad("an unreadable Content-Length");
      }
      const std::uint64_t n = std::stoull(std::string(value));
      if (content_length && *content_length != n) return bad("conflicting Content-Length fields");
      content_length = n;
    } else if (key == "transfer-encoding") {
      codings += (codings.empty() ? "" : ",") + lower(value);
    } else if (key == "upgrade") {
      out.upgrade = true;
    }
  }
  out.length = at;
  if (!codings.empty()) {
    if (content_length) return (void)(out.status = first_bytes_status::malformed,
                                      out.problem = "both Transfer-Encoding and Content-Length");
    const auto last = trim(std::string_view(codings).substr(codings.rfind(',') == std::string::npos ? 0 : codings.rfind(',') + 1));
    if (last != "chunked") return (void)(out.status = first_bytes_status::malformed,
                                         out.problem = "a Transfer-Encoding whose last coding is not chunked");
    out.chunked = true;
  }
  out.content_length = content_length.value_or(0);
  if (!out.absolute_form) out.host = host_field;
  out.status = first_bytes_status::http;
}

}  // namespace

client_hello_scan scan_client_hello(std::string_view data) {
  std::string handshake;  // the handshake records' fragments, joined
  std::size_t at = 0;
  while (true) {
    if (handshake.size() >= 4) {
      if (static_cast<std::uint8_t>(handshake[0]) != client_hello) {
        return tls_malformed("the first TLS handshake message is not a ClientHello");
      }
      const std::size_t body_length = (static_cast<std::size_t>(static_cast<unsigned char>(handshake[1])) << 16) |
                                      (static_cast<std::size_t>(static_cast<unsigned char>(handshake[2])) << 8) |
                                      static_cast<unsigned char>(handshake[3]);
      if (body_length + 4 > max_client_hello_bytes) {
        return tls_malformed("a ClientHello of " + std::to_string(body_length + 4) + " bytes (at most " +
                             std::to_string(max_client_hello_bytes) + " are read)");
      }
      if (handshake.size() >= 4 + body_length) {
        client_hello_scan out;
        bool ok = false;
        out.name = client_hello_name(std::string_view(handshake).substr(4, body_length), ok);
        if (!ok) return tls_malformed("a ClientHello the broker cannot parse");
        out.status = first_bytes_status::tls;
        return out;
      }
    }
    if (data.size() - at < 5) return {};
    const auto type = static_cast<std::uint8_t>(data[at]);
    const auto major = static_cast<std::uint8_t>(data[at + 1]);
    const std::size_t length = (static_cast<std::size_t>(static_cast<unsigned char>(data[at + 3])) << 8) |
                               static_cast<unsigned char>(data[at + 4]);
    if (type != handshake_record) {
      return tls_malformed("a TLS record of type " + std::to_string(type) + " before the ClientHello was complete");
    }
    if (major != 3) return tls_malformed("a TLS record of version " + std::to_string(major) + ".x");
    if (length > max_record_bytes) return tls_malformed("a TLS record of more than 16384 bytes");
    if (at + 5 + length > max_client_hello_bytes) {
      return tls_malformed("no complete ClientHello in the first " + std::to_string(max_client_hello_bytes) + " bytes");
    }
    if (data.size() - at - 5 < length) return {};
    handshake.append(data.substr(at + 5, length));  // an empty record adds nothing (RFC 8446 §5.1)
    at += 5 + length;
  }
}

request_head scan_request_head(std::string_view data, std::size_t max_head_bytes) {
  std::size_t at = 0;
  while (at < data.size() && (data[at] == '\n' || data[at] == '\r')) {  // empty lines before the request line
    if (data[at] == '\r' && at + 1 < data.size() && data[at + 1] != '\n') break;
    ++at;
  }
  if (at > max_head_bytes) return head_status(first_bytes_status::malformed, "request head larger than the limit");
  if (at == data.size()) return {};
  const auto lf = data.find('\n', at);
  const bool complete = lf != std::string_view::npos;
  std::string_view line = data.substr(at, complete ? lf - at : std::string_view::npos);
  if (complete && !line.empty() && line.back() == '\r') line.remove_suffix(1);
  const auto words = scan_request_line(line, complete);
  if (words.verdict == first_bytes_status::other) return head_status(first_bytes_status::other);
  if (words.verdict == first_bytes_status::malformed) {
    return head_status(first_bytes_status::malformed, "a request line a server may read differently");
  }
  if (!complete) {
    if (data.size() > max_head_bytes) return head_status(first_bytes_status::malformed, "request head larger than the limit");
    return {};
  }
  request_head out;
  out.method = std::string(words.words[0]);
  if (const auto host = absolute_form_host(words.words[1])) {
    if (host->empty()) return head_status(first_bytes_status::malformed, "an absolute-form target without a host");
    out.host = std::string(*host);
    out.absolute_form = true;
  } else if (out.method == "CONNECT") {
    out.host = std::string(without_port(words.words[1]));  // authority form names the destination
    out.absolute_form = true;
  }
  if (words.words.size() == 2) {  // HTTP/0.9 (a GET line alone): no fields, no body
    out.length = lf + 1;
    out.status = first_bytes_status::http;
    return out;
  }
  if (words.words[2] != "HTTP/1.1" && words.words[2] != "HTTP/1.0") {
    return head_status(first_bytes_status::malformed, "HTTP version " + std::string(words.words[2]));
  }
  scan_fields(data, lf + 1, max_head_bytes, out);
  return out;
}

bool worth_waiting_for(std::string_view data) {
  // The methods most requests use (RFC 9110 §9, RFC 5789, WebDAV's RFC 4918).
  static constexpr std::string_view known_methods[] = {
      "GET",   "HEAD",  "POST",  "PUT",      "DELETE", "OPTIONS", "TRACE",  "PATCH",  "PROPFIND",
      "MKCOL", "COPY",  "MOVE",  "PROPPATCH", "LOCK",  "UNLOCK",  "REPORT", "CONNECT"};
  std::size_t at = 0;
  while (at < data.size() && (data[at] == '\r' || data[at] == '\n')) ++at;
  data.remove_prefix(at);
  if (data.empty()) return true;
  const auto first = static_cast<std::uint8_t>(data[0]);
  if (first >= 0x80 || (first >= change_cipher_spec_record && first <= application_data_record)) return true;
  for (const auto method : known_methods) {
    const std::size_t n = std::min(data.size(), method.size());
    if (data.substr(0, n) == method.substr(0, n)) return true;
  }
  std::size_t i = 0;
  while (i < data.size() && is_tchar(data[i])) ++i;
  return i > 0 && i < data.size() && is_line_space(data[i]);
}

first_bytes_result classify_first_bytes(std::string_view data, std::size_t max_head_bytes) {
  first_bytes_result out;
  if (data.empty()) return out;
  const auto first = static_cast<std::uint8_t>(data[0]);
  if (first == handshake_record) {
    auto hello = scan_client_hello(data);
    out.status = hello.status;
    out.name = std::move(hello.name);
    out.problem = std::move(hello.problem);
    return out;
  }
  if (first == change_cipher_spec_record || first == alert_record || first == application_data_record) {
    if (data.size() < 2) return out;
    if (static_cast<std::uint8_t>(data[1]) == 0x03) {
      out.status = first_bytes_status::malformed;
      out.problem = "a TLS record of type " + std::to_string(first) + " before a ClientHello";
      return out;
    }
  }
  if ((first & 0x80) != 0) {
    // An SSL 2.0-format ClientHello (a two-byte length with the top bit set,
    // then message type 1), which some servers still accept for TLS 1.0-1.2:
    // it has no extensions, so no server name.
    if (data.size() < 3) return out;
    out.status = data[2] == 0x01 ? first_bytes_status::tls : first_bytes_status::other;
    return out;
  }
  auto head = scan_request_head(data, max_head_bytes);
  out.status = head.status;
  out.name = std::move(head.host);
  out.problem = std::move(head.problem);
  return out;
}

}  // namespace cordon::broker
