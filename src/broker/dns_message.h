// src/broker/dns_message.h — the few parts of DNS messages (RFC 1035 §4) the
// broker's resolver for the sandbox needs, as pure functions: the question
// of a query, a refusal built from it, and the addresses in an answer. No
// sockets.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cordon::broker {

struct dns_question {
  std::uint16_t id = 0;
  std::string name;  // lower case, dotted, no trailing dot; labels as sent (may need validation)
  std::uint16_t type = 0;
  std::uint16_t qclass = 0;
};

struct dns_query_parse {
  bool ok = false;      // a standard query (QR 0, opcode 0) with exactly one question
  dns_question question;
  std::string error;    // why not
};

// Parses a query as the sandbox's stub resolver sends it.
dns_query_parse parse_dns_query(std::string_view message);

// The answer to `query` (which parse_dns_query accepted) with no records
// and response code `rcode` (3: NXDOMAIN, 5: REFUSED, 2: SERVFAIL): the
// header and question copied, QR and RA set, no additional records.
std::string dns_error_response(std::string_view query, std::uint8_t rcode);

// What is sent upstream for `query` (which parse_dns_query accepted): its
// header and its one question, with no answer, authority or additional
// records (counts set to 0). Whatever else the sandbox put in the message
// (records carrying other names or data, an EDNS option, trailing bytes)
// never leaves: only the question was decided. Without EDNS an answer over
// 512 bytes comes truncated, and the stub resolver asks again over TCP
// (RFC 1035 §4.2.1), which the broker serves too. Empty when malformed.
std::string dns_upstream_query(std::string_view query);

constexpr std::uint8_t dns_nxdomain = 3;
constexpr std::uint8_t dns_servfail = 2;
constexpr std::uint8_t dns_refused = 5;
constexpr std::uint16_t dns_type_a = 1;
constexpr std::uint16_t dns_type_aaaa = 28;

// The A and AAAA records of a response's answer section: (owner name,
// lower case, no trailing dot; address as text). Malformed parts end the
// list (what was read so far is returned).
std::vector<std::pair<std::string, std::string>> dns_answer_addresses(std::string_view response);

// The response's ID (0 when too short).
std::uint16_t dns_message_id(std::string_view message);

}  // namespace cordon::broker
