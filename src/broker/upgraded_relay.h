// src/broker/upgraded_relay.h — the bytes of an upgraded connection (a
// WebSocket once the destination answered 101, docs/tls.md "WebSocket")
// relayed both ways, unjudged, until either side ends its stream. Both
// directions run at once as two coroutines on the broker's thread: a
// WebSocket's frames go both ways independently (a server may push while
// the client is silent). Private to src/broker.
//
// Memory (docs/network.md, "Memory budget"): each direction holds one
// buffer of at most `chunk` bytes in user space and reads again only once
// that buffer is written, so a side that does not read stops the other
// side's reads instead of growing a queue; the sockets keep the buffers
// the caller gave them.
#pragma once

#include <algorithm>
#include <asio/co_spawn.hpp>
#include <asio/redirect_error.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/write.hpp>
#include <chrono>
#include <cstdint>
#include <exception>
#include <string>
#include <system_error>

namespace cordon::broker::detail {

// How the relay ended: the first direction to stop, and why. `error` is
// empty when that side ended its stream (EOF, or TLS without close_notify).
struct upgraded_end {
  bool client_first = false;  // the command's side stopped first (else the destination's)
  std::error_code error;
};

// What the relay's two directions share, on the caller's frame (the caller
// waits for both to stop, so it outlives them).
template <class ClientSocket, class UpstreamSocket>
struct upgraded_state {
  ClientSocket* client_socket = nullptr;
  UpstreamSocket* upstream_socket = nullptr;
  bool stopping = false;
  bool reverse_done = false;
  upgraded_end end;
  // The first direction to stop: cancels what the other has pending (it
  // then ends with operation_aborted) and tells it not to start more.
  void stop(bool client_side, const std::error_code& ec) {
    if (stopping) return;
    stopping = true;
    end.client_first = client_side;
    end.error = ec;
    std::error_code ignored;
    client_socket->cancel(ignored);
    upstream_socket->cancel(ignored);
  }
};

// One direction: `from` -> `to`, `pending` first (bytes already read), then
// reads of at most `chunk` bytes, each written whole before the next read.
// `moved(n)` counts what was written. Ends at the first end of stream or
// error of either side, or when the other direction stopped.
template <class From, class To, class State, class Moved, class IsEnd>
asio::awaitable<void> upgraded_direction(From& from, To& to, std::string pending, std::size_t chunk, bool client_side,
                                         State& state, Moved moved, IsEnd is_end) {
  using asio::redirect_error;
  using asio::use_awaitable;
  std::string buffer = std::move(pending);
  while (!state.stopping) {
    std::error_code ec;
    if (!buffer.empty()) {
      const std::size_t n = co_await asio::async_write(to, asio::buffer(buffer), redirect_error(use_awaitable, ec));
      moved(n);
      buffer.clear();
      if (ec) {  // the other side's stream failed or ended under the write
        state.stop(!client_side, is_end(ec) ? std::error_code() : ec);
        break;
      }
      if (state.stopping) break;
    }
    buffer.resize(chunk);
    const std::size_t n = co_await from.async_read_some(asio::buffer(buffer), redirect_error(use_awaitable, ec));
    buffer.resize(n);
    if (ec && buffer.empty()) {
      state.stop(client_side, is_end(ec) ? std::error_code() : ec);
      break;
    }
  }
}

// Relays `client` <-> `upstream` until either side ends or fails, then
// returns once both directions stopped. `client_socket` and
// `upstream_socket` are the sockets under the two streams (cancelled when
// the first direction stops). `to_upstream` / `to_client`: bytes already
// read from each side, sent first. `moved(to_destination, n)` counts every
// write; `is_end(ec)` says whether an error is a side ending its stream.
template <class Client, class Upstream, class ClientSocket, class UpstreamSocket, class Moved, class IsEnd>
asio::awaitable<upgraded_end> relay_upgraded(asio::io_context& io, Client& client, Upstream& upstream,
                                             ClientSocket& client_socket, UpstreamSocket& upstream_socket,
                                             std::string to_upstream, std::string to_client, std::size_t chunk,
                                             Moved moved, IsEnd is_end) {
  upgraded_state<ClientSocket, UpstreamSocket> state;
  state.client_socket = &client_socket;
  state.upstream_socket = &upstream_socket;
  asio::steady_timer reverse_stopped(io, std::chrono::steady_clock::time_point::max());
  // Towards the command, on its own coroutine; its completion wakes this one.
  asio::co_spawn(io,
                 upgraded_direction(upstream, client, std::move(to_client), chunk, false, state,
                                    [&moved](std::size_t n) { moved(false, n); }, is_end),
                 [&state, &reverse_stopped](std::exception_ptr) {
                   state.stop(false, std::error_code());  // no-op unless it stopped first
                   state.reverse_done = true;
                   reverse_stopped.cancel();
                 });
  co_await upgraded_direction(client, upstream, std::move(to_upstream), chunk, true, state,
                              [&moved](std::size_t n) { moved(true, n); }, is_end);
  if (!state.reverse_done) {
    std::error_code ignored;
    co_await reverse_stopped.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
  }
  co_return state.end;
}

}  // namespace cordon::broker::detail
