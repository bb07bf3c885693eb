// src/broker/dns_message.cpp — DNS message parsing (dns_message.h).
#include "broker/dns_message.h"

#include <arpa/inet.h>

namespace cordon::broker {
namespace {

std::uint16_t u16(std::string_view m, std::size_t at) {
  return static_cast<std::uint16_t>((static_cast<unsigned char>(m[at]) << 8) | static_cast<unsigned char>(m[at + 1]));
}

constexpr std::size_t header_bytes = 12;

// Reads a (possibly compressed, RFC 1035 §4.1.4) name at `at`; advances `at`
// past it in the message. False when malformed.
bool read_name(std::string_view m, std::size_t& at, std::string& name) {
  name.clear();
  std::size_t pos = at;
  bool jumped = false;
  for (int hops = 0; hops < 64; ++hops) {
    if (pos >= m.size()) return false;
    const auto length = static_cast<unsigned char>(m[pos]);
    if ((length & 0xc0) == 0xc0) {
      if (pos + 1 >= m.size()) return false;
      if (!jumped) at = pos + 2;
      jumped = true;
      pos = u16(m, pos) & 0x3fff;
      continue;
    }
    if ((length & 0xc0) != 0) return false;
    if (length == 0) {
      if (!jumped) at = pos + 1;
      return name.size() <= 253;
    }
    if (pos + 1 + length > m.size()) return false;
    if (!name.empty()) name += '.';
    for (std::size_t i = 0; i < length; ++i) {
      char c = m[pos + 1 + i];
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      name += c;
    }
    pos += 1 + length;
  }
  return false;
}

}  // namespace

std::uint16_t dns_message_id(std::string_view message) { return message.size() >= 2 ? u16(message, 0) : 0; }

dns_query_parse parse_dns_query(std::string_view m) {
  dns_query_parse out;
  if (m.size() < header_bytes) return out.error = "shorter than a DNS header", out;
  const std::uint16_t flags = u16(m, 2);
  if ((flags & 0x8000) != 0) return out.error = "not a query", out;
  if (((flags >> 11) & 0xf) != 0) return out.error = "not a standard query", out;
  if (u16(m, 4) != 1) return out.error = "not exactly one question", out;
  std::size_t at = header_bytes;
  if (!read_name(m, at, out.question.name)) return out.error = "malformed question name", out;
  if (at + 4 > m.size()) return out.error = "truncated question", out;
  out.question.id = u16(m, 0);
  out.question.type = u16(m, at);
  out.question.qclass = u16(m, at + 2);
  out.ok = true;
  return out;
}

namespace {

// The header and the question of `query`, with no other record counted; empty when malformed.
std::string header_and_question(std::string_view query) {
  std::size_t at = header_bytes;
  std::string ignored;
  if (query.size() < header_bytes || !read_name(query, at, ignored) || at + 4 > query.size()) return {};
  std::string out(query.substr(0, at + 4));
  for (std::size_t i = 6; i < 12; ++i) out[i] = 0;  // no answer, authority or additional records
  return out;
}

}  // namespace

std::string dns_upstream_query(std::string_view query) { return header_and_question(query); }

std::string dns_error_response(std::string_view query, std::uint8_t rcode) {
  std::string out = header_and_question(query);
  if (out.empty()) return out;
  const std::uint16_t flags = u16(query, 2);
  const std::uint16_t answer = static_cast<std::uint16_t>(0x8000 | (flags & 0x0100) | 0x0080 | (rcode & 0xf));
  out[2] = static_cast<char>(answer >> 8);
  out[3] = static_cast<char>(answer & 0xff);
  return out;
}

std::vector<std::pair<std::string, std::string>> dns_answer_addresses(std::string_view m) {
  std::vector<std::pair<std::string, std::string>> out;
  if (m.size() < header_bytes) return out;
  const std::uint16_t questions = u16(m, 4);
  const std::uint16_t answers = u16(m, 6);
  std::size_t at = header_bytes;
  std::string name;
  for (std::uint16_t i = 0; i < questions; ++i) {
    if (!read_name(m, at, name) || at + 4 > m.size()) return out;
    at += 4;
  }
  for (std::uint16_t i = 0; i < answers; ++i) {
    if (!read_name(m, at, name) || at + 10 > m.size()) return out;
    const std::uint16_t type = u16(m, at);
    const std::uint16_t length = u16(m, at + 8);
    at += 10;
    if (at + length > m.size()) return out;
    char text[INET6_ADDRSTRLEN] = {};
    if (type == dns_type_a && length == 4) {
      ::inet_ntop(AF_INET, m.data() + at, text, sizeof text);
      out.emplace_back(name, text);
    } else if (type == dns_type_aaaa && length == 16) {
      ::inet_ntop(AF_INET6, m.data() + at, text, sizeof text);
      out.emplace_back(name, text);
    }
    at += length;
  }
  return out;
}

}  // namespace cordon::broker
