// broker_serve.cpp — the broker's process after execve (broker_process.h:
// serve_as_broker). Apart from broker_process.cpp, the supervisor's side,
// so that only the helper's executable links what the broker serves with
// (asio, OpenSSL).
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "broker/broker_link.h"
#include "broker/broker_options_json.h"
#include "broker/tls_authority.h"
#include "linux/broker_confinement.h"
#include "linux/broker_process.h"
#include "posix/socket_io.h"

namespace cordon::linux_impl {
namespace {

using json = nlohmann::json;

// The longest options line the broker reads.
constexpr std::size_t max_options_line = 16 * 1024 * 1024;

// The broker's first line from the channel (its options), read blocking.
std::optional<std::string> read_options_line(int channel) {
  std::string received;
  char chunk[16384];
  while (received.find('\n') == std::string::npos) {
    if (received.size() > max_options_line) return std::nullopt;
    const ssize_t n = ::recv(channel, chunk, sizeof chunk, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    received.append(chunk, static_cast<std::size_t>(n));
  }
  // Nothing follows the options until the broker has answered them.
  if (received.find('\n') + 1 != received.size()) return std::nullopt;
  received.pop_back();
  return received;
}

// The descriptor limit of a broker with `max_connections`: a relayed
// connection holds six descriptors (two sockets, two pipes); the rest is
// the broker's own (epoll, its timers, the channel).
rlim_t broker_max_files(std::size_t max_connections) { return static_cast<rlim_t>(max_connections) * 6 + 64; }

}  // namespace

bool is_broker_invocation(int argc, char** argv) {
  return argc == 2 && std::strcmp(argv[1], broker_argument) == 0;
}

int serve_as_broker() {
  const int channel = broker_channel_fd;
  ::fcntl(channel, F_SETFD, FD_CLOEXEC);
  auto say = [](const json& m) {
    const std::string line = m.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
    (void)::send(broker_channel_fd, line.data(), line.size(), MSG_NOSIGNAL);
  };
  // 1. Its options; the run's authority, when it is asked to make one.
  std::optional<std::string> line = read_options_line(channel);
  if (!line) {
    say({{"failed", "its options did not come, or came with more after them"}});
    return 1;
  }
  const json encoded = json::parse(*line, nullptr, false);
  ::explicit_bzero(line->data(), line->size());
  auto decoded = broker::broker_options_from_json(encoded);
  if (!decoded) {
    say({{"failed", decoded.error_value().describe()}});
    return 1;
  }
  broker::broker_options options = std::move(*decoded);
  // The upstream trust store's file, read now (its parse waits for the
  // first terminated connection: upstream_trust.h), so that a file that
  // cannot be read fails the run before the supervisor clones the sandbox,
  // never once its command runs.
  if (auto upstream = broker::make_requested_upstream(options.tls); !upstream) {
    say({{"failed", upstream.error_value().message}});
    return 1;
  }
  json spawned = {{"spawned", true}};
  if (options.tls.authority) spawned["authority"] = options.tls.authority->certificate_pem();
  say(spawned);
  // 2. Its listeners and the DNS socket, once the sandbox has made them.
  std::vector<int> listeners;
  int fds[4] = {-1, -1, -1, -1};
  std::size_t received = 0;
  // nullopt: the supervisor gave the run up before the sandbox was ready,
  // or sent something else.
  const std::optional<std::string> head = receive_line_with_descriptors(channel, fds, 4, received, 4096);
  if (!head) {
    say({{"failed", "its listeners did not come as announced"}});
    return 1;
  }
  const json given = json::parse(head->substr(0, head->find('\n')), nullptr, false);
  const std::size_t count = given.is_object() ? given.value("listeners", std::size_t{0}) : 0;
  const bool dns = given.is_object() && given.value("dns", false);
  if (count == 0 || count + (dns ? 1 : 0) != received) {
    say({{"failed", "its listeners did not come as announced"}});
    return 1;
  }
  listeners.assign(fds, fds + count);
  if (dns) options.dns_socket = fds[count];
  // 3. Confined, then serving.
  const rlim_t max_files = broker_max_files(options.limits.max_connections);
  return broker::serve_over_channel(std::move(options), std::move(listeners), channel,
                                    [max_files] { return confine_broker_process(max_files); });
}

}  // namespace cordon::linux_impl
