// src/broker/relay_memory.h — how much kernel memory the broker's relays may
// hold, and how much they do hold (docs/network.md, "Memory budget").
//
// A relayed byte that its reader does not take waits in the broker's socket
// receive queue, in the splice pipe and in the broker's send queue towards
// the other side. Left to autotuning, the kernel lets each TCP socket hold up
// to tcp_rmem[2] / tcp_wmem[2] (6 MiB and 4 MiB by default): 400 connections
// that the command fills and never drains would hold gigabytes. So every
// direction of a relay starts on small, fixed buffers (the base tier), and
// only a direction that is moving bulk data is given large ones (the bulk
// tier), while the run's grants stay within broker_limits::memory_budget_bytes.
// A direction that is refused a grant keeps working on base buffers, slower.
// Private to src/broker.
#pragma once

#include <fcntl.h>
#include <sys/socket.h>
#if defined(__linux__)
#include <linux/sock_diag.h>
#endif

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace cordon::broker::detail {

// The buffer sizes of one relay direction (bytes): SO_RCVBUF of the socket
// it reads, SO_SNDBUF of the socket it writes, and its splice pipe.
struct relay_tier {
  int socket_buffer;
  int pipe;
  // The most that direction can hold: Linux doubles SO_RCVBUF/SO_SNDBUF
  // (socket(7): the doubled value covers bookkeeping overhead) and the
  // kernel accounts queued memory against the doubled value.
  constexpr std::uint64_t held_at_most() const {
    return 2 * static_cast<std::uint64_t>(socket_buffer) * 2 + static_cast<std::uint64_t>(pipe);
  }
};

// 64 KiB: one loopback segment fits, so request/response traffic is not
// held back by the window; the pipe holds 16 pages (its default size).
inline constexpr relay_tier base_tier{64 * 1024, 64 * 1024};
// 1 MiB socket buffers and pipe: a loopback transfer runs at the speed of a
// direct connection with them (docs/network.md, "Throughput").
inline constexpr relay_tier bulk_tier{1024 * 1024, 1024 * 1024};
// A direction that has moved this much is moving bulk data.
inline constexpr std::uint64_t bulk_after_bytes = 256 * 1024;

// The bulk grants of one run. Used on the broker's thread only.
class relay_budget {
 public:
  // Takes `bytes` from the budget `limit`; false (nothing taken) when they
  // do not fit.
  bool take(std::uint64_t bytes, std::uint64_t limit) {
    if (granted_ + bytes > limit) return false;
    granted_ += bytes;
    return true;
  }
  void give(std::uint64_t bytes) { granted_ -= std::min(bytes, granted_); }
  std::uint64_t granted() const { return granted_; }

 private:
  std::uint64_t granted_ = 0;
};

// Bytes the kernel holds now for the socket `fd`: its receive queue and its
// send queue, as SO_MEMINFO reports them (sock_diag's meminfo; 0 when the
// socket is closed or the option is unknown).
inline std::uint64_t socket_held_bytes(int fd) {
#if !defined(__linux__)
  (void)fd;
  return 0;  // no SO_MEMINFO: the evidence's peak counts pipes and buffers only
#else
  if (fd < 0) return 0;
  std::uint32_t info[SK_MEMINFO_VARS] = {};
  socklen_t length = sizeof info;
  if (::getsockopt(fd, SOL_SOCKET, SO_MEMINFO, info, &length) != 0) return 0;
  return static_cast<std::uint64_t>(info[SK_MEMINFO_RMEM_ALLOC]) + info[SK_MEMINFO_WMEM_QUEUED];
#endif
}

// What a socket's buffer is now, as the kernel reports it (the doubled
// value; 0 when unknown). `option` is SO_RCVBUF or SO_SNDBUF.
inline std::uint64_t socket_buffer_bytes(int fd, int option) {
  int value = 0;
  socklen_t length = sizeof value;
  if (fd < 0 || ::getsockopt(fd, SOL_SOCKET, option, &value, &length) != 0 || value < 0) return 0;
  return static_cast<std::uint64_t>(value);
}

// Sets SO_RCVBUF of the socket a direction reads and SO_SNDBUF of the one
// it writes. Failures are ignored: a buffer keeps its size, which the
// kernel bounds anyway (net.core.rmem_max / wmem_max cap the request).
inline void apply_tier(int reads, int writes, const relay_tier& tier) {
  const int size = tier.socket_buffer;
  if (reads >= 0) (void)::setsockopt(reads, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
  if (writes >= 0) (void)::setsockopt(writes, SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
}

}  // namespace cordon::broker::detail
