// filtered_run.cpp — the broker started before a filtered macOS plan is
// compiled and launched (filtered_run.h).
#include "macos/filtered_run.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>

#include "broker/broker.h"
#include "macos/launcher.h"
#include "posix/unique_fd.h"

namespace cordon::macos_impl {
namespace {

error step_failed(const std::string& step) { return make_error(error_code::launch_failed, step, {}, errno); }

// A TCP listener on 127.0.0.1 with a kernel-chosen port, and that port.
result<std::pair<unique_fd, std::uint16_t>> loopback_listener() {
  unique_fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return step_failed("socket for the broker's listener");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    return step_failed("bind 127.0.0.1:0 for the broker");
  }
  if (::listen(fd.get(), 128) != 0) return step_failed("listen for the broker");
  socklen_t length = sizeof address;
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    return step_failed("getsockname of the broker's listener");
  }
  const std::uint16_t port = ntohs(address.sin_port);
  return std::pair<unique_fd, std::uint16_t>{std::move(fd), port};
}

result<run_outcome> compile_and_launch(const sandbox_policy& policy, const macos_host_facts& facts,
                                       const launch_request& request) {
  auto compiled = compile_macos_plan(policy, facts);
  if (!compiled) return compiled.failure();
  return launch_macos_plan(*compiled.plan(), request);
}

}  // namespace

result<run_outcome> run_macos_policy(const sandbox_policy& policy, macos_host_facts facts,
                                     const launch_request& request, const std::vector<std::string>& broker_resolve_to,
                                     int broker_dial_port) {
  if (policy.network.mode != network_mode::filtered) {
    facts.broker_port = 0;
    return compile_and_launch(policy, facts, request);
  }
  auto listener = loopback_listener();
  if (!listener) return std::move(listener).error_value();
  broker::broker_options options;
  options.policy = policy.network;
  options.listener_names = {"127.0.0.1:" + std::to_string(listener->second)};
  options.test_routes.resolve_to = broker_resolve_to;
  options.test_routes.dial_port = broker_dial_port;
  facts.broker_port = listener->second;
  auto broker = broker::network_broker::start(std::move(options), {listener->first.release()});
  if (!broker) return std::move(broker).error_value();
  auto outcome = compile_and_launch(policy, facts, request);
  (*broker)->stop();
  if (!outcome) return outcome;
  outcome->network = (*broker)->evidence();
  return outcome;
}

}  // namespace cordon::macos_impl
