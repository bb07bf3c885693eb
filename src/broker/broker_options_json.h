// src/broker/broker_options_json.h — broker_options as one JSON object: what
// the supervisor hands the broker's own process over its channel before
// that process confines itself (src/linux/broker_process.h; docs/network.md,
// "The broker's process"). The descriptors travel apart: the encoding only
// counts them.
#pragma once

#include <nlohmann/json.hpp>

#include "broker/broker.h"
#include "cordon/result.h"

namespace cordon::broker {

// The version of this encoding. A broker executable that reads another one
// refuses to start (an installed helper older or newer than the supervisor).
inline constexpr int options_encoding_version = 1;

// `options` as JSON: the network policy, the limits, the listeners' names,
// the transparent listener's index, the DNS upstream, the TLS settings
// (whether to make the run's authority, the upstream trust file, the
// injected credentials with their values: the text is secret) and the test
// routes. Not encoded: the descriptors (they follow over the channel),
// options.destinations (its entries follow over the channel) and an
// authority already made (the broker's process makes its own:
// tls_options::make_authority). Errors: error_code::usage_error when
// options.hooks holds a closure (one cannot cross execve: tests give
// options.test_routes) or options.tls.authority is set.
result<nlohmann::json> broker_options_to_json(const broker_options& options);

// Reads the encoding back, with dns_socket -1 (the caller places the
// descriptors). The run's authority is made here when the sender asked for
// one (tls_options::make_authority); the upstream trust store is only
// marked as asked for (tls_options::make_upstream): make_requested_upstream
// reads it. Errors: error_code::launch_failed (another encoding version, a
// field missing or of the wrong type, a policy that does not validate, an
// authority that cannot be made).
result<broker_options> broker_options_from_json(const nlohmann::json& j);

// Reads the upstream trust store when tls.make_upstream asks for it and
// none is read yet: tls.upstream_ca_file or the system bundle, whose parse
// (tens of milliseconds of CPU) waits for the first terminated connection
// (upstream_trust.h). Call this before confinement, which leaves no file to
// open; the broker's process calls it before it answers its options, so a
// file that cannot be read fails the run before the sandbox exists
// (docs/network.md, "The broker's process"). Errors:
// error_code::launch_failed (the file cannot be read or holds no PEM
// certificate).
result<void> make_requested_upstream(tls_options& tls);

}  // namespace cordon::broker
