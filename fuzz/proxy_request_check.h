// fuzz/proxy_request_check.h — the properties cordon_fuzz_proxy_request
// checks on one input: the network broker's pure parsers (src/broker/
// http_request.h, socks5.h) and its destination decision (decision.h).
//
// Input: any bytes, read three ways: as an HTTP request head (limit 4096
// bytes), as a SOCKS5 greeting followed by a request, and as a destination
// host for decide_name().
// Properties:
//  - a complete HTTP head ends in CRLFCRLF within the limit, parses the
//    same without what follows it, and every shorter prefix of it is
//    incomplete (the early refusal of garbage never refuses a good head);
//    a forward request's rewritten head is well-formed, in origin form, ends
//    in "Connection: close" and carries no Proxy-* field;
//  - a refusal says why, in printable ASCII;
//  - a complete SOCKS5 message fits in the input, every shorter prefix is
//    incomplete, an IP address type yields a literal and the port is 0..65535;
//  - decide_name() yields a normalized host or, for an invalid destination,
//    a printable one with a reason; brackets do not change the class of an
//    IPv6 literal; choose_addresses() gives a reason exactly when it keeps
//    no address.
#pragma once

#include <arpa/inet.h>

#include <algorithm>
#include <string>
#include <string_view>

#include "broker/broker.h"
#include "broker/decision.h"
#include "broker/http_request.h"
#include "broker/socks5.h"

namespace cordon::fuzz {

inline bool printable_ascii(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
}

inline std::string check_http(std::string_view data) {
  using namespace cordon::broker;
  constexpr std::size_t limit = 4096;
  const auto r = parse_http_request(data, limit);
  if (r.status == http_parse_status::bad_request || r.status == http_parse_status::too_large) {
    if (r.error.empty() || !printable_ascii(r.error)) return "http: a refusal without a printable reason";
    return {};
  }
  if (r.status != http_parse_status::complete) return {};
  const std::size_t n = r.head_length;
  if (n > limit || n > data.size() || data.substr(0, n).size() < 4 || data.substr(n - 4, 4) != "\r\n\r\n") {
    return "http: complete head has a wrong length";
  }
  const auto alone = parse_http_request(data.substr(0, n), limit);
  if (alone.status != http_parse_status::complete || alone.head_length != n) {
    return "http: the head parses differently without what follows it";
  }
  // Every shorter prefix must be incomplete (all of them for short heads).
  const std::size_t step = n <= 512 ? 1 : n / 256;
  for (std::size_t k = 0; k < n; k += step) {
    if (parse_http_request(data.substr(0, k), limit).status != http_parse_status::incomplete) {
      return "http: a prefix of a complete head is refused";
    }
  }
  if (r.request.kind == http_kind::forward) {
    if (r.request.path.empty() || r.request.path.front() != '/') return "http: forward path not in origin form";
    const std::string head = forward_request_head(r.request);
    const auto rewritten = parse_http_request(head, head.size() + 1);
    if (rewritten.status != http_parse_status::bad_request)
      return "http: the origin-form head parsed as a proxy request";
    const std::string end = "Connection: close\r\n\r\n";
    if (head.size() < end.size() || head.compare(head.size() - end.size(), end.size(), end) != 0) {
      return "http: the rewritten head does not end in Connection: close";
    }
    std::string lower = head;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c); });
    if (lower.find("\r\nproxy-") != std::string::npos) return "http: a Proxy-* field is forwarded";
    if (head.find("\r\n\r\n") != head.size() - 4) return "http: the rewritten head ends early";
  }
  return {};
}

inline std::string check_socks(std::string_view data) {
  using namespace cordon::broker;
  const auto g = parse_socks5_greeting(data);
  if (g.status == socks5_status::error) return printable_ascii(g.error) && !g.error.empty() ? "" : "socks: bad reason";
  if (g.status != socks5_status::complete) return {};
  if (g.length > data.size()) return "socks: greeting longer than the input";
  for (std::size_t k = 0; k < g.length; ++k) {
    if (parse_socks5_greeting(data.substr(0, k)).status != socks5_status::incomplete) return "socks: greeting prefix";
  }
  const std::string_view rest = data.substr(g.length);
  const auto r = parse_socks5_request(rest);
  if (r.status == socks5_status::error && (r.error.empty() || !printable_ascii(r.error))) return "socks: bad reason";
  if (r.status != socks5_status::complete) return {};
  if (r.length > rest.size()) return "socks: request longer than the input";
  for (std::size_t k = 0; k < r.length; ++k) {
    if (parse_socks5_request(rest.substr(0, k)).status != socks5_status::incomplete) return "socks: request prefix";
  }
  if (r.request.port < 0 || r.request.port > 65535) return "socks: port out of range";
  if (r.request.address_type != socks5_address_type::domain) {
    unsigned char raw[16];
    const int family = r.request.address_type == socks5_address_type::ipv4 ? AF_INET : AF_INET6;
    if (inet_pton(family, r.request.host.c_str(), raw) != 1) return "socks: an IP address type without a literal";
  }
  const std::string reply = socks5_reply(socks5_reply_code::succeeded, r.request.host, r.request.port);
  if (reply.size() != 10 && reply.size() != 22) return "socks: reply of a wrong size";
  return {};
}

inline std::string check_decision(std::string_view data) {
  using namespace cordon::broker;
  network_policy policy;
  policy.mode = network_mode::filtered;
  network_rule name;
  name.host = "**.example.com";
  name.action = rule_action::allow;
  network_rule literal;
  literal.host = "127.0.0.1";
  literal.action = rule_action::allow;
  policy.rules = {name, literal};
  const auto d = decide_name(policy, data, 443);
  if (!printable_ascii(d.host) || !printable_ascii(d.reason)) return "decision: unprintable host or reason";
  if (!d.decision) return d.reason.rfind("invalid destination: ", 0) == 0 ? "" : "decision: invalid without a reason";
  auto again = normalize_destination_host(d.host);
  if (!again || *again != d.host) return "decision: host not normalized";
  if (d.ip_literal) {
    if (d.host.find(':') != std::string::npos &&
        is_non_public_address(d.host) != is_non_public_address("[" + d.host + "]")) {
      return "decision: brackets change the address class";
    }
    const auto choice = choose_addresses(policy, d.host, 443, {d.host});
    if (choice.usable.empty() == choice.reason.empty()) return "decision: address choice without a reason";
  }
  return {};
}

inline std::string check_proxy_request_input(std::string_view data) {
  if (auto p = check_http(data); !p.empty()) return p;
  if (auto p = check_socks(data); !p.empty()) return p;
  return check_decision(data);
}

}  // namespace cordon::fuzz
