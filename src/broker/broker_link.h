// src/broker/broker_link.h — the broker served in a process of its own, on
// its only thread, commanded by the supervisor over one unix stream socket
// (src/linux/broker_process.h starts and confines that process; the
// protocol is described there and in docs/network.md, "The broker's
// process"). Portable: what confines the process is the caller's.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "broker/broker.h"

namespace cordon::broker {

// How long an entry of the evidence may wait in the broker to be sent with
// others: what a broker decided in this last stretch before it was killed
// never reaches the supervisor.
inline constexpr std::chrono::milliseconds evidence_report_delay{2};

// Serves `listener_fds` and options.dns_socket (ownership passes) with
// `options` until the supervisor asks it to stop (or closes `channel`),
// then sends the complete evidence and returns 0. Name resolution and the
// transparent listener's destinations come over `channel`
// (options.hooks.resolve_async and options.destinations are set here).
// `confine` is called once everything is open and before the first byte
// is served; it returns why it could not confine the process (empty: done).
// Returns 1 when the broker cannot start or be confined (the reason is sent
// to the supervisor first).
int serve_over_channel(broker_options options, std::vector<int> listener_fds, int channel,
                       const std::function<std::string()>& confine);

}  // namespace cordon::broker
