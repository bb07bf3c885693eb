// os_sandbox_network.cpp — the broker on a host loopback port for
// linux-os-sandbox (os_sandbox_network.h).
#include "linux/os_sandbox_network.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>

#include "core/broker_endpoint.h"

namespace cordon::linux_impl {
namespace {

// A listening TCP socket on 127.0.0.1 at a port the kernel picks.
result<unique_fd> loopback_listener(std::uint16_t& port) {
  unique_fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return make_error(error_code::launch_failed, "socket for the broker's listener", {}, errno);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    return make_error(error_code::launch_failed, "binding the broker's listener on 127.0.0.1", {}, errno);
  }
  if (::listen(fd.get(), SOMAXCONN) != 0) {
    return make_error(error_code::launch_failed, "listen on the broker's listener", {}, errno);
  }
  socklen_t length = sizeof address;
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    return make_error(error_code::launch_failed, "getsockname of the broker's listener", {}, errno);
  }
  port = ntohs(address.sin_port);
  return fd;
}

}  // namespace

result<os_sandbox_broker> os_sandbox_broker::start(const sandbox_plan& plan) {
  os_sandbox_broker out;
  auto listener = loopback_listener(out.port_);
  if (!listener) return std::move(listener).error_value();
  out.listener_ = std::move(*listener);
  broker::broker_options options;
  options.policy = plan.policy().network;
  options.limits.max_connections = broker_connection_budget(options.limits.max_connections);
  options.listener_names = {"127.0.0.1:" + std::to_string(out.port_)};
  options.dns_upstream = dns_upstream();
  auto spawned = broker_process::spawn(std::move(options));
  if (!spawned) return std::move(spawned).error_value();
  out.process_ = std::move(*spawned);
  return out;
}

result<void> os_sandbox_broker::serve() {
  return process_->serve({listener_.release()}, -1, nullptr);
}

pid_t os_sandbox_broker::pid() const { return process_ ? process_->pid() : -1; }

std::optional<network_evidence> os_sandbox_broker::finish() {
  if (!process_) return std::nullopt;
  process_->stop();
  if (!process_->served()) return std::nullopt;
  return process_->evidence();
}

void point_proxies_at(std::vector<std::string>& environment, std::uint16_t port) {
  const std::string fixed = "127.0.0.1:" + std::to_string(broker::broker_port);
  const std::string actual = "127.0.0.1:" + std::to_string(port);
  for (auto& entry : environment) {
    const auto eq = entry.find('=');
    if (eq == std::string::npos) continue;
    std::string name = entry.substr(0, eq);
    for (auto& c : name) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
    if (name != "HTTP_PROXY" && name != "HTTPS_PROXY" && name != "ALL_PROXY") continue;
    const std::string value = entry.substr(eq + 1);
    for (const char* scheme : {"http://", "socks5h://"}) {
      if (value == scheme + fixed) entry = entry.substr(0, eq + 1) + scheme + actual;
    }
  }
}

}  // namespace cordon::linux_impl
