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
// Decisions: match_host_rules() on the name the command asked for (docs/policy.md,
// "How a destination is decided"). The broker resolves allowed names
// itself. An address in a loopback, private, link-local, unspecified,
// shared (100.64/10), multicast or other non-public range is used only when
// an allow rule whose pattern is that very IP literal decides it: an `allow`
// for a name (or `*`) never reaches the host's own services, so DNS cannot
// be used to rebind into them (docs/network.md).
//
// Refusals: HTTP 403 with "X-Cordon-Rule: <index>|default" (denied by a rule,
// the default action or the address check), 400 (malformed request or
// invalid destination), 431 (head over max_request_bytes), 408 (no complete
// request within request_timeout), 502 (resolution or connection failed),
// 504 (connect_timeout); always "Connection: close". Past the memory
// budget (broker_limits::memory_budget_bytes) a new connection is closed
// unread, before any of this. SOCKS5 replies 0x02
// (refused by the rules), 0x04 (resolution failed, timeout), 0x05
// (refused by the destination), 0x07 (not CONNECT), 0x08, 0x01.
//
// Evidence: one network_connection per accepted connection, written when it
// ends (or at stop()). bytes_sent counts what was written to the destination
// (for http_forward the rewritten request head too); bytes_received what was
// relayed back, not the broker's own responses.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "broker/destination_table.h"
#include "broker/tls_options.h"
#include "cordon/launch.h"
#include "cordon/policy.h"
#include "cordon/result.h"

namespace cordon::broker {

struct broker_limits {
  std::size_t max_connections = 512;            // concurrent client connections; more are refused
  std::size_t max_request_bytes = 16 * 1024;    // an HTTP request head or a SOCKS5 request, bytes
  std::chrono::milliseconds request_timeout{10000};  // from accept until the request is complete
  std::chrono::milliseconds connect_timeout{10000};  // resolution plus connect to the destination
  // Relay with splice(2) through a pipe per direction (bytes stay in the
  // kernel); false, or when no pipe can be had, through user-space buffers
  // of relay_buffer_bytes per direction per connection.
  bool splice = true;
  std::size_t relay_buffer_bytes = 64 * 1024;
  // The run's broker budget (bytes; docs/network.md, "Memory budget").
  // Everything the broker holds is counted against it: sessions (the
  // kernel's queues of their sockets, pipes, buffers, held request bytes),
  // DNS-over-TCP sessions, queries waiting upstream, the DNS cache, the
  // evidence it keeps or has not sent yet. New work (an accepted connection,
  // an allowed DNS query) is admitted only while that, and what was admitted
  // since it was last added up, leaves room for it; past it a connection is
  // closed unread and a query answered REFUSED, each recorded as denied with
  // a reason starting "broker_budget: ". Relays: every relayed direction
  // starts on 64 KiB socket buffers and a 64 KiB pipe (at most 320 KiB held),
  // and one that has moved 256 KiB gets 1 MiB ones (at most 5 MiB held, less
  // where net.core.rmem_max/wmem_max are lower) while the grants fit in this
  // budget; otherwise it keeps its base buffers.
  std::uint64_t memory_budget_bytes = 64ULL * 1024 * 1024;
  // A transparent connection whose client sends nothing this long (a
  // protocol where the server speaks first) is decided without its bytes:
  // by the name the sandbox resolved to its address, else by its address.
  // Decided by a name, its bytes are still judged before any go, and a
  // client silent for request_timeout is refused (client_judge.h).
  std::chrono::milliseconds first_bytes_wait{1000};
};

// Test seams. Production leaves both empty: names are resolved with the
// system resolver (getaddrinfo through asio) and addresses dialed as they are.
// Both are called on the broker's thread, synchronously: they must be quick,
// and must not call stop().
struct broker_hooks {
  // Returns the IP literals `host` (normalized) resolves to (empty:
  // resolution failed).
  std::function<std::vector<std::string>(const std::string& host)> resolve;
  // Maps the address the broker decided to connect to onto the endpoint it
  // really dials ("127.0.0.1", port). Used by tests to send every allowed
  // connection to a local server; the evidence keeps the decided address.
  std::function<std::pair<std::string, int>(const std::string& address, int port)> dial;
  // Resolution done elsewhere, asynchronously: the confined broker has no
  // files to resolve with (no resolv.conf, hosts or NSS modules), so it asks
  // the supervisor (src/linux/broker_process.h). Called on the broker's
  // thread; `done(addresses, problem)` must be called once, on that thread
  // (addresses empty: resolution failed, `problem` says why). Used when set
  // and `resolve` is not.
  using resolved_callback = std::function<void(std::vector<std::string> addresses, std::string problem)>;
  std::function<void(const std::string& host, int port, resolved_callback done)> resolve_async;
  // Called on the broker's thread after each periodic memory sample, once
  // the evidence's memory_peak_bytes holds it. Tests count the samples of a
  // state they hold instead of sleeping; unset in the supervisor.
  std::function<void()> memory_sampled;
};

struct broker_options {
  network_policy policy;  // validated; mode filtered
  broker_limits limits;
  broker_hooks hooks;
  std::vector<std::string> listener_names;  // for the evidence, one per listener, same order
  // Transparent routing (docs/network.md): the index in `listener_fds` of
  // the listener the supervisor connects the command's own sockets to, and
  // the table where it notes each one's original destination, keyed by the
  // decimal source port. -1 / null: none.
  int transparent_listener = -1;
  std::shared_ptr<destination_table> destinations;
  // The sandbox's DNS (docs/network.md): a UDP socket bound inside (ownership
  // passes to the broker, also on error), and the resolver allowed queries
  // go to ("127.0.0.1:53", "[::1]:5353"; empty: every allowed query fails
  // with SERVFAIL). -1: no DNS.
  int dns_socket = -1;
  std::string dns_upstream;
  tls_options tls;  // rules with tls "terminate" (docs/tls.md)
  // Test seams as data, for the broker's own process, where `hooks`
  // (closures) cannot follow it across execve (broker_options_json.h):
  // every name resolves to `resolve_to` and every decided address is dialed
  // at 127.0.0.1:`dial_port` instead. A hook that is set wins. Production
  // leaves both empty (0: as decided).
  struct loopback_routes {
    std::vector<std::string> resolve_to;
    int dial_port = 0;
  } test_routes;
};

// The first nameserver of this host's /etc/resolv.conf as "address:53"
// ("[v6]:53"), or empty.
std::string system_dns_upstream();

// A running broker. It owns one thread running an asio io_context.
class network_broker {
 public:
  // Starts serving `listener_fds` (sockets already bound and listening, TCP
  // or unix stream; ownership passes to the broker, also on error).
  // Errors: error_code::launch_failed when a descriptor is not a listening
  // stream socket or the thread cannot start.
  static result<std::unique_ptr<network_broker>> start(broker_options options, std::vector<int> listener_fds);

  // Stops accepting, closes every connection, records the ones still open
  // and joins the thread. Idempotent. Returns at once, except that a system
  // name resolution in flight cannot be cancelled: asio's resolver thread
  // finishes its getaddrinfo() first.
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

// Is `address` (an IP literal, IPv6 optionally in brackets) outside the
// public unicast space: loopback, unspecified, private (RFC 1918,
// fc00::/7), link-local, shared (100.64/10), IETF protocol assignments
// (192.0.0/24), multicast, broadcast, reserved (240/4), "this network"
// (0/8), site-local (fec0::/10), local-use NAT64 (64:ff9b:1::/48), or an
// IPv4-mapped, IPv4-compatible or NAT64 (64:ff9b::/96) form of one? Such an
// address is reached only through an IP-literal allow rule. Documentation
// ranges (192.0.2/24, 2001:db8::/32, ...) count as public. Anything that is
// not an address counts as non-public (fail closed).
bool is_non_public_address(const std::string& address);

}  // namespace cordon::broker
