// broker.h — the network broker of `filtered` mode.
//
// The command's own network namespace has no route out; the broker, run by
// the supervisor outside the sandbox, is its only way out. It accepts
// connections on listening sockets the sandbox's PID 1 created inside the
// sandbox (a TCP listener on the namespace's loopback and a unix socket in
// the sandbox's /dev) and handed over, so every accepted connection is
// served here directly, with no byte-copying hop inside the sandbox.
//
// Protocols, told apart by the first byte (0x05 is SOCKS5, anything else
// HTTP):
//  - HTTP CONNECT host:port (RFC 9110 §9.3.6): any TCP tunnel, HTTPS included;
//    no TLS interception.
//  - HTTP forward proxying of absolute-form "http://" requests (RFC 9112
//    §3.2.2): one request per client connection; the request goes out in
//    origin form with "Connection: close" and without Proxy-* headers.
//  - SOCKS5 (RFC 1928) CONNECT with IPv4, IPv6 or hostname addressing, no
//    authentication.
//
// Decisions: match_host_rules() on the name the command asked for (the
// design page, "Network rule semantics"). The broker resolves allowed names
// itself. An address in a loopback, private, link-local, unspecified,
// shared (100.64/10), multicast or other non-public range is used only when
// an allow rule whose pattern is that very IP literal decides it: an `allow`
// for a name (or `*`) never reaches the host's own services, so DNS cannot
// be used to rebind into them (docs/network.md).
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cordon/launch.h"
#include "cordon/policy.h"
#include "cordon/result.h"

namespace cordon::broker {

struct broker_limits {
  std::size_t max_connections = 512;            // concurrent client connections; more are refused
  std::size_t max_request_bytes = 16 * 1024;    // an HTTP request head or a SOCKS5 request, bytes
  std::chrono::milliseconds request_timeout{10000};  // from accept until the request is complete
  std::chrono::milliseconds connect_timeout{10000};  // resolution plus connect to the destination
  std::size_t relay_buffer_bytes = 64 * 1024;   // per direction per connection
};

// Test seams. Production leaves both empty: names are resolved with the
// system resolver (getaddrinfo through asio) and addresses dialed as they are.
struct broker_hooks {
  // Returns the IP literals `host` resolves to (empty: resolution failed).
  std::function<std::vector<std::string>(const std::string& host)> resolve;
  // Maps the address the broker decided to connect to onto the endpoint it
  // really dials ("127.0.0.1", port). Used by tests to send every allowed
  // connection to a local server; the evidence keeps the decided address.
  std::function<std::pair<std::string, int>(const std::string& address, int port)> dial;
};

struct broker_options {
  network_policy policy;  // validated; mode filtered
  broker_limits limits;
  broker_hooks hooks;
  std::vector<std::string> listener_names;  // for the evidence, one per listener, same order
};

// A running broker. It owns one thread running an asio io_context.
class network_broker {
 public:
  // Starts serving `listener_fds` (sockets already bound and listening, TCP
  // or unix stream; ownership passes to the broker, also on error).
  // Errors: error_code::launch_failed when a descriptor is not a listening
  // stream socket or the thread cannot start.
  static result<std::unique_ptr<network_broker>> start(broker_options options, std::vector<int> listener_fds);

  // Stops accepting, closes every connection and joins the thread. Idempotent.
  void stop();

  // What was decided so far; complete after stop(). Thread-safe.
  network_evidence evidence() const;

  ~network_broker();
  network_broker(const network_broker&) = delete;
  network_broker& operator=(const network_broker&) = delete;

 private:
  struct state;
  explicit network_broker(std::unique_ptr<state> s);
  std::unique_ptr<state> state_;
};

// Is `address` (an IP literal) outside the public unicast space: loopback,
// unspecified, private (RFC 1918, fc00::/7), link-local, shared (100.64/10),
// multicast, broadcast, reserved (240/4), "this network" (0/8), site-local
// (fec0::/10), or an IPv4-mapped or IPv4-compatible form of one? Such an
// address is reached only through an IP-literal allow rule. Documentation
// ranges (192.0.2/24, 2001:db8::/32, ...) count as public.
bool is_non_public_address(const std::string& address);

}  // namespace cordon::broker
