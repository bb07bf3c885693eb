// src/broker/session.cpp — one client connection of the network broker
// (broker.h): read the request, decide, resolve, connect, relay, record.
// Runs on the broker's thread only.
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <asio.hpp>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <string>
#include <system_error>
#include <tuple>
#include <utility>
#include <vector>

#include "broker/client_judge.h"
#include "broker/core.h"
#include "broker/decision.h"
#include "broker/first_bytes.h"
#include "broker/host_addresses.h"
#include "broker/http_request.h"
#include "broker/relay_memory.h"
#include "broker/socks5.h"
#include "broker/splice_pipe.h"
#include "broker/terminate.h"

namespace cordon::broker::detail {
namespace {

using steady = std::chrono::steady_clock;
using tcp = asio::ip::tcp;

// How long a refused client may take to read its response and close, while
// the broker reads and drops what it still sends (see session::drain).
constexpr std::chrono::milliseconds linger_time{1000};
constexpr std::size_t linger_bytes = 64 * 1024;

}  // namespace

// One client connection: read the request, decide, connect, relay. Every
// step is asynchronous; a step that ends the connection calls refuse() (send
// a response, then close) or finish() (close and record).
class session : public std::enable_shared_from_this<session> {
 public:
  session(core& c, stream::socket client)
      : core_(c),
        client_(std::move(client)),
        upstream_(c.io),
        resolver_(c.io),
        timer_(c.io),
        accepted_(steady::now()),
        entry_id_(++c.last_entry_id) {
    record_.protocol = "unknown";
  }

  void start() {
    buffer_.resize(std::max<std::size_t>(limits().max_request_bytes, 1));
    arm(limits().request_timeout, &session::on_request_timeout);
    read_request();
  }

  // A connection the supervisor routed here transparently (connect_redirect.h):
  // the command connected to `original` and speaks to it directly. Its first
  // bytes are read (a TLS ClientHello, an HTTP request head) to learn the name
  // it means; then it is decided and relayed like any other, the bytes read
  // so far sent first.
  void start_transparent(std::optional<original_destination> original) {
    record_.protocol = "transparent";
    if (!original) {
      refuse({}, outcome::malformed, "transparent connection without an original destination");
      return;
    }
    original_ = std::move(*original);
    record_.original = (original_.address.find(':') != std::string::npos ? "[" + original_.address + "]"
                                                                           : original_.address) +
                       ":" + std::to_string(original_.port);
    record_.host = original_.address;
    record_.port = original_.port;
    // A ClientHello may span records (first_bytes.h).
    buffer_.resize(std::max<std::size_t>(limits().max_request_bytes, max_client_hello_bytes));
    arm(limits().first_bytes_wait, &session::on_first_bytes_wait);
    read_first_bytes();
  }

  // What this connection holds now: the kernel's queues of its two sockets,
  // its pipes' contents, its user-space buffers, its evidence entry and the
  // session itself (bytes).
  std::uint64_t held_bytes() {
    const auto fd = [](auto& socket) { return socket.is_open() ? socket.native_handle() : -1; };
    std::uint64_t held = sizeof *this + socket_held_bytes(fd(client_)) + socket_held_bytes(fd(upstream_)) +
                         to_destination_pipe_.held + to_client_pipe_.held + buffer_.capacity() +
                         check_buffer_.capacity() + to_destination_buffer_.capacity() +
                         to_client_buffer_.capacity() + to_upstream_.capacity() + to_client_.capacity() +
                         judged_.capacity() + checked_address_.capacity() + connection_held_bytes(record_) +
                         (judge_ ? judge_->held_bytes() : 0) + (record_.tls.empty() ? 0 : terminated_tls_bytes);
    for (const auto& c : candidates_) held += sizeof c + c.capacity();
    return held;
  }

  // The broker stops: close now, record what this connection got to.
  void stop_now() {
    if (phase_ == phase::done) return;
    if (phase_ == phase::request) record_.reason = "broker stopped before the request was complete";
    if (phase_ == phase::connecting) record_.reason = "broker stopped while connecting";
    if (phase_ == phase::checking) record_.reason = "broker stopped during the TLS check";
    if (phase_ == phase::request || phase_ == phase::connecting || phase_ == phase::checking) outcome_ = outcome::error;
    finish();
  }

 private:
  enum class phase { request, connecting, checking, relaying, closing, done };

  const broker_limits& limits() const { return core_.options.limits; }
  bool socks() const { return record_.protocol == "socks5"; }
  bool transparent() const { return record_.protocol == "transparent"; }
  // May the broker answer with an HTTP response of its own? Not inside a
  // transparent TLS connection (the client expects a ServerHello).
  bool speaks_http() const { return !socks() && (!transparent() || peeked_http_); }
  std::string http_refusal(int status, const std::string& body, const std::vector<http_header>& headers = {}) const {
    return speaks_http() ? http_response(status, body, headers) : std::string();
  }

  // Every completion handler goes through here: it keeps the session alive,
  // does nothing once the session has ended, and turns an exception into a
  // recorded failure instead of letting it out of io_context::run().
  template <class F>
  auto wrap(F f) {
    return [self = shared_from_this(), f = std::move(f)](auto... args) mutable {
      if (self->phase_ == phase::done) return;
      try {
        f(args...);
      } catch (const std::exception& e) {
        self->internal_error(e.what());
      } catch (...) {
        self->internal_error("unknown exception");
      }
    };
  }

  void internal_error(const std::string& what) {
    outcome_ = outcome::error;
    record_.reason = printable("internal error: " + what);
    finish();
  }

  // One timer per session; the generation tells a stale expiry (already
  // queued when the timer was re-armed) from the current one.
  void arm(std::chrono::milliseconds after, void (session::*on_expiry)()) {
    const auto generation = ++timer_generation_;
    timer_.expires_after(after);
    timer_.async_wait(wrap([this, generation, on_expiry](std::error_code ec) {
      if (!ec && generation == timer_generation_) (this->*on_expiry)();
    }));
  }
  void disarm() {
    ++timer_generation_;
    timer_.cancel();
  }

  // ---- the request ---------------------------------------------------------

  void read_request() {
    if (filled_ == buffer_.size()) {
      refuse(socks() ? socks5_reply(socks5_reply_code::general_failure)
                     : http_response(431, "cordon: request head larger than " +
                                              std::to_string(limits().max_request_bytes) + " bytes\n"),
             outcome::malformed, "request too large: more than " + std::to_string(limits().max_request_bytes) + " bytes");
      return;
    }
    client_.async_read_some(asio::buffer(buffer_.data() + filled_, buffer_.size() - filled_),
                            wrap([this](std::error_code ec, std::size_t n) {
                              if (phase_ != phase::request) return;
                              if (ec) {
                                outcome_ = outcome::malformed;
                                record_.reason = std::string("malformed request: connection closed ") +
                                                 (filled_ == 0 ? "before a request" : "in the middle of the request");
                                finish();
                                return;
                              }
                              const std::string_view fresh(buffer_.data() + filled_, n);
                              filled_ += n;
                              on_request_bytes(fresh);
                            }));
  }

  void on_request_bytes(std::string_view fresh) {
    if (buffer_[0] == 0x05) {
      record_.protocol = "socks5";
      on_socks_bytes();
      return;
    }
    // Parse again only when a line may have ended, a byte no head contains
    // arrived or the buffer is full: re-reading the head for every byte of a
    // client that trickles would take quadratic time.
    const bool worth_parsing = filled_ == buffer_.size() || std::any_of(fresh.begin(), fresh.end(), [](char c) {
                                 const auto u = static_cast<unsigned char>(c);
                                 return (u < 0x20 && c != '\t') || u == 0x7f;
                               });
    if (!worth_parsing) {
      read_request();
      return;
    }
    const std::string_view data(buffer_.data(), filled_);
    auto parsed = parse_http_request(data, limits().max_request_bytes);
    if (!parsed.request.method.empty()) {
      record_.protocol = parsed.request.kind == http_kind::connect ? "http_connect" : "http_forward";
    }
    switch (parsed.status) {
      case http_parse_status::incomplete:
        read_request();
        return;
      case http_parse_status::too_large:
        filled_ = buffer_.size();
        read_request();  // refuses with 431
        return;
      case http_parse_status::bad_request:
        refuse(http_response(400, "cordon: malformed request: " + parsed.error + "\n"), outcome::malformed,
               "malformed request: " + parsed.error);
        return;
      case http_parse_status::complete:
        break;
    }
    http_ = std::move(parsed.request);
    const std::string_view payload = data.substr(parsed.head_length);
    if (http_.kind == http_kind::connect) {
      to_client_ = "HTTP/1.1 200 Connection established\r\n\r\n";
      to_upstream_ = std::string(payload);
    } else {
      to_upstream_ = forward_request_head(http_) + std::string(payload);
    }
    decide(http_.host, http_.port);
  }

  void on_socks_bytes() {
    const std::string_view data(buffer_.data() + consumed_, filled_ - consumed_);
    if (!greeted_) {
      const auto greeting = parse_socks5_greeting(data);
      if (greeting.status == socks5_status::incomplete) {
        read_request();
        return;
      }
      if (!greeting.no_auth_offered) {
        refuse(socks5_method_selection(false), outcome::malformed,
               "socks5: the client offers no acceptable authentication method (only \"no authentication\")");
        return;
      }
      consumed_ += greeting.length;
      greeted_ = true;
      to_client_ = socks5_method_selection(true);
      asio::async_write(client_, asio::buffer(to_client_), wrap([this](std::error_code ec, std::size_t) {
                          if (phase_ != phase::request) return;
                          if (ec) {
                            outcome_ = outcome::malformed;
                            record_.reason = "malformed request: connection closed in the middle of the request";
                            finish();
                            return;
                          }
                          to_client_.clear();
                          on_socks_bytes();  // the request may have come with the greeting
                        }));
      return;
    }
    const auto request = parse_socks5_request(data);
    switch (request.status) {
      case socks5_status::incomplete:
        read_request();
        return;
      case socks5_status::error:
        if (request.length != 0) {  // a complete request with an unsupported command
          record_.host = printable(request.request.host);
          record_.port = request.request.port;
        }
        refuse(socks5_reply(request.reply), outcome::malformed, "malformed request: socks5: " + request.error);
        return;
      case socks5_status::complete:
        break;
    }
    to_upstream_ = std::string(data.substr(request.length));
    decide(request.request.host, request.request.port);
  }

  void on_request_timeout() {
    if (phase_ != phase::request) return;
    const std::string reason = "request timeout: no complete request within " + ms_text(limits().request_timeout);
    refuse(socks() ? std::string() : http_refusal(408, "cordon: " + reason + "\n"), outcome::malformed, reason);
  }

  // ---- a transparent connection's first bytes ------------------------------

  void read_first_bytes() {
    if (filled_ == buffer_.size()) {
      decide_transparent("", "address");  // neither a ClientHello nor a request head that fits
      return;
    }
    client_.async_read_some(asio::buffer(buffer_.data() + filled_, buffer_.size() - filled_),
                            wrap([this](std::error_code ec, std::size_t n) {
                              if (phase_ != phase::request) return;
                              if (ec == asio::error::eof) {  // it sent what it had: decide by the address
                                decide_transparent("", "address");
                                return;
                              }
                              if (ec) {
                                outcome_ = outcome::malformed;
                                record_.reason = "transparent connection failed before it was decided: " + ec.message();
                                finish();
                                return;
                              }
                              filled_ += n;
                              const auto seen =
                                  classify_first_bytes(std::string_view(buffer_.data(), filled_), limits().max_request_bytes);
                              switch (seen.status) {
                                case first_bytes_status::incomplete:
                                  if (!worth_waiting_for(std::string_view(buffer_.data(), filled_))) {
                                    decide_transparent("", "address");  // a word that names nothing
                                    return;
                                  }
                                  if (!waited_for_first_bytes_) arm(limits().request_timeout, &session::on_request_timeout);
                                  waited_for_first_bytes_ = true;
                                  read_first_bytes();
                                  return;
                                case first_bytes_status::tls:
                                  decide_transparent(seen.name, "tls_sni");
                                  return;
                                case first_bytes_status::http:
                                  peeked_http_ = true;
                                  decide_transparent(seen.name, "http_host");
                                  return;
                                case first_bytes_status::other:
                                case first_bytes_status::malformed:  // judged again once decided (client_judge.h)
                                  decide_transparent("", "address");
                                  return;
                              }
                            }));
  }

  // The command sent nothing yet (a protocol where the server speaks first).
  void on_first_bytes_wait() {
    if (phase_ != phase::request || filled_ != 0) return;
    std::error_code ec;
    client_.cancel(ec);  // the pending read
    decide_transparent("", "address");
  }

  // In this order: the TLS server name, the HTTP Host, the name the sandbox
  // resolved to this address (dns_cache.h), the address itself.
  void decide_transparent(const std::string& name, const char* source) {
    to_upstream_.assign(buffer_.data(), filled_);
    if (!name.empty()) {
      record_.name_source = source;
      decide(name, original_.port);
      return;
    }
    // TLS without a server name is held to its address alone: a name rule
    // cannot vouch for a connection that names nothing.
    const bool tls_without_name = std::string(source) == "tls_sni";
    const std::string resolved = tls_without_name ? std::string() : core_.dns.name_of(original_.address);
    if (!resolved.empty()) {  // the name the sandbox resolved to this address
      record_.name_source = "dns";
      decide(resolved, original_.port);
      return;
    }
    record_.name_source = "address";  // TLS without a server name, HTTP without Host, anything else
    decide(original_.address, original_.port);
  }

  // ---- the decision --------------------------------------------------------

  std::string destination_text() const {
    const bool v6 = record_.host.find(':') != std::string::npos;
    return (v6 ? "[" + record_.host + "]" : record_.host) + ":" + std::to_string(record_.port);
  }

  void decide(const std::string& host, int port) {
    disarm();
    const auto decided = decide_name(core_.options.policy, host, port);
    record_.host = decided.host;
    record_.port = port;
    if (!decided.decision) {
      refuse(socks() ? socks5_reply(socks5_reply_code::not_allowed)
                     : http_refusal(400, "cordon: refused " + destination_text() + ": " + decided.reason + "\n"),
             outcome::malformed, "invalid destination: " + decided.reason);
      return;
    }
    record_.rule = decided.decision->rule;
    record_.rule_consulted = true;
    ip_literal_ = decided.ip_literal;
    if (decided.decision->action == rule_action::deny) {
      refuse_by_rule(decided.reason);
      return;
    }
    phase_ = phase::connecting;
    arm(limits().connect_timeout, &session::on_connect_timeout);
    if (decided.ip_literal) {
      on_resolved({decided.host}, "");
      return;
    }
    resolving_ = true;
    // A name the sandbox resolved through the broker goes to the addresses
    // it was given (the same upstream answer), without asking again.
    if (auto known = core_.dns.addresses_of(decided.host); !known.empty()) {
      on_resolved(known, "");
      return;
    }
    if (core_.options.hooks.resolve) {
      std::vector<std::string> addresses;
      std::string problem;
      try {
        addresses = core_.options.hooks.resolve(decided.host);
      } catch (const std::exception& e) {
        problem = e.what();
      }
      on_resolved(addresses, problem);
      return;
    }
    if (core_.options.hooks.resolve_async) {  // the confined broker: the supervisor resolves
      core_.options.hooks.resolve_async(
          decided.host, port, wrap([this](std::vector<std::string> addresses, std::string problem) {
            if (phase_ == phase::connecting) on_resolved(addresses, problem);
          }));
      return;
    }
    resolver_.async_resolve(decided.host, std::to_string(port), tcp::resolver::numeric_service,
                            wrap([this](std::error_code ec, const tcp::resolver::results_type& results) {
                              if (phase_ != phase::connecting) return;
                              std::vector<std::string> addresses;
                              for (const auto& entry : results)
                                addresses.push_back(entry.endpoint().address().to_string());
                              on_resolved(addresses, ec ? ec.message() : "");
                            }));
  }

  void refuse_by_rule(const std::string& reason) {
    if (socks()) {
      refuse(socks5_reply(socks5_reply_code::not_allowed), outcome::denied, reason);
      return;
    }
    const std::string rule = record_.rule ? std::to_string(*record_.rule) : "default";
    std::vector<http_header> headers;
    headers.push_back({"X-Cordon-Rule", rule});
    refuse(
        http_refusal(403, "cordon: refused " + destination_text() + ": " + reason + " [rule " + rule + "]\n", headers),
        outcome::denied, reason);
  }

  void on_resolved(const std::vector<std::string>& addresses, const std::string& problem) {
    resolving_ = false;
    if (addresses.empty()) {
      fail_upstream(502, socks5_reply_code::host_unreachable,
                    "cannot resolve " + record_.host + (problem.empty() ? "" : ": " + problem));
      return;
    }
    // The host's own addresses, read now (an address added during the run
    // counts); not with a dial hook, whose tests dial local servers on purpose.
    // They matter only for a public candidate (a non-public one needs its IP
    // rule whether or not it is the host's): reading them costs a netlink
    // dump, most of a loopback connection's added time.
    const bool any_public = std::any_of(addresses.begin(), addresses.end(),
                                        [](const std::string& a) { return !is_non_public_address(a); });
    const auto own =
        core_.options.hooks.dial || !any_public ? std::vector<std::string>{} : host_interface_addresses();
    auto choice = choose_addresses(core_.options.policy, record_.host, record_.port, addresses, own);
    if (choice.usable.empty()) {
      refuse_by_rule(choice.reason);
      return;
    }
    candidates_ = std::move(choice.usable);
    // A transparent connection goes where the command dialed when the name
    // it sent resolves there too; otherwise to the name's own addresses.
    const auto original = std::find(candidates_.begin(), candidates_.end(), original_.address);
    if (original != candidates_.end()) std::rotate(candidates_.begin(), original, original + 1);
    connect_next();
  }

  // ---- connecting ----------------------------------------------------------

  // Tries the candidates in order; the connect timeout covers all of them.
  void connect_next() {
    if (next_candidate_ == candidates_.size()) {
      fail_upstream(502, socks_code_, "cannot connect to " + destination_text() + ": " + last_error_);
      return;
    }
    const std::string address = candidates_[next_candidate_++];
    std::string dial_host = address;
    int dial_port = record_.port;
    if (core_.options.hooks.dial) {
      try {
        std::tie(dial_host, dial_port) = core_.options.hooks.dial(address, record_.port);
      } catch (const std::exception& e) {
        last_error_ = std::string("dial hook: ") + e.what();
        connect_next();
        return;
      }
    }
    std::error_code ec;
    const auto ip = asio::ip::make_address(dial_host, ec);
    if (ec || dial_port < 1 || dial_port > 65535) {
      last_error_ = "cannot dial " + printable(dial_host) + " port " + std::to_string(dial_port);
      connect_next();
      return;
    }
    upstream_.close(ec);
    // Opened here rather than by asio so that it is close-on-exec from the
    // start: the supervisor may fork while the broker runs.
    const int fd = ::socket(ip.is_v4() ? AF_INET : AF_INET6, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, IPPROTO_TCP);
    if (fd < 0) {
      last_error_ = std::string("socket: ") + std::strerror(errno);
      connect_next();
      return;
    }
    upstream_.assign(ip.is_v4() ? tcp::v4() : tcp::v6(), fd, ec);
    if (ec) {
      ::close(fd);
      last_error_ = "socket: " + ec.message();
      connect_next();
      return;
    }
    upstream_.async_connect(
        tcp::endpoint(ip, static_cast<unsigned short>(dial_port)), wrap([this, address](std::error_code error) {
          if (phase_ != phase::connecting) return;
          if (error) {
            last_error_ = address + ": " + error.message();
            socks_code_ = error == asio::error::connection_refused    ? socks5_reply_code::connection_refused
                          : error == asio::error::network_unreachable ? socks5_reply_code::network_unreachable
                          : error == asio::error::host_unreachable    ? socks5_reply_code::host_unreachable
                                                                      : socks5_reply_code::general_failure;
            connect_next();
            return;
          }
          connected(address);
        }));
  }

  void on_connect_timeout() {
    if (phase_ != phase::connecting) return;
    const std::string step = resolving_ ? "resolving " + record_.host : "connecting to " + destination_text();
    fail_upstream(504, socks5_reply_code::host_unreachable,
                  "timeout: " + step + " took longer than " + ms_text(limits().connect_timeout));
  }

  // A destination the rules allowed could not be reached: action
  // "unreachable", with the deciding rule and the reason.
  void fail_upstream(int status, std::uint8_t socks_code, const std::string& reason) {
    refuse(socks() ? socks5_reply(socks_code) : http_refusal(status, "cordon: " + printable(reason) + "\n"),
           outcome::unreachable, reason);
  }

  void connected(const std::string& address) {
    // Second check, on the connected socket: a connection to one of this
    // host's own addresses has that same address as its source (the local
    // route), whatever getifaddrs said a moment ago.
    if (!core_.options.hooks.dial) {
      std::error_code local_error, peer_error;
      const auto local = upstream_.local_endpoint(local_error);
      const auto peer = upstream_.remote_endpoint(peer_error);
      if (!local_error && !peer_error && local.address() == peer.address() &&
          !opened_by_ip_rule(core_.options.policy, address, record_.port)) {
        refuse_by_rule("connects to this host's own address " + address + "; only an IP rule can allow it");
        return;
      }
    }
    disarm();
    record_.address = address;
    checked_address_ = address;
    outcome_ = outcome::allowed;
    std::error_code ec;
    upstream_.set_option(tcp::no_delay(true), ec);
    if (socks()) {
      const auto local = upstream_.local_endpoint(ec);
      to_client_ = ec ? socks5_reply(socks5_reply_code::succeeded)
                      : socks5_reply(socks5_reply_code::succeeded, local.address().to_string(), local.port());
    }
    if (record_.rule && rule_terminates(core_, *record_.rule)) return terminate_tls();
    if (record_.protocol != "http_forward" && !ip_literal_) {  // decided for a name
      answer_then_check_first_bytes();
      return;
    }
    start_relay();
  }

  // A rule with tls "terminate" (terminate.h): the TLS and every request
  // on it are served there, which also sets this connection's action and
  // reason; this session keeps the sockets and records.
  // Only TLS can be terminated: plain HTTP to such a rule is refused.
  void terminate_tls() {
    const bool hello = !to_upstream_.empty() && static_cast<unsigned char>(to_upstream_[0]) == 0x16;
    if (!(record_.protocol == "http_connect" || socks() || (transparent() && !peeked_http_ && hello))) {
      refuse_by_rule("the rule terminates TLS: plain connections to it are refused");
      return;
    }
    phase_ = phase::relaying;
    record_.tls = "terminate";
    start_terminated({&core_, &client_, &upstream_, std::move(to_client_), std::move(to_upstream_), *record_.rule,
                      record_.host, record_.port, &record_, &outcome_, wrap([this] { finish(); }),
                      wrap([this] { report_decided(); }), shared_from_this()});
    report_decided();
  }

  // ---- the check of a connection decided for a name -------------------------

  // A tunnel opened for a name (its client is told yes first: 200, SOCKS5
  // success), or a transparent connection decided by a name: the client's
  // bytes are judged before any reach the destination (client_judge.h): a
  // ClientHello must name that host (SNI), every HTTP request must ask for
  // it; another protocol passes. A client that sends nothing within the
  // request timeout is refused: nothing it could send later would be judged.
  void answer_then_check_first_bytes() {
    phase_ = phase::checking;
    record_.address.clear();  // set again once the check passes
    judge_.emplace(record_.host, !(transparent() && record_.name_source == "dns"), limits().max_request_bytes);
    arm(limits().request_timeout, &session::on_check_timeout);
    asio::async_write(client_, asio::buffer(to_client_), wrap([this](std::error_code ec, std::size_t) {
                        if (phase_ != phase::checking) return;
                        if (ec) return finish();
                        to_client_.clear();
                        std::string first;
                        first.swap(to_upstream_);
                        check_first_bytes(first);
                      }));
  }

  void check_first_bytes(std::string_view fresh) {
    if (!fresh.empty()) checked_bytes_ = true;
    std::string out;
    switch (judge_->feed(fresh, out)) {
      case judge_verdict::refuse:
        refuse({}, judge_->malformed() ? outcome::malformed : outcome::denied, judge_->reason());
        return;
      case judge_verdict::more:
        read_check();
        return;
      case judge_verdict::pass_rest:
        judge_.reset();  // TLS after its ClientHello, another protocol: relayed unread
        [[fallthrough]];
      case judge_verdict::relay:  // HTTP: the judge stays on the client's direction
        to_upstream_ = std::move(out);
        pass_check();
        return;
    }
  }

  void read_check() {
    if (check_buffer_.empty()) check_buffer_.resize(4096);
    client_.async_read_some(asio::buffer(check_buffer_), wrap([this](std::error_code ec, std::size_t n) {
                              if (phase_ != phase::checking) return;
                              if (ec && !checked_bytes_) return finish();  // an allowed tunnel that carried nothing
                              if (ec) {
                                // Closed in the middle of its ClientHello or request head: nothing the
                                // check could judge was sent, and nothing was relayed (docs/network.md).
                                outcome_ = outcome::malformed;
                                record_.reason = "tunnel: the client closed before its TLS ClientHello or HTTP request head was complete";
                                return finish();
                              }
                              check_first_bytes(std::string_view(check_buffer_.data(), n));
                            }));
  }

  void pass_check() {
    disarm();
    record_.address = checked_address_;
    std::vector<char>().swap(check_buffer_);
    start_relay();
  }

  void on_check_timeout() {
    if (phase_ != phase::checking) return;
    refuse({}, outcome::malformed,
           checked_bytes_ ? "tunnel: no complete TLS ClientHello or HTTP request head within " +
                                ms_text(limits().request_timeout)
                          : "tunnel: the client sent nothing within " + ms_text(limits().request_timeout) +
                                " (a connection for a name carries only what the broker can judge)");
  }

  // ---- relaying ------------------------------------------------------------

  // Two independent directions, each read -> write -> read, so a slow reader
  // on either side holds back only its own direction of its own connection.
  // EOF on one side is passed on as shutdown(SHUT_WR) to the other; the
  // connection ends when both directions have ended, or at the first error.
  void start_relay() {
    phase_ = phase::relaying;
    report_decided();
    std::vector<char>().swap(buffer_);  // the request was copied where it is still needed
    std::error_code blocking;
    client_.native_non_blocking(true, blocking);
    if (!blocking) upstream_.native_non_blocking(true, blocking);
    // Both directions start on base buffers (relay_memory.h); the client's
    // receive buffer was set when it was accepted (broker.cpp).
    apply_tier(client_.native_handle(), upstream_.native_handle(), base_tier);
    apply_tier(upstream_.native_handle(), client_.native_handle(), base_tier);
    use_splice_ = limits().splice && !blocking && to_destination_pipe_.open(base_tier.pipe) &&
                  to_client_pipe_.open(base_tier.pipe);
    if (!use_splice_) {
      to_destination_pipe_.close();
      to_client_pipe_.close();
      to_destination_buffer_.resize(std::max<std::size_t>(limits().relay_buffer_bytes, 1));
      to_client_buffer_.resize(std::max<std::size_t>(limits().relay_buffer_bytes, 1));
    }
    if (to_upstream_.empty()) {
      next_client();
    } else {
      write_upstream(asio::buffer(to_upstream_));  // payload that came with the request
    }
    if (to_client_.empty()) {
      next_upstream();
    } else {  // the broker's own reply (200, SOCKS5 success): not destination bytes
      asio::async_write(client_, asio::buffer(to_client_), wrap([this](std::error_code ec, std::size_t) {
                          if (phase_ != phase::relaying) return;
                          if (ec) {
                            finish();
                            return;
                          }
                          next_upstream();
                        }));
    }
  }

  void next_client() {
    if (judge_) return read_client();
    if (use_splice_ && !to_destination_buffer_.empty()) {  // judged until now: splice from here, buffers freed
      std::vector<char>().swap(to_destination_buffer_);
      std::string().swap(judged_);
    }
    use_splice_ ? pump(client_, upstream_, to_destination_pipe_, true) : read_client();
  }
  void next_upstream() { use_splice_ ? pump(upstream_, client_, to_client_pipe_, false) : read_upstream(); }

  // One direction with splice(2): source -> pipe -> sink, until the source
  // would block (wait for it to be readable), the sink would block (wait for
  // it to be writable), end of stream (pass it on as a shutdown) or an error.
  template <class From, class To>
  void pump(From& from, To& to, splice_pipe& pipe, bool to_destination) {
    std::uint64_t& moved = to_destination ? record_.bytes_sent : record_.bytes_received;
    while (true) {
      if (pipe.held > 0) {
        const ssize_t n = ::splice(pipe.read_fd, nullptr, to.native_handle(), nullptr, pipe.held,
                                   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
        if (n > 0) {
          pipe.held -= static_cast<std::size_t>(n);
          moved += static_cast<std::uint64_t>(n);
          if (moved >= bulk_after_bytes) promote(to_destination);
          continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) {
          to.async_wait(asio::socket_base::wait_write, wrap([this, to_destination](std::error_code ec) {
                          if (phase_ != phase::relaying) return;
                          if (ec) return finish();
                          to_destination ? next_client() : next_upstream();
                        }));
          return;
        }
        return finish();
      }
      const ssize_t n = ::splice(from.native_handle(), nullptr, pipe.write_fd, nullptr, pipe.capacity,
                                 SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
      if (n > 0) {
        pipe.held = static_cast<std::size_t>(n);
        continue;
      }
      if (n == 0) {  // end of stream: pass it on, keep the other direction
        std::error_code ignored;
        to.shutdown(asio::socket_base::shutdown_send, ignored);
        bool& done = to_destination ? client_done_ : destination_done_;
        done = true;
        if (client_done_ && destination_done_) finish();
        return;
      }
      if (errno == EINTR) continue;
      if (errno == EAGAIN) {
        from.async_wait(asio::socket_base::wait_read, wrap([this, to_destination](std::error_code ec) {
                          if (phase_ != phase::relaying) return;
                          if (ec) return finish();
                          to_destination ? next_client() : next_upstream();
                        }));
        return;
      }
      return finish();
    }
  }

  // A direction that has moved bulk_after_bytes gets bulk buffers, once, if
  // the run's budget has room (relay_memory.h); otherwise it keeps its base
  // buffers. The grant is what the kernel really gave, read back.
  void promote(bool to_destination) {
    bool& tried = to_destination ? promoted_to_destination_ : promoted_to_client_;
    if (tried) return;
    tried = true;
    const std::uint64_t reservation = bulk_tier.held_at_most();
    if (!core_.budget.take(reservation, limits().memory_budget_bytes)) return;
    const int reads = to_destination ? client_.native_handle() : upstream_.native_handle();
    const int writes = to_destination ? upstream_.native_handle() : client_.native_handle();
    apply_tier(reads, writes, bulk_tier);
    splice_pipe& pipe = to_destination ? to_destination_pipe_ : to_client_pipe_;
    if (use_splice_) pipe.resize(bulk_tier.pipe);
    const std::uint64_t given = std::min<std::uint64_t>(
        reservation, socket_buffer_bytes(reads, SO_RCVBUF) + socket_buffer_bytes(writes, SO_SNDBUF) +
                         (use_splice_ ? pipe.capacity : 0));
    core_.budget.give(reservation - given);
    granted_ += given;
  }

  // The client's direction through user space: relayed as read, or, on an
  // HTTP connection for a name, each request judged before it goes
  // (client_judge.h), a refused one ending the connection with that decision.
  void read_client() {
    if (to_destination_buffer_.empty()) to_destination_buffer_.resize(std::max<std::size_t>(limits().relay_buffer_bytes, 1));
    client_.async_read_some(asio::buffer(to_destination_buffer_), wrap([this](std::error_code ec, std::size_t n) {
                              if (phase_ != phase::relaying) return;
                              if (ec == asio::error::eof) {
                                upstream_.shutdown(tcp::socket::shutdown_send, ec);
                                client_done_ = true;
                                if (destination_done_) finish();
                                return;
                              }
                              if (ec) return finish();
                              if (!judge_) return write_upstream(asio::buffer(to_destination_buffer_.data(), n));
                              judged_.clear();
                              const auto verdict = judge_->feed(std::string_view(to_destination_buffer_.data(), n), judged_);
                              if (verdict == judge_verdict::refuse) {
                                outcome_ = judge_->malformed() ? outcome::malformed : outcome::denied;
                                record_.reason = printable(judge_->reason() + " (request " +
                                                           std::to_string(judge_->requests() + 1) + " of the connection)");
                                return finish();
                              }
                              if (verdict == judge_verdict::pass_rest) judge_.reset();  // relayed unread from here
                              if (judged_.empty()) return next_client();
                              write_upstream(asio::buffer(judged_));
                            }));
  }

  void write_upstream(asio::const_buffer data) {
    asio::async_write(upstream_, data, wrap([this](std::error_code ec, std::size_t n) {
                        if (phase_ != phase::relaying) return;
                        record_.bytes_sent += n;
                        if (record_.bytes_sent >= bulk_after_bytes) promote(true);
                        if (ec) {
                          finish();
                          return;
                        }
                        next_client();
                      }));
  }

  void read_upstream() {
    upstream_.async_read_some(asio::buffer(to_client_buffer_), wrap([this](std::error_code ec, std::size_t n) {
                                if (phase_ != phase::relaying) return;
                                if (ec == asio::error::eof) {
                                  client_.shutdown(stream::socket::shutdown_send, ec);
                                  destination_done_ = true;
                                  if (client_done_) finish();
                                  return;
                                }
                                if (ec) {
                                  finish();
                                  return;
                                }
                                write_client(n);
                              }));
  }

  void write_client(std::size_t n) {
    asio::async_write(client_, asio::buffer(to_client_buffer_.data(), n),
                      wrap([this](std::error_code ec, std::size_t sent) {
                        if (phase_ != phase::relaying) return;
                        record_.bytes_received += sent;
                        if (record_.bytes_received >= bulk_after_bytes) promote(false);
                        if (ec) {
                          finish();
                          return;
                        }
                        read_upstream();
                      }));
  }

  // ---- ending --------------------------------------------------------------

  // Sends `response` (may be empty), then closes. `result` and `reason` go
  // into the record; a denial also sets its action to "deny".
  void refuse(std::string response, outcome result, const std::string& reason) {
    outcome_ = result;
    record_.reason = printable(reason);
    phase_ = phase::closing;
    report_decided();
    std::error_code ec;
    resolver_.cancel();
    upstream_.close(ec);
    client_.cancel(ec);  // a pending read of the request
    arm(linger_time, &session::finish);
    if (response.empty()) {
      finish();
      return;
    }
    to_client_ = std::move(response);
    asio::async_write(client_, asio::buffer(to_client_), wrap([this](std::error_code error, std::size_t) {
                        if (phase_ != phase::closing) return;
                        if (error) {
                          finish();
                          return;
                        }
                        std::error_code ignored;
                        client_.shutdown(stream::socket::shutdown_send, ignored);
                        drain();
                      }));
  }

  // Reads and drops what the client still sends until it closes: closing a
  // socket with unread data makes the kernel reset the connection, which can
  // destroy the response before the client read it (RFC 9112 §9.6).
  void drain() {
    if (to_destination_buffer_.empty()) to_destination_buffer_.resize(4096);
    client_.async_read_some(asio::buffer(to_destination_buffer_), wrap([this](std::error_code ec, std::size_t n) {
                              if (phase_ != phase::closing) return;
                              drained_ += n;
                              if (ec || drained_ > linger_bytes) {
                                finish();
                                return;
                              }
                              drain();
                            }));
  }

  // The connection is decided and still open: reported as it stands, so
  // that a broker that dies now still leaves its decision (core.h).
  void report_decided() {
    record_.duration_ms = std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - accepted_).count();
    core_.decided(entry_id_, record_, outcome_);
  }

  // Closes everything and records the connection, once.
  void finish() {
    if (phase_ == phase::done) return;
    phase_ = phase::done;
    std::error_code ec;
    disarm();
    resolver_.cancel();
    client_.close(ec);
    upstream_.close(ec);
    to_destination_pipe_.close();
    to_client_pipe_.close();
    core_.budget.give(granted_);
    granted_ = 0;
    record_.duration_ms = std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - accepted_).count();
    core_.record(std::move(record_), outcome_, entry_id_);
    core_.sessions.erase(this);  // last: may release the last owner but one (the caller holds another)
  }

  core& core_;
  stream::socket client_;
  tcp::socket upstream_;
  tcp::resolver resolver_;
  asio::steady_timer timer_;
  std::uint64_t timer_generation_ = 0;
  const steady::time_point accepted_;
  const std::uint64_t entry_id_;  // in the streamed evidence (core.h)
  phase phase_ = phase::request;
  network_connection record_;
  outcome outcome_ = outcome::error;

  std::vector<char> buffer_;  // the request
  std::size_t filled_ = 0;
  std::size_t consumed_ = 0;  // SOCKS5: the greeting, once answered
  bool greeted_ = false;
  http_request http_;

  original_destination original_;  // transparent: where the command connected
  bool waited_for_first_bytes_ = false;
  bool peeked_http_ = false;  // transparent: the client sent an HTTP request head
  bool ip_literal_ = false;   // the destination was named by an IP literal
  std::string checked_address_;   // the dialed address, recorded once the TLS check passed
  std::vector<char> check_buffer_;
  std::optional<client_judge> judge_;  // a connection for a name: the client's bytes judged (client_judge.h)
  std::string judged_;                 // what the judge let go, being written
  bool checked_bytes_ = false;         // the client sent bytes during the check

  bool resolving_ = false;
  std::vector<std::string> candidates_;
  std::size_t next_candidate_ = 0;
  std::string last_error_ = "no address";
  std::uint8_t socks_code_ = socks5_reply_code::general_failure;

  std::string to_upstream_;  // sent to the destination before relaying
  std::string to_client_;    // sent to the client: SOCKS5 method, 200, SOCKS5 reply, an error response
  std::vector<char> to_destination_buffer_;
  std::vector<char> to_client_buffer_;
  bool use_splice_ = false;
  splice_pipe to_destination_pipe_;
  splice_pipe to_client_pipe_;
  bool client_done_ = false;
  bool destination_done_ = false;
  bool promoted_to_destination_ = false;  // promote() was tried for that direction
  bool promoted_to_client_ = false;
  std::uint64_t granted_ = 0;  // bytes of the run's memory budget this connection holds
  std::size_t drained_ = 0;
};

void start_session(core& c, stream::socket client) {
  auto s = std::make_shared<session>(c, std::move(client));
  c.sessions.emplace(s.get(), s);
  s->start();
}

void start_transparent_session(core& c, stream::socket client, std::optional<original_destination> original) {
  auto s = std::make_shared<session>(c, std::move(client));
  c.sessions.emplace(s.get(), s);
  s->start_transparent(std::move(original));
}

void stop_session(session& s) { s.stop_now(); }

std::uint64_t session_held_bytes(session& s) { return s.held_bytes(); }

}  // namespace cordon::broker::detail
