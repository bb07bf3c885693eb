// src/broker/serve.h — the broker's steps, for the two ways it runs: a
// thread of the supervisor (network_broker, broker.cpp) or the only thread
// of a confined process of its own (broker_link.h, src/linux/broker_process.h).
// Private to src/broker and its launcher.
#pragma once

#include <memory>
#include <vector>

#include "broker/broker.h"
#include "cordon/result.h"

namespace cordon::broker::detail {

struct core;

// Takes `listener_fds` (ownership passes, also on error) and options.dns_socket,
// checks them and makes everything the broker serves with: the io_context,
// its listeners and DNS socket, the memory sampler. Nothing runs yet.
// Errors: launch_failed (a descriptor is not a listening stream socket, the
// DNS socket is unusable).
result<std::unique_ptr<core>> prepare_core(broker_options options, std::vector<int> listener_fds);

// Runs the io_context on the calling thread until begin_stop() ended the
// work; an exception out of a handler is recorded and the loop goes on.
void run_loop(core& c);

// On the broker's thread: drains the listen queues (each connection still
// queued is accepted and recorded), closes the listeners and every session
// (each recorded), and lets run_loop() return once they are gone.
void begin_stop(core& c);

}  // namespace cordon::broker::detail
