// src/broker/http_request.cpp — see http_request.h.
#include "broker/http_request.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cordon::broker {
namespace {

bool is_tchar(char c) {  // RFC 9110 §5.6.2 token characters
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool is_token(std::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), is_tchar); }

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// A byte that never appears in a request head outside a line ending: the
// controls other than HTAB, and DEL. Bytes above 0x7f (obs-text) may appear
// in field values; a host containing them is refused by the rule matcher.
bool is_forbidden_byte(char c) {
  const auto u = static_cast<unsigned char>(c);
  return (u < 0x20 && c != '\t' && c != '\r' && c != '\n') || u == 0x7f;
}

http_parse_result fail(http_parse_status status, std::string error, http_request request = {}) {
  http_parse_result r;
  r.status = status;
  r.error = std::move(error);
  r.request = std::move(request);
  return r;
}

// "host:port" of an authority, the host possibly a bracketed IPv6 literal.
// A missing port is `default_port` (0: required).
std::optional<std::string> split_authority(std::string_view authority, int default_port, std::string& host, int& port) {
  std::string_view port_text;
  if (!authority.empty() && authority.front() == '[') {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) return "unterminated '[' in the authority";
    host = std::string(authority.substr(0, close + 1));
    const auto rest = authority.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return "unexpected characters after ']' in the authority";
      port_text = rest.substr(1);
    }
  } else {
    const auto colon = authority.rfind(':');
    host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) {
      if (host.find(':') != std::string::npos) return "an IPv6 address in an authority must be in brackets";
      port_text = authority.substr(colon + 1);
    }
  }
  if (port_text.empty()) {
    // RFC 3986 §3.2.3: an empty port is the scheme's default.
    if (default_port == 0) return "the authority has no port";
    port = default_port;
    return std::nullopt;
  }
  if (port_text.size() > 5 ||
      !std::all_of(port_text.begin(), port_text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return "the port is not a number of at most 5 digits";
  }
  port = std::stoi(std::string(port_text));
  return std::nullopt;
}

// Request line (RFC 9112 §3): method SP request-target SP HTTP-version.
std::optional<std::string> parse_request_line(std::string_view line, http_request& req) {
  const auto sp1 = line.find(' ');
  const auto sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) {
    return "the request line is not \"METHOD target HTTP/1.x\"";
  }
  const std::string_view method = line.substr(0, sp1);
  const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = line.substr(sp2 + 1);
  if (!is_token(method)) return "the method is not a token";
  if (version != "HTTP/1.1" && version != "HTTP/1.0") return "the version is not HTTP/1.0 or HTTP/1.1";
  // From here on the request is HTTP: `method` and `kind` are kept on errors.
  req.method = std::string(method);
  req.version = std::string(version);
  req.kind = method == "CONNECT" ? http_kind::connect : http_kind::forward;
  if (target.empty()) return "empty request target";

  if (req.kind == http_kind::connect) {
    req.authority = std::string(target);
    return split_authority(target, 0, req.host, req.port);
  }
  if (target.front() == '/' || target == "*") {
    return "origin-form request sent to a proxy: use an absolute http:// URI or CONNECT";
  }
  const auto scheme_end = target.find("://");
  if (scheme_end == std::string_view::npos) return "the request target is not an absolute URI";
  if (!iequals(target.substr(0, scheme_end), "http")) {
    return "only http:// URIs are forwarded (use CONNECT for https and other protocols)";
  }
  const std::string_view rest = target.substr(scheme_end + 3);
  const auto authority_end = rest.find_first_of("/?#");
  const std::string_view authority = rest.substr(0, authority_end);
  // RFC 9110 §4.2.4: userinfo in an http URI is deprecated and a known way to
  // make a URI look like another host's.
  if (authority.find('@') != std::string_view::npos) return "userinfo in the URI is not accepted";
  req.authority = std::string(authority);
  if (auto problem = split_authority(authority, 80, req.host, req.port)) return problem;
  std::string_view path = authority_end == std::string_view::npos ? std::string_view() : rest.substr(authority_end);
  path = path.substr(0, path.find('#'));  // a fragment is never sent (RFC 9110 §4.2.5)
  req.path = (path.empty() || path.front() != '/') ? "/" + std::string(path) : std::string(path);
  return std::nullopt;
}

// Field line (RFC 9112 §5): name ":" OWS value OWS; no whitespace before the
// colon, no obsolete line folding (both are refused with 400, §5.1, §5.2).
std::optional<std::string> parse_header_line(std::string_view line, http_request& req) {
  if (line.front() == ' ' || line.front() == '\t') return "obsolete line folding in the header";
  const auto colon = line.find(':');
  if (colon == std::string_view::npos) return "a header line without ':'";
  const auto name = line.substr(0, colon);
  if (!is_token(name)) return "a header name that is not a token";
  req.headers.push_back({std::string(name), std::string(trim(line.substr(colon + 1)))});
  return std::nullopt;
}

}  // namespace

http_parse_result parse_http_request(std::string_view data, std::size_t max_head_bytes) {
  const auto end = data.find("\r\n\r\n");
  const std::size_t head_length = end == std::string_view::npos ? 0 : end + 4;
  const std::string_view head = end == std::string_view::npos ? data : data.substr(0, end + 2);

  // Check what has arrived so far, line by line, so garbage is refused early.
  http_request req;
  std::size_t pos = 0;
  bool first = true;
  for (;;) {
    const auto eol = head.find("\r\n", pos);
    const std::string_view line = head.substr(pos, eol == std::string_view::npos ? std::string_view::npos : eol - pos);
    for (char c : line) {
      if (is_forbidden_byte(c)) return fail(http_parse_status::bad_request, "a control character in the request head");
    }
    const auto stray = line.find_first_of("\r\n");
    // A lone CR at the very end may be the first half of a CRLF still to come.
    if (stray != std::string_view::npos &&
        !(eol == std::string_view::npos && stray + 1 == line.size() && line[stray] == '\r')) {
      return fail(http_parse_status::bad_request, "a bare CR or LF in the request head");
    }
    if (eol == std::string_view::npos) break;  // an incomplete line: checked again when complete
    if (first) {
      if (line.empty()) return fail(http_parse_status::bad_request, "an empty line before the request line");
      if (auto problem = parse_request_line(line, req)) {
        return fail(http_parse_status::bad_request, *problem, std::move(req));
      }
      first = false;
    } else if (auto problem = parse_header_line(line, req)) {
      return fail(http_parse_status::bad_request, *problem, std::move(req));
    }
    pos = eol + 2;
  }
  // Incomplete and already at the limit: it can only grow.
  if (head_length > max_head_bytes || (end == std::string_view::npos && data.size() >= max_head_bytes)) {
    return fail(http_parse_status::too_large, "the request head is too large", std::move(req));
  }
  if (end == std::string_view::npos) return {};
  http_parse_result r;
  r.status = http_parse_status::complete;
  r.request = std::move(req);
  r.head_length = head_length;
  return r;
}

std::string forward_request_head(const http_request& request) {
  // Fields named by Connection are hop-by-hop too (RFC 9110 §7.6.1).
  std::vector<std::string> hop_by_hop = {"connection", "keep-alive", "host"};
  for (const auto& h : request.headers) {
    if (!iequals(h.name, "connection")) continue;
    std::string_view rest = h.value;
    while (!rest.empty()) {
      const auto comma = rest.find(',');
      const auto item = trim(rest.substr(0, comma));
      std::string lower(item);
      std::transform(lower.begin(), lower.end(), lower.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      if (!lower.empty()) hop_by_hop.push_back(lower);
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  }
  std::string out = request.method + " " + request.path + " " + request.version + "\r\n";
  out += "Host: " + request.authority + "\r\n";
  for (const auto& h : request.headers) {
    // Proxy-* fields (Proxy-Authorization, Proxy-Connection) are for the
    // proxy: the credentials in them must not reach the origin.
    const bool drop = iequals(h.name.substr(0, std::min<std::size_t>(h.name.size(), 6)), "proxy-") ||
                      std::any_of(hop_by_hop.begin(), hop_by_hop.end(),
                                  [&](const std::string& name) { return iequals(h.name, name); });
    if (!drop) out += h.name + ": " + h.value + "\r\n";
  }
  out += "Connection: close\r\n\r\n";
  return out;
}

std::string_view http_reason_phrase(int status) {
  switch (status) {
    case 400:
      return "Bad Request";
    case 403:
      return "Forbidden";
    case 408:
      return "Request Timeout";
    case 431:
      return "Request Header Fields Too Large";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    default:
      return "Error";
  }
}

std::string http_response(int status, std::string_view body, const std::vector<http_header>& extra) {
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + std::string(http_reason_phrase(status)) + "\r\n";
  out += "Content-Type: text/plain; charset=utf-8\r\n";
  out += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  out += "Connection: close\r\n";
  for (const auto& h : extra) out += h.name + ": " + h.value + "\r\n";
  out += "\r\n";
  out += body;
  return out;
}

}  // namespace cordon::broker
