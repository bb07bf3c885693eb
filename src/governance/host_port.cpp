// host_port.cpp — destinations and host patterns, through the network rule matcher.
#include "governance/host_port.h"

#include <charconv>

#include "cordon/host_rules.h"

namespace cordon::governance::detail {
namespace {

result<int> parse_port(std::string_view digits, std::string_view whole) {
  int port = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || port < 1 || port > 65535) {
    return make_error(error_code::invalid_destination, "bad port in \"" + std::string(whole) + "\"");
  }
  return port;
}

}  // namespace

result<host_port> split_host_port(std::string_view text) {
  host_port out;
  if (!text.empty() && text.front() == '[') {
    auto close = text.find(']');
    if (close == std::string_view::npos) {
      return make_error(error_code::invalid_destination, "unclosed \"[\" in \"" + std::string(text) + "\"");
    }
    out.host = std::string(text.substr(1, close - 1));
    auto rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return make_error(error_code::invalid_destination, "bad destination \"" + std::string(text) + "\"");
      auto port = parse_port(rest.substr(1), text);
      if (!port) return std::move(port).error_value();
      out.port = *port;
    }
  } else if (auto colon = text.find(':'); colon != std::string_view::npos && text.find(':', colon + 1) == std::string_view::npos) {
    out.host = std::string(text.substr(0, colon));
    auto port = parse_port(text.substr(colon + 1), text);
    if (!port) return std::move(port).error_value();
    out.port = *port;
  } else {
    out.host = std::string(text);  // a name, or a bare IPv6 literal
  }
  if (out.host.empty()) return make_error(error_code::invalid_destination, "empty host in \"" + std::string(text) + "\"");
  return out;
}

result<host_port> parse_destination(std::string_view text) {
  auto split = split_host_port(text);
  if (!split) return split;
  auto normal = normalize_destination_host(split->host);
  if (!normal) return std::move(normal).error_value();
  split->host = *normal;
  return split;
}

std::string format_destination(const host_port& destination) {
  bool v6 = destination.host.find(':') != std::string::npos;
  if (!destination.port) return destination.host;
  return (v6 ? "[" + destination.host + "]" : destination.host) + ":" + std::to_string(*destination.port);
}

result<bool> destination_matches(const host_port& pattern, const host_port& destination) {
  if (pattern.port && pattern.port != destination.port) return false;
  return host_pattern_matches(pattern.host, destination.host);
}

}  // namespace cordon::governance::detail
