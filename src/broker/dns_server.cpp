// src/broker/dns_server.cpp — the sandbox's DNS resolver (docs/network.md,
// "DNS inside the sandbox"). The sandbox's /etc/resolv.conf names
// 127.0.0.1; the UDP socket there was made by the sandbox's PID 1 and is
// served here. A query for a name no rule allows (on any port) is answered
// NXDOMAIN at once and never leaves the broker; an allowed one is sent to
// the upstream resolver, its answer relayed, and its addresses remembered
// (dns_cache.h) for transparent connections. Each query is evidence
// (protocol "dns"). Runs on the broker's thread.
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <asio.hpp>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "broker/core.h"
#include "broker/decision.h"
#include "broker/dns_message.h"
#include "core/dns_types.h"

namespace cordon::broker::detail {
namespace {

using udp = asio::ip::udp;
constexpr std::size_t max_message = 4096;         // EDNS0 answers stay well below this on loopback
constexpr std::size_t max_pending_queries = 64;   // more at once: SERVFAIL
constexpr std::chrono::milliseconds upstream_wait{3000};

// What the deciding rule `index` (an allow rule) limits of its queries
// (cordon/policy.h, dns_types and dns_queries_per_minute): why a query of
// record type `type` may not go upstream, or empty (and then it counts
// against the rule's rate).
std::string rule_dns_limit(core& c, std::size_t index, std::uint16_t type) {
  const auto& rules = c.options.policy.rules;
  if (index >= rules.size()) return {};
  const network_rule& rule = rules[index];
  const std::string which = "rule " + std::to_string(index);
  if (!rule.dns_types.empty() &&
      std::none_of(rule.dns_types.begin(), rule.dns_types.end(),
                   [type](const std::string& name) { return cordon::core::dns_type_number(name) == type; })) {
    return "record type " + cordon::core::dns_type_text(type) + " is not in " + which + "'s dns_types";
  }
  if (!rule.dns_queries_per_minute) return {};
  auto& window = c.dns_rates[index];
  const auto now = std::chrono::steady_clock::now();
  if (window.forwarded == 0 || now - window.began >= std::chrono::minutes(1)) {
    window.began = now;
    window.forwarded = 0;
  }
  if (window.forwarded >= *rule.dns_queries_per_minute) {
    return which + "'s dns_queries_per_minute (" + std::to_string(*rule.dns_queries_per_minute) +
           ") is spent for this minute";
  }
  ++window.forwarded;
  return {};
}

}  // namespace

dns_verdict judge_dns_query(core& c, const std::string& query, const char* protocol) {
  dns_verdict v;
  v.record.protocol = protocol;
  v.record.port = 53;
  const auto parsed = parse_dns_query(query);
  if (!parsed.ok) {
    v.record.reason = "malformed DNS query: " + parsed.error;
    v.result = outcome::malformed;
    return v;
  }
  const auto decided = decide_resolution(c.options.policy, parsed.question.name);
  v.record.host = decided.host;
  if (!decided.decision) {
    v.record.reason = decided.reason;
    v.response = dns_error_response(query, dns_nxdomain);
    v.result = outcome::malformed;
    return v;
  }
  v.record.rule = decided.decision->rule;
  v.record.rule_consulted = true;
  if (decided.decision->action == rule_action::deny) {
    v.record.reason = decided.reason + "; answered NXDOMAIN, not sent upstream";
    v.response = dns_error_response(query, dns_nxdomain);
    v.result = outcome::denied;
    return v;
  }
  if (decided.decision->rule) {
    if (std::string why = rule_dns_limit(c, *decided.decision->rule, parsed.question.type); !why.empty()) {
      v.record.reason = std::move(why) + "; answered REFUSED, not sent upstream";
      v.response = dns_error_response(query, dns_refused);
      v.result = outcome::denied;
      return v;
    }
  }
  // Past the broker's budget an allowed query is new work it refuses:
  // answered REFUSED (RFC 1035 §4.1.1, rcode 5) and recorded as denied.
  if (!c.admit(dns_query_reservation)) {
    v.record.reason = c.budget_refusal() + "; answered REFUSED, not sent upstream";
    v.response = dns_error_response(query, dns_refused);
    v.result = outcome::denied;
    return v;
  }
  v.forward = true;
  v.upstream_query = dns_upstream_query(query);
  v.result = outcome::allowed;
  return v;
}

void learn_dns_answer(core& c, network_connection& record, std::string_view response) {
  std::vector<std::string> addresses;
  for (const auto& [owner, address] : dns_answer_addresses(response)) {
    (void)owner;  // a CNAME chain's last owner: what the sandbox resolved is the question's name
    auto normalized = normalize_destination_host(address);
    if (normalized) addresses.push_back(*normalized);
  }
  c.dns.learn(record.host, addresses);
  if (!addresses.empty()) record.address = addresses.front();
  // The cache's growth comes out of the run's memory budget, like a bulk
  // relay's buffers: when it is spent the answer is relayed but not
  // remembered (a transparent connection to it is then decided by its
  // address), and the entry says so.
  std::uint64_t held = c.dns.held_bytes();
  if (held > c.dns_granted && !c.budget.take(held - c.dns_granted, c.options.limits.memory_budget_bytes)) {
    c.dns.forget_name(record.host);
    record.reason = "broker_budget: answer relayed but not remembered, the broker's memory budget is spent";
    held = c.dns.held_bytes();
  }
  if (held > c.dns_granted) {
    c.dns_granted = held;  // taken above
  } else {
    c.budget.give(c.dns_granted - held);
    c.dns_granted = held;
  }
}

class dns_server : public std::enable_shared_from_this<dns_server> {
 public:
  dns_server(core& c, udp::socket socket, std::optional<udp::endpoint> upstream)
      : core_(c), socket_(std::move(socket)), upstream_(std::move(upstream)), buffer_(max_message) {}

  void receive() {
    socket_.async_receive_from(asio::buffer(buffer_), client_,
                               [self = shared_from_this()](std::error_code ec, std::size_t n) {
                                 if (ec || self->core_.stopping) return;  // closed by stop()
                                 try {
                                   self->on_query(std::string(self->buffer_.data(), n), self->client_);
                                 } catch (const std::exception& e) {
                                   self->core_.record_failure(std::string("dns: internal error: ") + e.what());
                                 }
                                 self->receive();
                               });
  }

  // What it holds now: its receive buffer and each query waiting for its
  // upstream answer (the query, the answer buffer, the record), bytes.
  std::uint64_t held_bytes() const {
    std::uint64_t held = buffer_.capacity();
    for (const auto& q : pending_) {
      held += sizeof(upstream_query) + q->query.capacity() + q->answer.capacity() + q->record.host.capacity() +
              q->record.reason.capacity();
    }
    return held;
  }

  void stop() {
    std::error_code ec;
    socket_.close(ec);
    for (auto& q : pending_) {
      q->timer.cancel();
      q->socket.close(ec);
    }
  }

 private:
  struct upstream_query {
    upstream_query(asio::io_context& io) : socket(io), timer(io) {}
    udp::socket socket;
    asio::steady_timer timer;
    std::string query;
    std::vector<char> answer = std::vector<char>(max_message);
    udp::endpoint client;
    network_connection record;
    bool done = false;
  };

  void answer(const std::string& response, const udp::endpoint& client) {
    if (response.empty()) return;
    std::error_code ec;
    socket_.send_to(asio::buffer(response), client, 0, ec);  // a datagram: never blocks for long
  }

  void on_query(std::string query, udp::endpoint client) {
    auto verdict = judge_dns_query(core_, query, "dns");
    if (verdict.forward && (!upstream_ || pending_.size() >= max_pending_queries)) {
      verdict.record.reason = upstream_ ? "too many DNS queries at once" : "no upstream resolver";
      verdict.response = dns_error_response(query, dns_servfail);
      verdict.result = outcome::error;
      verdict.forward = false;
    }
    if (!verdict.forward) {
      answer(verdict.response, client);
      core_.record(std::move(verdict.record), verdict.result);
      return;
    }
    forward(std::move(verdict.upstream_query), client, std::move(verdict.record));
  }

  void forward(std::string query, const udp::endpoint& client, network_connection record) {
    auto q = std::make_shared<upstream_query>(core_.io);
    q->query = std::move(query);
    q->client = client;
    q->record = std::move(record);
    // Opened here rather than by asio so that it is close-on-exec from the start.
    const int fd = ::socket(upstream_->protocol().family(), SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    std::error_code ec;
    if (fd >= 0) q->socket.assign(upstream_->protocol(), fd, ec);
    if (fd < 0 || ec) {
      if (fd >= 0 && !q->socket.is_open()) ::close(fd);
      q->record.reason = std::string("dns: socket: ") + (fd < 0 ? std::strerror(errno) : ec.message());
      answer(dns_error_response(q->query, dns_servfail), client);
      core_.record(std::move(q->record), outcome::error);
      return;
    }
    q->socket.connect(*upstream_, ec);
    if (!ec) q->socket.send(asio::buffer(q->query), 0, ec);
    if (ec) {
      q->record.reason = "cannot reach the upstream resolver: " + ec.message();
      answer(dns_error_response(q->query, dns_servfail), client);
      core_.record(std::move(q->record), outcome::unreachable);
      return;
    }
    pending_.push_back(q);
    q->timer.expires_after(upstream_wait);
    q->timer.async_wait([self = shared_from_this(), q](std::error_code error) {
      if (error || q->done) return;
      q->record.reason = "the upstream resolver did not answer within 3000 ms";
      self->answer(dns_error_response(q->query, dns_servfail), q->client);
      self->finish(q, outcome::unreachable);
    });
    await_answer(q);
  }

  void await_answer(const std::shared_ptr<upstream_query>& q) {
    q->socket.async_receive(asio::buffer(q->answer), [self = shared_from_this(), q](std::error_code ec, std::size_t n) {
      if (q->done) return;
      if (ec) {
        q->record.reason = "upstream resolver: " + ec.message();
        self->answer(dns_error_response(q->query, dns_servfail), q->client);
        self->finish(q, outcome::unreachable);
        return;
      }
      const std::string_view response(q->answer.data(), n);
      if (n < 12 || dns_message_id(response) != dns_message_id(q->query)) {
        self->await_answer(q);  // not the answer to this query: keep waiting
        return;
      }
      learn_dns_answer(self->core_, q->record, response);
      self->answer(std::string(response), q->client);
      self->finish(q, outcome::allowed);
    });
  }

  void finish(const std::shared_ptr<upstream_query>& q, outcome result) {
    q->done = true;
    std::error_code ec;
    q->timer.cancel();
    q->socket.close(ec);
    core_.record(std::move(q->record), result);
    for (auto it = pending_.begin(); it != pending_.end(); ++it) {
      if (*it == q) {
        pending_.erase(it);
        break;
      }
    }
  }

  core& core_;
  udp::socket socket_;
  std::optional<udp::endpoint> upstream_;
  std::vector<char> buffer_;
  udp::endpoint client_;
  std::vector<std::shared_ptr<upstream_query>> pending_;
};

std::string start_dns_server(core& c, int fd) {
  std::error_code ec;
  udp::socket socket(c.io);
  sockaddr_storage local{};
  socklen_t length = sizeof local;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &length) != 0) {
    ::close(fd);
    return std::string("getsockname: ") + std::strerror(errno);
  }
  ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  socket.assign(local.ss_family == AF_INET6 ? udp::v6() : udp::v4(), fd, ec);
  if (!ec) socket.non_blocking(true, ec);
  if (ec) {
    if (!socket.is_open()) ::close(fd);
    return ec.message();
  }
  std::optional<udp::endpoint> upstream;
  if (!c.options.dns_upstream.empty()) {
    const auto& text = c.options.dns_upstream;
    const auto colon = text.rfind(':');
    const auto address = asio::ip::make_address(
        text.substr(text.front() == '[' ? 1 : 0, colon - (text.front() == '[' ? 2 : 0)), ec);
    if (ec || colon == std::string::npos) return "invalid upstream resolver " + text;
    upstream = udp::endpoint(address, static_cast<unsigned short>(std::stoi(text.substr(colon + 1))));
    c.dns_upstream = asio::ip::tcp::endpoint(upstream->address(), upstream->port());
  }
  // Where the sandbox sends its queries: a TCP connection the supervisor
  // routes to the transparent listener with this original destination is
  // DNS over TCP (dns_tcp.cpp).
  const auto bound = socket.local_endpoint(ec);
  if (!ec) {
    auto literal = normalize_destination_host(bound.address().to_string());
    if (literal) c.dns_address = original_destination{*literal, bound.port()};
  }
  c.dns_service = std::make_shared<dns_server>(c, std::move(socket), upstream);
  c.dns_service->receive();
  return {};
}

void stop_dns_server(dns_server& s) { s.stop(); }

std::uint64_t dns_server_held_bytes(const dns_server& s) { return s.held_bytes(); }

}  // namespace cordon::broker::detail

namespace cordon::broker {

std::string system_dns_upstream() {
  std::ifstream in("/etc/resolv.conf");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string keyword, address;
    if (!(words >> keyword >> address) || keyword != "nameserver") continue;
    std::error_code ec;
    const auto ip = asio::ip::make_address(address, ec);
    if (ec) continue;
    return (ip.is_v6() ? "[" + ip.to_string() + "]" : ip.to_string()) + ":53";
  }
  return {};
}

}  // namespace cordon::broker
