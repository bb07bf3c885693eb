// src/broker/dns_tcp.cpp — DNS over TCP for the sandbox (RFC 1035 §4.2.2,
// RFC 7766; docs/network.md, "DNS inside the sandbox"). A stub resolver
// falls back to TCP when a UDP answer is truncated, and some tools only
// speak TCP. The command's TCP connect to its DNS address (127.0.0.1:53) is
// routed by the supervisor to the transparent listener like any other
// (connect_redirect.h); broker.cpp hands a connection with that original
// destination here. Each message is a two-byte length and a query, decided
// exactly as over UDP (judge_dns_query): a name no rule allows is answered
// NXDOMAIN and never leaves; an allowed one is asked of the upstream
// resolver over TCP, one connection per query. Queries on one connection
// are answered one after another. Runs on the broker's thread.
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <asio.hpp>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "broker/core.h"
#include "broker/dns_message.h"

namespace cordon::broker::detail {
namespace {

using tcp = asio::ip::tcp;
using steady = std::chrono::steady_clock;

constexpr std::chrono::milliseconds idle_timeout{10000};   // between queries, and for one to arrive whole
constexpr std::chrono::milliseconds upstream_wait{3000};   // connect + answer, as over UDP
constexpr std::size_t max_queries_per_connection = 256;

std::string framed(const std::string& message) {
  std::string out;
  out += static_cast<char>((message.size() >> 8) & 0xff);
  out += static_cast<char>(message.size() & 0xff);
  return out + message;
}

}  // namespace

class dns_tcp_session : public std::enable_shared_from_this<dns_tcp_session> {
 public:
  dns_tcp_session(core& c, stream::socket client)
      : core_(c), client_(std::move(client)), upstream_(c.io), timer_(c.io) {}

  void start() { read_length(); }

  // What it holds now: the kernel's queues of its two sockets, the query,
  // the answer and what is being written, its entry, itself (bytes).
  std::uint64_t held_bytes() {
    const auto fd = [](auto& socket) { return socket.is_open() ? socket.native_handle() : -1; };
    return sizeof *this + socket_held_bytes(fd(client_)) + socket_held_bytes(fd(upstream_)) + query_.capacity() +
           answer_.capacity() + to_upstream_.capacity() + to_client_.capacity() + connection_held_bytes(record_);
  }

  // The broker stops: a query still waiting for its upstream is recorded.
  void stop_now() {
    if (asking_) {
      record_.reason = "broker stopped while asking the upstream resolver";
      core_.record(std::move(record_), outcome::error);
      asking_ = false;
    }
    close();
  }

 private:
  template <class F>
  auto wrap(F f) {
    return [self = shared_from_this(), f = std::move(f)](auto... args) mutable {
      if (self->closed_) return;
      try {
        f(args...);
      } catch (const std::exception& e) {
        self->core_.record_failure(std::string("dns_tcp: internal error: ") + e.what());
        self->close();
      }
    };
  }

  void arm(std::chrono::milliseconds after, void (dns_tcp_session::*on_expiry)()) {
    const auto generation = ++timer_generation_;
    timer_.expires_after(after);
    timer_.async_wait(wrap([this, generation, on_expiry](std::error_code ec) {
      if (!ec && generation == timer_generation_) (this->*on_expiry)();
    }));
  }

  void on_idle() { close(); }  // RFC 7766 §6.2.3: the server may close an idle connection

  void read_length() {
    if (answered_ >= max_queries_per_connection) return close();
    arm(idle_timeout, &dns_tcp_session::on_idle);
    asio::async_read(client_, asio::buffer(length_, sizeof length_), wrap([this](std::error_code ec, std::size_t) {
                       if (ec) return close();  // end of the client's queries (or an error)
                       const std::size_t n = (std::size_t{length_[0]} << 8) | length_[1];
                       if (n < 12) {
                         network_connection record;
                         record.protocol = "dns_tcp";
                         record.port = 53;
                         record.reason = "malformed DNS query: a message of " + std::to_string(n) + " bytes";
                         core_.record(std::move(record), outcome::malformed);
                         return close();
                       }
                       query_.assign(n, '\0');
                       asio::async_read(client_, asio::buffer(query_), wrap([this](std::error_code error, std::size_t) {
                                          if (error) return close();  // cut in the middle of a query
                                          on_query();
                                        }));
                     }));
  }

  void on_query() {
    asked_ = steady::now();
    auto verdict = judge_dns_query(core_, query_, "dns_tcp");
    if (verdict.forward && !core_.dns_upstream) {
      verdict.forward = false;
      verdict.record.reason = "no upstream resolver";
      verdict.response = dns_error_response(query_, dns_servfail);
      verdict.result = outcome::error;
    }
    if (!verdict.forward) {
      if (verdict.response.empty()) {  // not a query: nothing to answer
        core_.record(std::move(verdict.record), verdict.result);
        return close();
      }
      reply(verdict.response, std::move(verdict.record), verdict.result);
      return;
    }
    record_ = std::move(verdict.record);
    query_ = std::move(verdict.upstream_query);  // the question alone goes upstream
    ask_upstream();
  }

  // One TCP connection to the upstream resolver per query: the same
  // resolver the UDP path uses, so a truncated UDP answer has its whole
  // form here.
  void ask_upstream() {
    asking_ = true;
    arm(upstream_wait, &dns_tcp_session::on_upstream_timeout);
    const auto& to = *core_.dns_upstream;
    // Opened here rather than by asio so that it is close-on-exec from the start.
    const int fd = ::socket(to.protocol().family(), SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, IPPROTO_TCP);
    std::error_code ec;
    if (fd >= 0) upstream_.assign(to.protocol(), fd, ec);
    if (fd < 0 || ec) {
      if (fd >= 0 && !upstream_.is_open()) ::close(fd);
      return upstream_failed(std::string("dns: socket: ") + (fd < 0 ? std::strerror(errno) : ec.message()),
                             outcome::error);
    }
    upstream_.async_connect(to, wrap([this](std::error_code error) {
      if (!asking_) return;
      if (error) return upstream_failed("cannot reach the upstream resolver: " + error.message(), outcome::unreachable);
      to_upstream_ = framed(query_);
      asio::async_write(upstream_, asio::buffer(to_upstream_), wrap([this](std::error_code e, std::size_t) {
                          if (!asking_) return;
                          if (e) return upstream_failed("upstream resolver: " + e.message(), outcome::unreachable);
                          read_upstream_length();
                        }));
    }));
  }

  void read_upstream_length() {
    asio::async_read(upstream_, asio::buffer(upstream_length_, sizeof upstream_length_),
                     wrap([this](std::error_code ec, std::size_t) {
                       if (!asking_) return;
                       if (ec) return upstream_failed("upstream resolver: " + ec.message(), outcome::unreachable);
                       answer_.assign((std::size_t{upstream_length_[0]} << 8) | upstream_length_[1], '\0');
                       asio::async_read(upstream_, asio::buffer(answer_), wrap([this](std::error_code e, std::size_t) {
                                          if (!asking_) return;
                                          if (e || answer_.size() < 12 ||
                                              dns_message_id(answer_) != dns_message_id(query_)) {
                                            return upstream_failed("the upstream resolver's answer over TCP is "
                                                                   "cut or not for this query",
                                                                   outcome::unreachable);
                                          }
                                          learn_dns_answer(core_, record_, answer_);
                                          asking_ = false;
                                          close_upstream();
                                          reply(answer_, std::move(record_), outcome::allowed);
                                        }));
                     }));
  }

  void on_upstream_timeout() {
    if (!asking_) return;
    upstream_failed("the upstream resolver did not answer within 3000 ms", outcome::unreachable);
  }

  void upstream_failed(const std::string& reason, outcome result) {
    asking_ = false;
    close_upstream();
    record_.reason = reason;
    reply(dns_error_response(query_, dns_servfail), std::move(record_), result);
  }

  // Records the query, sends `response` framed, then reads the next query.
  void reply(const std::string& response, network_connection record, outcome result) {
    record.duration_ms = std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - asked_).count();
    core_.record(std::move(record), result);
    ++answered_;
    to_client_ = framed(response);
    arm(idle_timeout, &dns_tcp_session::on_idle);  // a client that does not read its answer
    asio::async_write(client_, asio::buffer(to_client_), wrap([this](std::error_code ec, std::size_t) {
                        if (ec) return close();
                        read_length();
                      }));
  }

  void close_upstream() {
    std::error_code ec;
    upstream_.close(ec);
  }

  void close() {
    if (closed_) return;
    closed_ = true;
    ++timer_generation_;
    timer_.cancel();
    std::error_code ec;
    client_.close(ec);
    upstream_.close(ec);
    core_.dns_sessions.erase(this);  // last: may release the last owner but one
  }

  core& core_;
  stream::socket client_;
  tcp::socket upstream_;
  asio::steady_timer timer_;
  std::uint64_t timer_generation_ = 0;
  bool closed_ = false;
  bool asking_ = false;  // a query is with the upstream resolver; record_ is its entry
  steady::time_point asked_{};  // when the current query arrived
  std::size_t answered_ = 0;
  unsigned char length_[2] = {};
  unsigned char upstream_length_[2] = {};
  std::string query_;
  std::string answer_;
  std::string to_upstream_;
  std::string to_client_;
  network_connection record_;
};

void start_dns_tcp_session(core& c, stream::socket client) {
  auto s = std::make_shared<dns_tcp_session>(c, std::move(client));
  c.dns_sessions.emplace(s.get(), s);
  s->start();
}

void stop_dns_tcp_session(dns_tcp_session& s) { s.stop_now(); }

std::uint64_t dns_tcp_session_held_bytes(dns_tcp_session& s) { return s.held_bytes(); }

}  // namespace cordon::broker::detail
