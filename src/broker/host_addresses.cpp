#include "broker/host_addresses.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include "cordon/host_rules.h"

namespace cordon::broker {

std::vector<std::string> host_interface_addresses() {
  std::vector<std::string> out;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return out;
  for (const ifaddrs* entry = list; entry != nullptr; entry = entry->ifa_next) {
    if (entry->ifa_addr == nullptr) continue;
    char text[INET6_ADDRSTRLEN] = {};
    const sockaddr* address = entry->ifa_addr;
    if (address->sa_family == AF_INET) {
      ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(address)->sin_addr, text, sizeof text);
    } else if (address->sa_family == AF_INET6) {
      ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(address)->sin6_addr, text, sizeof text);
    } else {
      continue;
    }
    auto normalized = normalize_destination_host(text);
    if (normalized) out.push_back(std::move(*normalized));
  }
  ::freeifaddrs(list);
  return out;
}

}  // namespace cordon::broker
