// host_addresses.h — the addresses of this host's own interfaces.
//
// A service on the host that listens on 0.0.0.0 or :: answers on every one
// of them, public or not: to the broker they are as much "the host" as
// 127.0.0.1 (docs/network.md, "Decisions").
#pragma once

#include <string>
#include <vector>

namespace cordon::broker {

// Every IPv4 and IPv6 address assigned to an interface now (getifaddrs(3)),
// as normalized literals without zone. Read fresh at each call, so an
// address added during the run counts. Empty if the list cannot be read
// (the connected-socket check in the session still applies).
std::vector<std::string> host_interface_addresses();

}  // namespace cordon::broker
