// broker_test_support.h — what the running-broker tests share: loopback
// listeners, a threaded test server, blocking client helpers with timeouts
// (a bug fails a test instead of hanging it), and a broker started on a
// listener of the test's own. Every socket here is on 127.0.0.1: the
// broker's hooks resolve names to documentation addresses and dial the
// local server, so no test traffic leaves loopback.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "../../thread_state.h"
#include "broker/broker.h"
#include "broker/socks5.h"

namespace cordon::broker::test {

using namespace std::chrono_literals;

inline constexpr auto io_timeout = std::chrono::milliseconds(3000);

// A descriptor that closes itself.
class fd_guard {
 public:
  fd_guard() = default;
  explicit fd_guard(int fd) : fd_(fd) {}
  fd_guard(fd_guard&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  fd_guard& operator=(fd_guard&& o) noexcept {
    reset(std::exchange(o.fd_, -1));
    return *this;
  }
  fd_guard(const fd_guard&) = delete;
  fd_guard& operator=(const fd_guard&) = delete;
  ~fd_guard() { reset(); }
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

inline void set_io_timeouts(int fd, std::chrono::milliseconds t = io_timeout) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(t.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((t.count() % 1000) * 1000);
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

inline sockaddr_in loopback(int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

// A TCP socket listening on 127.0.0.1 on a free port.
inline fd_guard tcp_listener(int& port, int backlog = 128) {
  fd_guard fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in a = loopback(0);
  if (fd.get() < 0 || ::bind(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::listen(fd.get(), backlog) != 0) {
    return fd_guard();
  }
  socklen_t len = sizeof a;
  ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&a), &len);
  port = ntohs(a.sin_port);
  return fd;
}

inline fd_guard connect_tcp(int port) {
  fd_guard fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in a = loopback(port);
  if (fd.get() < 0 || ::connect(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return fd_guard();
  set_io_timeouts(fd.get());
  return fd;
}

inline bool send_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// Reads until `marker` has arrived, EOF, an error or the socket's timeout.
inline std::string recv_until(int fd, std::string_view marker, std::size_t max = 1 << 20) {
  std::string out;
  char buf[4096];
  while (out.size() < max && (marker.empty() || out.find(marker) == std::string::npos)) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

// Reads exactly `n` bytes (fewer on EOF, error or timeout).
inline std::string recv_exact(int fd, std::size_t n) {
  std::string out;
  char buf[4096];
  while (out.size() < n) {
    const ssize_t got = ::recv(fd, buf, std::min(sizeof buf, n - out.size()), 0);
    if (got <= 0) break;
    out.append(buf, static_cast<std::size_t>(got));
  }
  return out;
}

inline std::string recv_all(int fd) { return recv_until(fd, ""); }

// Is the peer's side closed: does the next read report EOF (or a reset)
// within the socket's timeout?
inline bool reads_eof(int fd) {
  char c;
  const ssize_t n = ::recv(fd, &c, 1, 0);
  return n == 0 || (n < 0 && (errno == ECONNRESET || errno == EPIPE));
}

// Raises the soft descriptor limit to the hard one (a relayed connection
// costs the test process eight: client, server side, the broker's two
// sockets and four pipe ends). False when even that is too low.
inline bool enough_descriptors(rlim_t needed) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return false;
  limit.rlim_cur = limit.rlim_max;
  if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) return false;
  return limit.rlim_cur >= needed;
}

// A server on 127.0.0.1 that runs `handler(fd)` on a thread per connection;
// the descriptor is closed when the handler returns.
class test_server {
 public:
  explicit test_server(std::function<void(int)> handler, int backlog = 128) : handler_(std::move(handler)) {
    listener_ = tcp_listener(port_, backlog);
    thread_ = std::thread([this] { accept_loop(); });
  }
  ~test_server() { stop(); }
  test_server(const test_server&) = delete;
  test_server& operator=(const test_server&) = delete;
  int port() const { return port_; }
  int connections() const { return accepted_.load(); }

  void stop() {
    if (stopping_.exchange(true)) return;
    ::shutdown(listener_.get(), SHUT_RDWR);  // wakes accept()
    if (thread_.joinable()) thread_.join();
    std::vector<std::thread> workers;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      workers.swap(workers_);
    }
    for (auto& t : workers) t.join();
  }

 private:
  void accept_loop() {
    for (;;) {
      const int fd = ::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) {
        if (stopping_) return;
        if (errno == EINTR || errno == ECONNABORTED) continue;
        return;
      }
      ++accepted_;
      set_io_timeouts(fd);
      std::lock_guard<std::mutex> lock(mutex_);
      workers_.emplace_back([this, fd] {
        handler_(fd);
        ::close(fd);
      });
    }
  }

  std::function<void(int)> handler_;
  fd_guard listener_;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> accepted_{0};
  std::thread thread_;
  std::mutex mutex_;
  std::vector<std::thread> workers_;
};

// Echoes everything until EOF, then closes its sending side.
inline void echo(int fd) {
  char buf[16384];
  for (;;) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    if (!send_all(fd, std::string_view(buf, static_cast<std::size_t>(n)))) break;
  }
  ::shutdown(fd, SHUT_WR);
}

// ---- policies and brokers -------------------------------------------------

inline network_rule rule(std::string host, rule_action action, std::optional<int> port = std::nullopt) {
  network_rule r;
  r.host = std::move(host);
  r.action = action;
  r.port = port;
  return r;
}

inline network_policy filtered(std::vector<network_rule> rules, rule_action default_action = rule_action::deny) {
  network_policy p;
  p.mode = network_mode::filtered;
  p.rules = std::move(rules);
  p.default_action = default_action;
  return p;
}

// Every name resolves to one public documentation address (RFC 5737).
inline std::vector<std::string> resolve_to_documentation(const std::string&) { return {"203.0.113.7"}; }

// Every decided address is dialed at the local server instead.
inline std::function<std::pair<std::string, int>(const std::string&, int)> dial_local(int port) {
  return [port](const std::string&, int) { return std::make_pair(std::string("127.0.0.1"), port); };
}

struct running_broker {
  std::unique_ptr<network_broker> broker;
  int port = 0;
};

inline broker_hooks local_hooks(int server_port) {
  broker_hooks hooks;
  hooks.resolve = resolve_to_documentation;
  hooks.dial = dial_local(server_port);
  return hooks;
}

// The broker's periodic memory samples (broker_hooks::memory_sampled),
// counted: a test that holds a state waits for samples of it, not for a
// fixed time.
struct memory_samples {
  std::shared_ptr<std::atomic<int>> count = std::make_shared<std::atomic<int>>(0);
  // Counts into `hooks`.
  broker_hooks& attach(broker_hooks& hooks) const {
    hooks.memory_sampled = [count = count] { count->fetch_add(1); };
    return hooks;
  }
  // Waits until `n` whole samples were taken after this call (a sample in
  // progress when it is made is not counted). False after `timeout`.
  bool wait_for(int n, std::chrono::milliseconds timeout = std::chrono::seconds(10)) const {
    const int until = count->load() + n + 1;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (count->load() < until) {
      if (std::chrono::steady_clock::now() >= deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));  // polling a condition
    }
    return true;
  }
};

// With `transparent`, the one listener is the transparent one and that is
// its destination table (destination_table.h).
// The options of a broker whose one listener is 127.0.0.1:`port` (the
// transparent one when `transparent` is given), in-process or confined alike.
inline broker_options loopback_broker_options(network_policy policy, broker_hooks hooks, broker_limits limits, int port,
                                              std::shared_ptr<destination_table> transparent) {
  broker_options options;
  options.policy = std::move(policy);
  options.hooks = std::move(hooks);
  options.limits = limits;
  options.listener_names = {"127.0.0.1:" + std::to_string(port)};
  if (transparent) {
    options.transparent_listener = 0;
    options.destinations = std::move(transparent);
  }
  return options;
}

inline running_broker start_broker(network_policy policy, broker_hooks hooks, broker_limits limits = {},
                                   std::shared_ptr<destination_table> transparent = nullptr) {
  running_broker out;
  fd_guard listener = tcp_listener(out.port);
  broker_options options =
      loopback_broker_options(std::move(policy), std::move(hooks), limits, out.port, std::move(transparent));
  auto started = network_broker::start(std::move(options), {listener.release()});
  if (started) out.broker = std::move(*started);
  return out;
}

// Waits until the broker has recorded at least `total` connections.
inline network_evidence wait_for_total(const network_broker& broker, std::uint64_t total,
                                       std::chrono::milliseconds timeout = io_timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto e = broker.evidence();
    if (e.total >= total || std::chrono::steady_clock::now() > deadline) return e;
    std::this_thread::sleep_for(1ms);
  }
}

// ---- protocol helpers ------------------------------------------------------

// A DNS query as a stub resolver sends it: ID `id`, RD, one question for
// `dotted` of `type`, class IN (RFC 1035 §4.1).
inline std::string dns_query(const std::string& dotted, std::uint16_t type, std::uint16_t id = 0x1234) {
  std::string q{static_cast<char>(id >> 8), static_cast<char>(id & 0xff)};
  q += std::string("\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00", 10);
  std::size_t start = 0;
  while (start <= dotted.size()) {
    const auto dot = dotted.find('.', start);
    const std::string label = dotted.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    q += static_cast<char>(label.size());
    q += label;
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  q += std::string("\x00", 1);
  q += static_cast<char>(type >> 8);
  q += static_cast<char>(type & 0xff);
  q += std::string("\x00\x01", 2);
  return q;
}

inline std::string connect_request(const std::string& authority, const std::string& extra = "") {
  return "CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n\r\n" + extra;
}

// The status code of an HTTP response, or 0.
inline int status_of(const std::string& response) {
  if (response.rfind("HTTP/1.1 ", 0) != 0 || response.size() < 12) return 0;
  return std::atoi(response.substr(9, 3).c_str());
}

// The value of the first header `name` (exact case), or nullopt.
inline std::optional<std::string> header_of(const std::string& response, const std::string& name) {
  const auto head_end = response.find("\r\n\r\n");
  const std::string head = response.substr(0, head_end);
  const auto at = head.find("\r\n" + name + ": ");
  if (at == std::string::npos) return std::nullopt;
  const auto start = at + 4 + name.size();
  return head.substr(start, head.find("\r\n", start) - start);
}

// SOCKS5 CONNECT request bytes for a domain name, IPv4 or IPv6 destination.
inline std::string socks_domain_request(const std::string& host, int port) {
  std::string r{0x05, 0x01, 0x00, 0x03, static_cast<char>(host.size())};
  r += host;
  r += static_cast<char>((port >> 8) & 0xff);
  r += static_cast<char>(port & 0xff);
  return r;
}

inline std::string socks_ip_request(const std::string& literal, int port, std::uint8_t command = 0x01) {
  std::string r{0x05, static_cast<char>(command), 0x00};
  unsigned char raw[16];
  if (inet_pton(AF_INET, literal.c_str(), raw) == 1) {
    r += '\x01';
    r.append(reinterpret_cast<const char*>(raw), 4);
  } else if (inet_pton(AF_INET6, literal.c_str(), raw) == 1) {
    r += '\x04';
    r.append(reinterpret_cast<const char*>(raw), 16);
  }
  r += static_cast<char>((port >> 8) & 0xff);
  r += static_cast<char>(port & 0xff);
  return r;
}

// Greets with "no authentication", sends `request`, returns the reply code
// (-1: no or a short answer). A reply with ATYP IPv4 is 10 bytes.
inline int socks_handshake(int fd, const std::string& request, std::string* reply_out = nullptr) {
  if (!send_all(fd, std::string{0x05, 0x01, 0x00})) return -1;
  if (recv_exact(fd, 2) != std::string{0x05, 0x00}) return -1;
  if (!send_all(fd, request)) return -1;
  std::string reply = recv_exact(fd, 4);
  if (reply.size() < 4) return -1;
  const std::size_t rest = reply[3] == 0x04 ? 18 : 6;
  reply += recv_exact(fd, rest);
  if (reply_out != nullptr) *reply_out = reply;
  return static_cast<unsigned char>(reply[1]);
}

// TLS ClientHello records for the broker's SNI checks (first_bytes.h).
inline std::string be16(std::size_t v) { return {static_cast<char>((v >> 8) & 0xff), static_cast<char>(v & 0xff)}; }

// A ClientHello record as a client sends it: TLS 1.2 record version, one
// cipher suite, and the extensions given (each already encoded).
inline std::string client_hello(const std::string& extensions, bool with_extensions = true) {
  std::string body = "\x03\x03" + std::string(32, 'r');  // legacy_version, random
  body += std::string("\x00", 1);                         // session id
  body += be16(2) + "\x13\x01";                           // cipher suites
  body += std::string("\x01\x00", 2);                     // compression: null
  if (with_extensions) body += be16(extensions.size()) + extensions;
  const std::string handshake =
      std::string("\x01", 1) + std::string(1, '\0') + be16(body.size()) + body;  // type, 24-bit length
  return std::string("\x16\x03\x01", 3) + be16(handshake.size()) + handshake;
}

inline std::string sni_extension(const std::string& name) {
  const std::string entry = std::string("\x00", 1) + be16(name.size()) + name;
  const std::string list = be16(entry.size()) + entry;
  return be16(0) + be16(list.size()) + list;
}

inline std::string other_extension() { return be16(0x002b) + be16(3) + "\x02\x03\x04"; }  // supported_versions

}  // namespace cordon::broker::test
