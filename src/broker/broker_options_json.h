// src/broker/broker_options_json.h — broker_options as one JSON object: what
// the supervisor hands the broker's own process over its channel before
// that process confines itself (src/linux/broker_process.h; docs/network.md,
// "The broker's process"). The descriptors travel apart: the encoding only
// counts them.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>

#include "broker/broker.h"
#include "cordon/result.h"

namespace cordon::broker {

// The version of this encoding. A broker executable that reads another one
// refuses to start (an installed helper older or newer than the supervisor).
inline constexpr int options_encoding_version = 1;

// `options` as JSON: the network policy, the limits, the listeners' names
// and count (`listener_count`), the transparent listener's index, whether a
// DNS socket comes, the DNS upstream, the TLS authority (its keys, as PEM:
// the text is secret), the upstream trust file and the injected credentials
// (their values: secret), and the test routes. options.destinations is not
// encoded (its entries follow over the channel). Errors:
// error_code::usage_error when options.hooks holds a closure (one cannot
// cross execve: tests give options.test_routes), launch_failed when the
// authority cannot be written.
result<nlohmann::json> broker_options_to_json(const broker_options& options, std::size_t listener_count);

// What broker_options_to_json() wrote, read back.
struct decoded_broker_options {
  broker_options options;  // dns_socket -1: the caller places the descriptors
  std::size_t listener_count = 0;
  bool dns = false;  // a DNS socket comes after the listeners
};

// Reads the encoding back. When the encoding says the sender had an
// upstream TLS context, the context is made again here, which reads
// upstream_ca_file or the system bundle: call this before confinement.
// Errors: error_code::launch_failed (another encoding version, a field
// missing or of the wrong type, a policy that does not validate, an
// unreadable authority or trust file).
result<decoded_broker_options> broker_options_from_json(const nlohmann::json& j);

}  // namespace cordon::broker
