// endpoint.h — where a command in a filtered-network sandbox finds the
// network broker (docs/network.md). Fixed: each sandbox has a network
// namespace and a /dev of its own, so nothing else can hold these.
#pragma once

#include <cstdint>

namespace cordon::broker {

inline constexpr std::uint16_t broker_port = 3128;                        // TCP on 127.0.0.1 inside
inline constexpr const char* broker_socket_path = "/dev/cordon-proxy.sock";  // unix stream socket inside

}  // namespace cordon::broker

namespace cordon::linux_impl {
using broker::broker_port;
using broker::broker_socket_path;
}  // namespace cordon::linux_impl
