// src/broker/http_exchange.cpp — HTTP/1.1 messages on a terminated
// connection (http_exchange.h).
#include "broker/http_exchange.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace cordon::broker {
namespace {

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool is_token(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return std::isalnum(u) || std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
  });
}

// Splits `head` into its first line and fields; false on a malformed field.
bool split_head(std::string_view head, std::string& first, std::vector<http_header>& headers, std::string& error) {
  std::size_t at = head.find("\r\n");
  if (at == std::string_view::npos) {
    error = "no line end";
    return false;
  }
  first = std::string(head.substr(0, at));
  at += 2;
  while (at < head.size()) {
    const std::size_t end = head.find("\r\n", at);
    if (end == std::string_view::npos) {
      error = "a line without CRLF";
      return false;
    }
    const std::string_view line = head.substr(at, end - at);
    at = end + 2;
    if (line.empty()) break;
    if (line.front() == ' ' || line.front() == '\t') {
      error = "obsolete line folding";
      return false;
    }
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos || !is_token(line.substr(0, colon))) {
      error = "a malformed header field";
      return false;
    }
    const std::string_view value = trim(line.substr(colon + 1));
    if (std::any_of(value.begin(), value.end(), [](char c) {
          const auto u = static_cast<unsigned char>(c);
          return (u < 0x20 && c != '\t') || u == 0x7f;
        })) {
      error = "a control character in a header field";
      return false;
    }
    headers.push_back({std::string(line.substr(0, colon)), std::string(value)});
  }
  return true;
}

// Content-Length / Transfer-Encoding -> framing; false when they conflict.
bool read_framing(http_message_head& m, bool is_request) {
  std::optional<std::uint64_t> length;
  bool chunked = false;
  bool coded = false;
  for (const auto& h : m.headers) {
    if (iequals(h.name, "Content-Length")) {
      std::uint64_t n = 0;
      const auto v = h.value;
      const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
      if (ec != std::errc() || end != v.data() + v.size() || v.empty() || (length && *length != n)) {
        m.error = "an invalid or conflicting Content-Length";
        return false;
      }
      length = n;
    } else if (iequals(h.name, "Transfer-Encoding")) {
      coded = true;
      chunked = lower(trim(h.value)) == "chunked";
      if (!chunked) {
        m.error = "a transfer coding other than chunked";
        return false;
      }
    } else if (iequals(h.name, "Connection")) {
      if (lower(h.value).find("close") != std::string::npos) m.close = true;
    }
  }
  if (coded && length) {
    m.error = "both Content-Length and Transfer-Encoding";
    return false;
  }
  if (m.version == "HTTP/1.0" &&
      !(header_value(m.headers, "Connection") &&
        lower(*header_value(m.headers, "Connection")).find("keep-alive") != std::string::npos)) {
    m.close = true;
  }
  if (chunked) {
    m.framing = body_framing::chunked;
  } else if (length) {
    m.framing = *length == 0 ? body_framing::none : body_framing::length;
    m.length = *length;
  } else {
    m.framing = is_request ? body_framing::none : body_framing::until_close;
  }
  return true;
}

bool path_has_escape(std::string_view path) {
  const std::string l = lower(path);
  if (l.find("%2e") != std::string::npos || l.find("%2f") != std::string::npos || l.find("%5c") != std::string::npos ||
      l.find('\\') != std::string::npos)
    return true;
  std::size_t at = 0;
  while (at <= path.size()) {
    const std::size_t end = std::min(path.find('/', at), path.size());
    const std::string_view segment = path.substr(at, end - at);
    if (segment == "." || segment == "..") return true;
    at = end + 1;
  }
  return false;
}

// How many fields are named `name` (case-insensitive).
std::size_t header_count(const std::vector<http_header>& headers, std::string_view name) {
  return static_cast<std::size_t>(
      std::count_if(headers.begin(), headers.end(), [&](const http_header& h) { return iequals(h.name, name); }));
}

// Is `token` one of the comma-separated tokens of `list` (any case)?
bool has_token(std::string_view list, std::string_view token) {
  while (!list.empty()) {
    const std::size_t comma = std::min(list.find(','), list.size());
    if (iequals(trim(list.substr(0, comma)), token)) return true;
    list.remove_prefix(std::min(comma + 1, list.size()));
  }
  return false;
}

// The Upgrade field of `m` when it is exactly one field holding the one
// token `websocket`; otherwise how it falls short.
std::string websocket_field_problem(const http_message_head& m) {
  const auto upgrade = header_value(m.headers, "Upgrade");
  if (!upgrade) return "no Upgrade field";
  if (header_count(m.headers, "Upgrade") != 1) return "more than one Upgrade field";
  if (!iequals(trim(*upgrade), "websocket")) return "protocol upgrade to " + std::string(trim(*upgrade));
  return {};
}

}  // namespace

std::optional<std::string> header_value(const std::vector<http_header>& headers, std::string_view name) {
  for (const auto& h : headers)
    if (iequals(h.name, name)) return h.value;
  return std::nullopt;
}

http_message_head parse_request_head(std::string_view head) {
  http_message_head m;
  std::string first;
  if (!split_head(head, first, m.headers, m.error)) return m;
  const std::size_t s1 = first.find(' ');
  const std::size_t s2 = s1 == std::string::npos ? s1 : first.find(' ', s1 + 1);
  if (s2 == std::string::npos || first.find(' ', s2 + 1) != std::string::npos) {
    m.error = "a malformed request line";
    return m;
  }
  m.method = first.substr(0, s1);
  m.target = first.substr(s1 + 1, s2 - s1 - 1);
  m.version = first.substr(s2 + 1);
  if (!is_token(m.method)) {
    m.error = "a malformed method";
    return m;
  }
  if (m.version != "HTTP/1.1" && m.version != "HTTP/1.0") {
    m.error = "HTTP version " + m.version + " (only HTTP/1.0 and HTTP/1.1)";
    return m;
  }
  if (m.target.empty() || m.target[0] != '/' ||
      std::any_of(m.target.begin(), m.target.end(), [](char c) { return static_cast<unsigned char>(c) <= 0x20 || c == 0x7f; })) {
    m.error = "a request target that is not in origin form";
    return m;
  }
  m.path = m.target.substr(0, m.target.find_first_of("?#"));
  if (!read_framing(m, true)) return m;
  m.ok = true;
  return m;
}

http_message_head parse_response_head(std::string_view head, std::string_view request_method) {
  http_message_head m;
  std::string first;
  if (!split_head(head, first, m.headers, m.error)) return m;
  // "HTTP/1.1 200 OK"
  if (first.size() < 12 || first.compare(0, 5, "HTTP/") != 0 || first[8] != ' ') {
    m.error = "a malformed status line";
    return m;
  }
  m.version = first.substr(0, 8);
  const auto [end, ec] = std::from_chars(first.data() + 9, first.data() + 12, m.status);
  if (ec != std::errc() || end != first.data() + 12 || m.status < 100 || m.status > 999) {
    m.error = "a malformed status code";
    return m;
  }
  if (!read_framing(m, false)) return m;
  // RFC 9112 §6.3: no body for HEAD, 1xx, 204, 304.
  if (request_method == "HEAD" || m.status < 200 || m.status == 204 || m.status == 304) m.framing = body_framing::none;
  if (m.framing == body_framing::until_close) m.close = true;
  m.ok = true;
  return m;
}

std::string judge_request(const network_rule& rule, const std::string& host, int port,
                          const http_message_head& request) {
  if (request.method == "TRACE" || request.method == "TRACK") return request.method + " is never forwarded";
  if (request.method == "CONNECT") return "CONNECT inside a terminated connection";
  if (header_value(request.headers, "Upgrade")) {
    if (!rule.websocket) return "protocol upgrade (Upgrade field) on a terminated connection";
    if (std::string why = websocket_upgrade_problem(request); !why.empty()) return why;
  }
  if (!rule.methods.empty() && std::find(rule.methods.begin(), rule.methods.end(), request.method) == rule.methods.end())
    return "method " + request.method + " is not allowed by the rule";
  if (!rule.paths.empty()) {
    if (path_has_escape(request.path)) return "path with dot segments or encoded separators";
    const bool under = std::any_of(rule.paths.begin(), rule.paths.end(),
                                   [&](const std::string& prefix) { return request.path.starts_with(prefix); });
    if (!under) return "path is outside the rule's prefixes";
  }
  if (auto named = header_value(request.headers, "Host")) {
    std::string value = lower(*named);
    const std::string bare = host.find(':') != std::string::npos ? "[" + host + "]" : host;
    if (value != bare && value != bare + ":" + std::to_string(port)) return "Host field names another host";
  }
  return {};
}

std::string websocket_upgrade_problem(const http_message_head& request) {
  if (std::string why = websocket_field_problem(request); !why.empty()) {
    return why + ": the rule allows only WebSocket upgrades";
  }
  if (request.version != "HTTP/1.1") return "a WebSocket upgrade in " + request.version + " (only HTTP/1.1)";
  if (request.method != "GET") return "a WebSocket upgrade with method " + request.method + " (only GET)";
  const auto connection = header_value(request.headers, "Connection");
  if (!connection || !has_token(*connection, "upgrade")) return "a WebSocket upgrade without Connection: upgrade";
  if (request.framing != body_framing::none) return "a WebSocket upgrade with a body";
  return {};
}

std::string judge_switch(const http_message_head& request, const http_message_head& response) {
  if (!header_value(request.headers, "Upgrade")) return "101 Switching Protocols to a request that asked for no upgrade";
  if (std::string why = websocket_field_problem(response); !why.empty()) {
    return "101 Switching Protocols with " + why + " (the request asked for websocket)";
  }
  return {};
}

std::string upstream_request_head(const http_message_head& request, const std::vector<injected_header>& inject) {
  std::string out = request.method + " " + request.target + " " + request.version + "\r\n";
  for (const auto& h : request.headers) {
    if (lower(h.name).starts_with("proxy-")) continue;
    if (std::any_of(inject.begin(), inject.end(), [&](const injected_header& i) { return iequals(i.name, h.name); }))
      continue;
    out += h.name + ": " + h.value + "\r\n";
  }
  for (const auto& i : inject) out += i.name + ": " + i.value + "\r\n";
  return out + "\r\n";
}

}  // namespace cordon::broker
