// src/broker/terminate.cpp — TLS termination and the HTTP/1.1 request loop
// of a terminated connection (terminate.h). asio's SSL layer over OpenSSL,
// as a coroutine on the broker's io_context: each step is awaited in order,
// which is what an HTTP exchange is (request head, body, response head,
// body), and the broker's thread is never blocked. A WebSocket upgrade a
// rule allows ends the exchange: after the 101 both directions run at once
// (upgraded_relay.h).
#include "broker/terminate.h"

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/redirect_error.hpp>
#include <asio/ssl.hpp>
#include <asio/use_awaitable.hpp>
#include <charconv>
#include <chrono>
#include <optional>
#include <strings.h>

#include "broker/http_exchange.h"
#include "broker/relay_memory.h"
#include "broker/tls_authority.h"
#include "broker/upgraded_relay.h"
#include "broker/upstream_trust.h"

namespace cordon::broker::detail {

namespace {

using asio::awaitable;
using asio::use_awaitable;
using tcp = asio::ip::tcp;

constexpr std::size_t max_requests_recorded = 256;
constexpr std::size_t relay_chunk = 64 * 1024;

// The client socket, with the bytes the session already read from it (a
// ClientHello that decided a transparent connection) read again first, so
// OpenSSL sees the whole handshake.
class prefixed_stream {
 public:
  using executor_type = stream::socket::executor_type;
  using lowest_layer_type = stream::socket::lowest_layer_type;

  prefixed_stream(stream::socket& s, std::string prefix) : socket_(&s), prefix_(std::move(prefix)) {}
  executor_type get_executor() { return socket_->get_executor(); }
  lowest_layer_type& lowest_layer() { return socket_->lowest_layer(); }
  const lowest_layer_type& lowest_layer() const { return socket_->lowest_layer(); }

  template <class Buffers, class Token>
  auto async_read_some(const Buffers& buffers, Token&& token) {
    return asio::async_initiate<Token, void(std::error_code, std::size_t)>(
        [this](auto handler, const Buffers& to) {
          if (prefix_.empty()) {
            socket_->async_read_some(to, std::move(handler));
            return;
          }
          const std::size_t n = asio::buffer_copy(to, asio::buffer(prefix_));
          prefix_.erase(0, n);
          auto executor = asio::get_associated_executor(handler, socket_->get_executor());
          asio::post(executor, [h = std::move(handler), n]() mutable { h(std::error_code(), n); });
        },
        token, buffers);
  }

  template <class Buffers, class Token>
  auto async_write_some(const Buffers& buffers, Token&& token) {
    return socket_->async_write_some(buffers, std::forward<Token>(token));
  }

 private:
  stream::socket* socket_;
  std::string prefix_;
};

// Cancels what is pending on `socket` when `after` passes before the
// deadline is destroyed: a handshake step that stalls (a client that never
// sends its ClientHello, a destination that never answers one) then ends
// with operation_aborted, and expired() says why. The expiry handler may
// already be queued when the step completes: it checks `armed`, which the
// destructor clears, so it never touches a socket whose step is over (or
// whose session has gone).
class deadline {
 public:
  template <class Socket>
  deadline(asio::io_context& io, std::chrono::milliseconds after, Socket& socket)
      : timer_(io), state_(std::make_shared<flags>()) {
    timer_.expires_after(after);
    timer_.async_wait([state = state_, socket = &socket](std::error_code ec) {
      if (ec || !state->armed) return;
      state->expired = true;
      std::error_code ignored;
      socket->cancel(ignored);
    });
  }
  ~deadline() {
    state_->armed = false;
    timer_.cancel();
  }
  deadline(const deadline&) = delete;
  deadline& operator=(const deadline&) = delete;
  bool expired() const { return state_->expired; }

 private:
  struct flags {
    bool armed = true;
    bool expired = false;
  };
  asio::steady_timer timer_;
  std::shared_ptr<flags> state_;
};

using client_tls = asio::ssl::stream<prefixed_stream>;
using upstream_tls = asio::ssl::stream<tcp::socket&>;

// The end of a stream, cleanly or not: a peer may close without
// close_notify once its message is complete.
bool is_end(const std::error_code& ec) {
  return ec == asio::error::eof || ec == asio::ssl::error::stream_truncated;
}

bool is_ip_literal(const std::string& host) {
  return host.find(':') != std::string::npos || host.find_first_not_of("0123456789.") == std::string::npos;
}

// An asio context that shares (does not take) an SSL_CTX the authority owns.
asio::ssl::context shared_context(SSL_CTX* ctx) {
  SSL_CTX_up_ref(ctx);
  return asio::ssl::context(ctx);
}

// The upstream context: peer verification against `ca_file` or the default
// paths, TLS 1.2+, ALPN http/1.1. The in-thread broker and the unit tests make
// one per connection (a test CA file may change); the confined broker's was
// read before confinement and is parsed at its first use (upstream_trust.h).
// Null when the confined broker's trust store holds no certificate; `why`
// then says so.
std::unique_ptr<asio::ssl::context> upstream_context(const tls_options& opts, std::string& why) {
  if (opts.upstream) {
    ssl_ctx_st* ctx = opts.upstream->context(why);
    return ctx != nullptr ? std::make_unique<asio::ssl::context>(shared_context(ctx)) : nullptr;
  }
  auto ctx = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_client);
  set_upstream_client_options(ctx->native_handle());
  if (opts.upstream_ca_file.empty()) {
    ctx->set_default_verify_paths();
  } else {
    ctx->load_verify_file(opts.upstream_ca_file);
  }
  return ctx;
}

class exchange_loop {
 public:
  explicit exchange_loop(terminated_connection& t) : t_(t), rule_(t.c->options.policy.rules.at(t.rule)) {}

  awaitable<void> run() {
    std::error_code ec;
    // The client's handshake (with the broker's answer before it) has the
    // request timeout, as a plain request has (docs/network.md): a client
    // that sends no ClientHello, or stalls in the middle of the handshake,
    // does not hold its connection until the run ends.
    const auto client_limit = t_.c->options.limits.request_timeout;
    const std::string client_too_slow = "the client's TLS handshake did not complete within " + ms_text(client_limit);
    std::optional<deadline> client_deadline(std::in_place, t_.c->io, client_limit, *t_.client);
    if (!t_.reply.empty()) {
      co_await asio::async_write(*t_.client, asio::buffer(t_.reply), asio::redirect_error(use_awaitable, ec));
      if (ec && client_deadline->expired()) {
        settle(outcome::malformed, client_too_slow);
        co_return;
      }
      if (ec) {  // as a request that never came (session.cpp): no valid request
        settle(outcome::malformed, "the client closed before its TLS handshake: " + ec.message());
        co_return;
      }
    }
    auto& opts = t_.c->options.tls;
    if (!opts.authority) {
      settle(outcome::error, "internal error: this run has no certificate authority");
      co_return;
    }
    auto server = opts.authority->server_context(t_.host);
    if (!server) {
      settle(outcome::error, "internal error: no certificate for " + t_.host + ": " + server.error_value().message);
      co_return;
    }
    auto server_ctx = shared_context(*server);
    client_tls client(prefixed_stream(*t_.client, std::move(t_.prefix)), server_ctx);
    co_await client.async_handshake(asio::ssl::stream_base::server, asio::redirect_error(use_awaitable, ec));
    const bool client_expired = client_deadline->expired();
    client_deadline.reset();
    if (ec && client_expired) {  // as a request not complete in time (session.cpp): no valid request
      settle(outcome::malformed, client_too_slow);
      co_return;
    }
    if (ec) {  // not TLS, a client that refuses the run's CA (an alert), or one that gave up
      settle(outcome::malformed, "the client's TLS handshake failed: " + ec.message());
      co_return;
    }
    if (const char* sni = SSL_get_servername(client.native_handle(), TLSEXT_NAMETYPE_host_name)) {
      std::string name(sni);
      std::transform(name.begin(), name.end(), name.begin(), [](unsigned char ch) { return std::tolower(ch); });
      if (!name.empty() && name.back() == '.') name.pop_back();
      if (name != t_.host) {  // as the tunnel's SNI check (docs/network.md): refused by the rule
        const std::string why = "TLS server name " + printable(sni) + " does not match the host " + t_.host;
        settle(outcome::denied, why);
        co_await refuse(client, 403, why, nullptr);
        co_return;
      }
    }
    std::string untrusted;
    auto upstream_ctx = upstream_context(opts, untrusted);
    if (!upstream_ctx) {
      settle(outcome::error, untrusted);
      co_await refuse(client, 502, untrusted, nullptr);
      co_return;
    }
    upstream_tls upstream(*t_.upstream, *upstream_ctx);
    SSL* ssl = upstream.native_handle();
    if (is_ip_literal(t_.host)) {
      X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), t_.host.c_str());
    } else {
      SSL_ctrl(ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name, const_cast<char*>(t_.host.c_str()));
      SSL_set1_host(ssl, t_.host.c_str());
    }
    // The destination's handshake has the connect timeout, as resolving and
    // connecting to it have: a destination that accepts and never answers
    // the ClientHello is unreachable (504), as one that never accepts.
    const auto upstream_limit = t_.c->options.limits.connect_timeout;
    std::optional<deadline> upstream_deadline(std::in_place, t_.c->io, upstream_limit, *t_.upstream);
    co_await upstream.async_handshake(asio::ssl::stream_base::client, asio::redirect_error(use_awaitable, ec));
    const bool upstream_expired = upstream_deadline->expired();
    upstream_deadline.reset();
    if (ec && upstream_expired) {
      const std::string why = "timeout: the TLS handshake with " + t_.host + ":" + std::to_string(t_.port) +
                              " took longer than " + ms_text(upstream_limit);
      settle(outcome::unreachable, why);  // before the client can see it
      co_await refuse(client, 504, why, nullptr);
      co_return;
    }
    if (ec) {
      const long verify = SSL_get_verify_result(ssl);
      const std::string why = verify != X509_V_OK ? X509_verify_cert_error_string(verify) : ec.message();
      settle(outcome::unreachable, "upstream TLS failed: " + why);  // before the client can see it
      co_await refuse(client, 502, "upstream TLS to " + t_.host + " failed: " + why, nullptr);
      co_return;
    }
    *t_.result = outcome::allowed;  // both ends are TLS: from now on each request is decided on its own
    t_.record->reason.clear();
    t_.decided();
    co_await serve(client, upstream);
    co_await close_client(client);
  }

  // An exception ended the exchange: before both handshakes completed it is
  // the broker's own failure; after, the connection was served (`allow`)
  // and the reason says how it ended (an I/O error on either side).
  void failed(const std::string& what) {
    if (*t_.result == outcome::allowed) {
      settle(outcome::allowed, what);
    } else {
      settle(outcome::error, "internal error: " + what);
    }
  }

 private:
  // Requests one after another until either side ends the connection.
  awaitable<void> serve(client_tls& client, upstream_tls& upstream) {
    const std::size_t limit = std::max<std::size_t>(t_.c->options.limits.max_request_bytes, 1);
    while (true) {
      std::error_code ec;
      const std::size_t n = co_await asio::async_read_until(client, asio::dynamic_buffer(from_client_, limit),
                                                            "\r\n\r\n", asio::redirect_error(use_awaitable, ec));
      if (ec == asio::error::not_found) {
        const std::string why = "request head larger than " + std::to_string(limit) + " bytes";
        settle(outcome::allowed, why + " (431)");  // no request entry: its method and path are unknown
        co_await refuse(client, 431, why, nullptr);
        co_return;
      }
      if (ec && is_end(ec) && from_client_.empty()) co_return;  // the client is done
      if (ec) throw std::system_error(ec);
      const http_message_head request = parse_request_head(std::string_view(from_client_).substr(0, n));
      from_client_.erase(0, n);
      network_request entry;
      entry.method = printable(request.method);
      entry.host = t_.host;
      entry.path = printable(request.path);
      if (!request.ok) {
        co_await refuse(client, 400, "malformed request: " + request.error, &entry);
        co_return;
      }
      if (const std::string why = judge_request(rule_, t_.host, t_.port, request); !why.empty()) {
        co_await refuse(client, 403, why, &entry);
        co_return;
      }
      std::vector<injected_header> inject;
      for (const auto& credential : t_.c->options.tls.credentials) {
        if (credential.host != t_.host) continue;
        inject.push_back({credential.header, credential.value});
        entry.injected.push_back(credential.header);
      }
      http_message_head forwarded = request;
      // Expect: 100-continue is answered here: the client's body follows at once.
      const auto expect = header_value(request.headers, "Expect");
      if (expect) {
        forwarded.headers.erase(std::remove_if(forwarded.headers.begin(), forwarded.headers.end(),
                                               [](const http_header& h) {
                                                 return h.name.size() == 6 && ::strncasecmp(h.name.c_str(), "Expect", 6) == 0;
                                               }),
                                forwarded.headers.end());
        static const std::string go_on = "HTTP/1.1 100 Continue\r\n\r\n";
        co_await asio::async_write(client, asio::buffer(go_on), use_awaitable);
      }
      const std::string head = upstream_request_head(forwarded, inject);
      for (const auto& h : entry.injected) note_injection(h);
      // Recorded now and completed as it goes (see refuse()).
      entry.action = "allow";
      const std::size_t index = keep(std::move(entry));
      co_await asio::async_write(upstream, asio::buffer(head), asio::redirect_error(use_awaitable, ec));
      if (ec) {
        const std::string detail = ec.message();
        co_await no_response(client, index, "sending the request failed", detail);
        co_return;
      }
      add_sent(index, head.size());
      add_sent(index, co_await relay_body(client, from_client_, upstream, request.framing, request.length));
      bool close = request.close;
      while (true) {  // 1xx responses come before the final one
        const std::size_t m = co_await asio::async_read_until(upstream, asio::dynamic_buffer(from_upstream_, 64 * 1024),
                                                              "\r\n\r\n", asio::redirect_error(use_awaitable, ec));
        if (ec) {
          // A named string: g++ 12 destroys a temporary made in a
          // conditional expression inside co_await twice.
          std::string detail = ec.message();
          if (ec == asio::error::not_found) detail = "its head is larger than 65536 bytes";
          co_await no_response(client, index, "no response", detail);
          co_return;
        }
        const http_message_head response =
            parse_response_head(std::string_view(from_upstream_).substr(0, m), request.method);
        if (!response.ok) {
          co_await no_response(client, index, "malformed response", response.error);
          co_return;
        }
        if (response.status == 101) {  // the only 1xx that ends the exchange
          if (const std::string why = judge_switch(request, response); !why.empty()) {
            co_await no_response(client, index, "unusable response", why);
            co_return;
          }
          co_await relay_websocket(client, upstream, index, m);
          co_return;
        }
        if (auto* kept = slot(index)) kept->status = response.status;
        co_await asio::async_write(client, asio::buffer(from_upstream_.data(), m), use_awaitable);
        from_upstream_.erase(0, m);
        add_received(index, m);
        if (response.status >= 100 && response.status < 200) continue;
        add_received(index, co_await relay_body(upstream, from_upstream_, client, response.framing, response.length));
        close = close || response.close;
        break;
      }
      if (close) co_return;
    }
  }

  // The destination switched to a WebSocket (judge_switch): its 101 head
  // (the first `head` bytes of from_upstream_) goes to the client, then the
  // bytes go both ways unjudged until either side ends (upgraded_relay.h).
  // The request's entry says so before the client can see the 101, and
  // counts what follows as it goes.
  awaitable<void> relay_websocket(client_tls& client, upstream_tls& upstream, std::size_t index, std::size_t head) {
    if (auto* kept = slot(index)) {
      kept->status = 101;
      kept->upgraded = "websocket";
    }
    co_await asio::async_write(client, asio::buffer(from_upstream_.data(), head), use_awaitable);
    from_upstream_.erase(0, head);
    add_received(index, head);
    // A relayed tunnel's base buffers (relay_memory.h), both ways: a side
    // that stops reading holds the broker to them.
    apply_tier(t_.client->native_handle(), t_.upstream->native_handle(), base_tier);
    apply_tier(t_.upstream->native_handle(), t_.client->native_handle(), base_tier);
    const upgraded_end end = co_await relay_upgraded(
        t_.c->io, client, upstream, *t_.client, *t_.upstream, std::move(from_client_), std::move(from_upstream_),
        relay_chunk, [this, index](bool to_destination, std::size_t n) { add_upgraded(index, to_destination, n); },
        is_end);
    if (end.error) {
      const std::string side = end.client_first ? "the client" : t_.host;
      settle(outcome::allowed, "WebSocket relay ended: " + side + ": " + end.error.message());
    }
  }

  // Copies one body from `from` (bytes already read in `pending`) to `to`.
  // Returns the bytes written.
  template <class From, class To>
  awaitable<std::uint64_t> relay_body(From& from, std::string& pending, To& to, body_framing framing,
                                      std::uint64_t length) {
    switch (framing) {
      case body_framing::none: co_return 0;
      case body_framing::length: co_return co_await relay_exactly(from, pending, to, length);
      case body_framing::until_close: {
        std::uint64_t moved = 0;
        while (true) {
          if (!pending.empty()) {
            co_await asio::async_write(to, asio::buffer(pending), use_awaitable);
            moved += pending.size();
            pending.clear();
          }
          std::error_code ec;
          pending.resize(relay_chunk);
          const std::size_t n = co_await from.async_read_some(asio::buffer(pending), asio::redirect_error(use_awaitable, ec));
          pending.resize(n);
          if (ec && is_end(ec)) {
            if (!pending.empty()) continue;
            co_return moved;
          }
          if (ec) throw std::system_error(ec);
        }
      }
      case body_framing::chunked: {
        std::uint64_t moved = 0;
        while (true) {  // chunk-size [; ext] CRLF, data CRLF; ... 0 CRLF, trailers, CRLF
          const std::size_t line = co_await asio::async_read_until(from, asio::dynamic_buffer(pending, 64 * 1024),
                                                                   "\r\n", use_awaitable);
          std::uint64_t size = 0;
          const auto [end, ec] = std::from_chars(pending.data(), pending.data() + line, size, 16);
          if (ec != std::errc() || end == pending.data()) throw std::runtime_error("a malformed chunk size");
          moved += co_await relay_exactly(from, pending, to, line);
          if (size == 0) break;
          moved += co_await relay_exactly(from, pending, to, size + 2);
        }
        while (true) {  // trailer fields, then the empty line
          const std::size_t line = co_await asio::async_read_until(from, asio::dynamic_buffer(pending, 64 * 1024),
                                                                   "\r\n", use_awaitable);
          moved += co_await relay_exactly(from, pending, to, line);
          if (line == 2) break;
        }
        co_return moved;
      }
    }
    co_return 0;
  }

  template <class From, class To>
  awaitable<std::uint64_t> relay_exactly(From& from, std::string& pending, To& to, std::uint64_t count) {
    std::uint64_t left = count;
    while (left > 0) {
      if (pending.empty()) {
        pending.resize(static_cast<std::size_t>(std::min<std::uint64_t>(left, relay_chunk)));
        const std::size_t n = co_await from.async_read_some(asio::buffer(pending), use_awaitable);
        pending.resize(n);
      }
      const std::size_t take = static_cast<std::size_t>(std::min<std::uint64_t>(left, pending.size()));
      co_await asio::async_write(to, asio::buffer(pending.data(), take), use_awaitable);
      pending.erase(0, take);
      left -= take;
    }
    co_return count;
  }

  // The destination gave no usable response head for the request at `index`:
  // the request stays `allow` (it was forwarded) with the 502 the client
  // gets; the connection is `unreachable`.
  // Reasons: "WHAT: DETAIL" (the request), "WHAT from HOST: DETAIL" (the connection).
  awaitable<void> no_response(client_tls& client, std::size_t index, const std::string& what,
                              const std::string& detail) {
    if (auto* kept = slot(index)) {
      kept->status = 502;
      kept->reason = printable(what + ": " + detail);
    }
    const std::string why = what + " from " + t_.host + ": " + detail;
    settle(outcome::unreachable, why);
    co_await refuse(client, 502, why, nullptr);
  }

  // The connection's action and reason, set once and before the client can
  // see them (terminate.h); later calls change nothing.
  void settle(outcome result, const std::string& why) {
    if (settled_) return;
    settled_ = true;
    *t_.result = result;
    t_.record->reason = printable("terminated TLS: " + why);
    t_.decided();
  }

  // The broker's own answer; the connection ends after it.
  awaitable<void> refuse(client_tls& client, int status, const std::string& why, network_request* entry) {
    std::vector<http_header> headers;
    headers.push_back({"X-Cordon-Rule", std::to_string(t_.rule)});
    const std::string response = http_response(status, "cordon: refused: " + why + " [rule " + std::to_string(t_.rule) + "]\n", headers);
    // Recorded before the client can read the answer: once it has, the run
    // may end and the broker stop at any moment.
    if (entry) {
      entry->status = status;
      entry->action = "deny";
      entry->reason = printable(why);
      entry->injected.clear();
      keep(std::move(*entry));
    }
    std::error_code ec;
    co_await asio::async_write(client, asio::buffer(response), asio::redirect_error(use_awaitable, ec));
    co_await close_client(client);
  }

  // close_notify, waiting at most a moment for the client's own.
  awaitable<void> close_client(client_tls& client) {
    asio::steady_timer give_up(t_.c->io);
    give_up.expires_after(std::chrono::milliseconds(1000));
    give_up.async_wait([socket = t_.client](std::error_code ec) {
      std::error_code ignored;
      if (!ec) socket->cancel(ignored);
    });
    std::error_code ec;
    co_await client.async_shutdown(asio::redirect_error(use_awaitable, ec));
    give_up.cancel();
  }

  // Appends `entry`; returns its index (past the end when not kept).
  std::size_t keep(network_request entry) {
    auto& list = t_.record->requests;
    if (list.size() >= max_requests_recorded) return max_requests_recorded;
    list.push_back(std::move(entry));
    return list.size() - 1;
  }
  // The entry at `index`, while the session's record still holds it (null
  // once the session recorded itself, or when it was not kept).
  network_request* slot(std::size_t index) {
    auto& list = t_.record->requests;
    return index < list.size() ? &list[index] : nullptr;
  }
  void add_sent(std::size_t index, std::uint64_t n) {
    t_.record->bytes_sent += n;
    if (auto* kept = slot(index)) kept->bytes_sent += n;
  }
  void add_received(std::size_t index, std::uint64_t n) {
    t_.record->bytes_received += n;
    if (auto* kept = slot(index)) kept->bytes_received += n;
  }

  void add_upgraded(std::size_t index, bool to_destination, std::uint64_t n) {
    (to_destination ? t_.record->bytes_sent : t_.record->bytes_received) += n;
    if (auto* kept = slot(index)) (to_destination ? kept->upgraded_bytes_sent : kept->upgraded_bytes_received) += n;
  }

  void note_injection(const std::string& header) {
    const std::lock_guard<std::mutex> lock(t_.c->mutex);
    auto& list = t_.c->evidence.injections;
    auto it = std::find_if(list.begin(), list.end(),
                           [&](const network_injection& i) { return i.host == t_.host && i.header == header; });
    if (it == list.end()) it = list.insert(list.end(), network_injection{t_.host, header, 0});
    ++it->count;
  }

  terminated_connection& t_;
  const network_rule& rule_;
  std::string from_client_;
  std::string from_upstream_;
  bool settled_ = false;
};

awaitable<void> serve_terminated(terminated_connection t) {
  exchange_loop loop(t);  // rules.at(t.rule) holds: the session checked rule_terminates()
  try {
    co_await loop.run();
  } catch (const std::exception& e) {
    loop.failed(e.what());
  }
  t.done();
}

}  // namespace

bool rule_terminates(const core& c, std::size_t index) {
  const auto& rules = c.options.policy.rules;
  return index < rules.size() && rules[index].tls == tls_mode::terminate;
}

void start_terminated(terminated_connection t) {
  // What a stop before the handshakes end records (session.cpp stop_now()).
  *t.result = outcome::error;
  t.record->reason = "terminated TLS: the run ended before both TLS handshakes completed";
  auto& io = t.c->io;
  asio::co_spawn(io, serve_terminated(std::move(t)), asio::detached);
}

}  // namespace cordon::broker::detail
