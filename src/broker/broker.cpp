// src/broker/broker.cpp — the network broker (broker.h): its thread, its
// listeners, start and stop. Each accepted connection is a session
// (session.cpp); parsing and deciding are pure functions (http_request.h,
// socks5.h, decision.h).
#include "broker/broker.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <asio.hpp>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "broker/core.h"
#include "broker/serve.h"

namespace cordon::broker {
namespace {

using namespace detail;

// How long to wait before accepting again when out of descriptors or memory.
constexpr std::chrono::milliseconds accept_backoff{50};
// How often the relays' memory is sampled for the evidence's peak.
constexpr std::chrono::milliseconds memory_sample_interval{100};

// Adds up what the broker holds now and keeps the peak (relay_memory.h):
// every session and DNS-over-TCP session, the DNS cache, the DNS server's
// queries waiting upstream, the evidence it keeps and the reports it has
// not sent yet. What new work reserved until now is counted in it: the
// reservations start again from here (core::admit).
void sample_memory(core& c) {
  std::uint64_t held = c.dns.held_bytes();
  if (c.dns_service) held += dns_server_held_bytes(*c.dns_service);
  for (const auto& entry : c.sessions) held += session_held_bytes(*entry.second);
  for (const auto& entry : c.dns_sessions) held += dns_tcp_session_held_bytes(*entry.second);
  if (c.link_held_bytes) held += c.link_held_bytes();
  c.held_at_sample = held;
  c.admitted_since_sample = 0;
  const std::lock_guard<std::mutex> lock(c.mutex);
  for (const auto& entry : c.evidence.connections) held += connection_held_bytes(entry);
  c.held_at_sample = held;
  c.evidence.memory_peak_bytes = std::max(c.evidence.memory_peak_bytes, held);
}

void sample_memory_periodically(core& c) {
  c.memory_sampler->expires_after(memory_sample_interval);
  c.memory_sampler->async_wait([&c](std::error_code ec) {
    if (ec || c.stopping) return;
    sample_memory(c);  // also without sessions: a DNS flood holds the cache
    if (c.options.hooks.memory_sampled) c.options.hooks.memory_sampled();
    sample_memory_periodically(c);
  });
}

// Where the supervisor noted that a transparently routed connection was
// going: the table's entry for its source port (destination_table.h).
std::optional<original_destination> original_of(core& c, int fd) {
  if (!c.options.destinations) return std::nullopt;
  sockaddr_storage peer{};
  socklen_t length = sizeof peer;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &length) != 0) return std::nullopt;
  int port = -1;
  if (peer.ss_family == AF_INET) port = ntohs(reinterpret_cast<const sockaddr_in*>(&peer)->sin_port);
  if (peer.ss_family == AF_INET6) port = ntohs(reinterpret_cast<const sockaddr_in6*>(&peer)->sin6_port);
  if (port <= 0) return std::nullopt;
  return c.options.destinations->take(std::to_string(port));
}

// Past the broker's budget a new connection is refused before anything of
// it is read: closed, and recorded as denied (with where it was going, for
// one routed transparently), the reason saying "broker_budget".
network_connection over_budget_record(core& c, listener& l, int fd) {
  network_connection record;
  record.protocol = l.transparent ? "transparent" : "unknown";
  if (l.transparent) {
    if (auto original = original_of(c, fd)) {
      const bool v6 = original->address.find(':') != std::string::npos;
      record.original = (v6 ? "[" + original->address + "]" : original->address) + ":" +
                        std::to_string(original->port);
      record.host = original->address;
      record.port = original->port;
    }
  }
  record.reason = c.budget_refusal() + "; the connection was closed unread";
  return record;
}

void accepted(core& c, listener& l, int fd) {
  const bool too_many = c.sessions.size() + c.dns_sessions.size() >= c.options.limits.max_connections;
  if (too_many || !c.admit(connection_reservation)) {
    auto record = too_many ? network_connection{} : over_budget_record(c, l, fd);
    ::close(fd);
    if (too_many) {
      c.record_failure("too many connections: the limit is " + std::to_string(c.options.limits.max_connections));
    } else {
      c.record(std::move(record), outcome::denied);
    }
    return;
  }
  std::error_code ec;
  stream::socket client(c.io);
  client.assign(l.protocol, fd, ec);
  if (ec) {
    ::close(fd);
    c.record_failure("cannot use an accepted connection: " + ec.message());
    return;
  }
  if (l.protocol.family() != AF_UNIX) {
    client.set_option(asio::ip::tcp::no_delay(true), ec);
  }
  // Until its request is decided a client holds no more than a relay's base
  // receive buffer (relay_memory.h), not the kernel's default (tcp_rmem[1],
  // which autotuning may grow): a command that opens many connections and
  // fills them before they are decided holds the broker to base buffers too.
  apply_tier(fd, -1, base_tier);
  if (l.transparent) {
    auto original = original_of(c, fd);
    if (original && c.dns_address && original->address == c.dns_address->address &&
        original->port == c.dns_address->port) {
      start_dns_tcp_session(c, std::move(client));
      return;
    }
    start_transparent_session(c, std::move(client), std::move(original));
    return;
  }
  start_session(c, std::move(client));
}

// Waits for readiness and accepts with accept4() rather than asio's accept,
// which does not set close-on-exec atomically.
void accept_next(core& c, listener& l) {
  l.socket.async_wait(acceptor::wait_read, [&c, &l](std::error_code ec) {
    if (ec || c.stopping) return;  // closed by stop()
    for (int burst = 0; burst < 64; ++burst) {
      const int fd = ::accept4(l.socket.native_handle(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0) {
        const int e = errno;
        if (e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM) {
          l.retry.expires_after(accept_backoff);
          l.retry.async_wait([&c, &l](std::error_code error) {
            if (!error && !c.stopping) accept_next(c, l);
          });
          return;
        }
        if (e == EAGAIN || e == EWOULDBLOCK || e == EINTR || e == ECONNABORTED || e == EPROTO) break;
        c.record_failure(std::string("listener stopped: accept: ") + std::strerror(e));
        return;
      }
      try {
        accepted(c, l, fd);
      } catch (const std::exception& e) {
        c.record_failure(std::string("internal error: ") + e.what());
      }
    }
    accept_next(c, l);
  });
}

// At stop(): a connection the kernel already completed but the broker had
// not accepted yet would vanish unrecorded when the listener closes. Accept
// and record each one (the command did try to connect), then close it.
void drain_backlog(core& c, listener& l) {
  for (;;) {
    const int fd = ::accept4(l.socket.native_handle(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO) continue;
      return;  // EAGAIN: the queue is empty (or the listener is unusable)
    }
    ::close(fd);
    c.record_failure("broker stopped before the connection was served");
  }
}

// Why `fd` cannot be served, or empty.
std::string listener_problem(int fd, int& family, int& err) {
  int type = 0;
  int listening = 0;
  socklen_t length = sizeof type;
  if (::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &length) != 0) {
    err = errno;
    return "not a socket";
  }
  if (type != SOCK_STREAM) return "not a stream socket";
  length = sizeof listening;
  if (::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &length) != 0 || listening == 0) {
    return "not a listening socket";
  }
  sockaddr_storage address{};
  length = sizeof address;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    err = errno;
    return "getsockname failed";
  }
  family = address.ss_family;
  if (family != AF_INET && family != AF_INET6 && family != AF_UNIX) return "not a TCP or unix socket";
  return {};
}

}  // namespace

namespace detail {

// The broker's thread. An exception that escapes a handler anyway is
// recorded, and the loop goes on.
void run_loop(core& c) {
  // splice(2) into a socket its peer has reset raises SIGPIPE (the kernel's
  // splice-to-socket path sends without MSG_NOSIGNAL): blocked on this
  // thread, it ends one relay with EPIPE instead of the whole process.
  sigset_t pipe_signal;
  ::sigemptyset(&pipe_signal);
  ::sigaddset(&pipe_signal, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);
  for (;;) {
    try {
      c.io.run();
      return;
    } catch (const std::exception& e) {
      c.record_failure(std::string("internal error: ") + e.what());
    } catch (...) {
      c.record_failure("internal error: unknown exception");
    }
  }
}

result<std::unique_ptr<core>> prepare_core(broker_options options, std::vector<int> listener_fds) {
  const int dns_fd = options.dns_socket;
  auto close_from = [&](std::size_t first) {
    for (std::size_t i = first; i < listener_fds.size(); ++i) ::close(listener_fds[i]);
    if (first == 0 && dns_fd >= 0) ::close(dns_fd);
  };
  std::vector<int> families;
  for (std::size_t i = 0; i < listener_fds.size(); ++i) {
    int family = 0;
    int err = 0;
    const std::string problem = listener_problem(listener_fds[i], family, err);
    if (!problem.empty()) {
      close_from(0);
      return make_error(error_code::launch_failed,
                        "network broker: listener descriptor " + std::to_string(listener_fds[i]) + ": " + problem, {},
                        err);
    }
    families.push_back(family);
  }

  if (!options.hooks.resolve && !options.test_routes.resolve_to.empty()) {
    options.hooks.resolve = [to = options.test_routes.resolve_to](const std::string&) { return to; };
  }
  if (!options.hooks.dial && options.test_routes.dial_port > 0) {
    options.hooks.dial = [port = options.test_routes.dial_port](const std::string&, int) {
      return std::make_pair(std::string("127.0.0.1"), port);
    };
  }
  auto c = std::make_unique<core>();
  c->evidence.listeners = options.listener_names;
  c->evidence.memory_budget_bytes = options.limits.memory_budget_bytes;
  c->options = std::move(options);
  for (std::size_t i = 0; i < listener_fds.size(); ++i) {
    const int fd = listener_fds[i];
    ::fcntl(fd, F_SETFD, FD_CLOEXEC);
    const stream protocol(families[i], families[i] == AF_UNIX ? 0 : IPPROTO_TCP);
    auto l = std::make_unique<listener>(c->io, protocol);
    l->transparent = static_cast<int>(i) == c->options.transparent_listener;
    std::error_code ec;
    l->socket.assign(protocol, fd, ec);
    if (!ec) l->socket.non_blocking(true, ec);
    if (ec) {
      if (!l->socket.is_open()) ::close(fd);
      close_from(i + 1);
      if (dns_fd >= 0) ::close(dns_fd);
      return make_error(error_code::launch_failed,
                        "network broker: listener descriptor " + std::to_string(fd) + ": " + ec.message(), {},
                        ec.value());
    }
    c->listeners.push_back(std::move(l));
  }
  if (dns_fd >= 0) {
    const std::string problem = start_dns_server(*c, dns_fd);
    if (!problem.empty()) {
      return make_error(error_code::launch_failed, "network broker: DNS socket: " + problem);
    }
  }
  for (auto& l : c->listeners) accept_next(*c, *l);
  c->memory_sampler = std::make_unique<asio::steady_timer>(c->io);
  sample_memory_periodically(*c);
  c->work.emplace(c->io.get_executor());
  return c;
}

void begin_stop(core& c) {
  c.stopping = true;
  std::error_code ec;
  for (auto& l : c.listeners) {
    drain_backlog(c, *l);
    l->socket.close(ec);
    l->retry.cancel();
  }
  if (c.dns_service) stop_dns_server(*c.dns_service);
  c.memory_sampler->cancel();
  sample_memory(c);  // what the connections still open hold at the end
  auto sessions = std::move(c.sessions);
  c.sessions.clear();
  for (auto& entry : sessions) stop_session(*entry.second);
  auto dns_sessions = std::move(c.dns_sessions);
  c.dns_sessions.clear();
  for (auto& entry : dns_sessions) stop_dns_tcp_session(*entry.second);
  c.work.reset();
}

}  // namespace detail

struct network_broker::state {
  std::unique_ptr<core> c;
  std::thread thread;
  std::mutex stop_mutex;
  bool stopped = false;
};

network_broker::network_broker(std::unique_ptr<state> s) : state_(std::move(s)) {}

network_broker::~network_broker() { stop(); }

result<std::unique_ptr<network_broker>> network_broker::start(broker_options options, std::vector<int> listener_fds) {
  auto c = prepare_core(std::move(options), std::move(listener_fds));
  if (!c) return std::move(c).error_value();
  auto s = std::make_unique<state>();
  s->c = std::move(*c);
  try {
    s->thread = std::thread([c = s->c.get()] { run_loop(*c); });
  } catch (const std::system_error& e) {
    return make_error(error_code::launch_failed, std::string("network broker: cannot start its thread: ") + e.what(),
                      {}, e.code().value());
  }
  return std::unique_ptr<network_broker>(new network_broker(std::move(s)));
}

void network_broker::stop() {
  if (!state_) return;
  const std::lock_guard<std::mutex> lock(state_->stop_mutex);
  if (state_->stopped) return;
  state_->stopped = true;
  core& c = *state_->c;
  asio::post(c.io, [&c] { begin_stop(c); });
  // run() returns once the cancelled operations have completed. (A system
  // resolution in flight cannot be cancelled: asio's resolver thread
  // finishes its getaddrinfo() first.)
  if (state_->thread.joinable()) state_->thread.join();
}

network_evidence network_broker::evidence() const {
  const std::lock_guard<std::mutex> lock(state_->c->mutex);
  return state_->c->evidence;
}

}  // namespace cordon::broker
