// src/broker/dns_cache.h — which names the sandbox resolved through the
// broker (dns_server.cpp), and to what: a transparent connection with no TLS
// server name and no Host is decided by the name that produced its address,
// and a name is dialed at the addresses the sandbox was given. Used on the
// broker's thread only. Bounded: the oldest names go first.
#pragma once

#include <cstddef>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

namespace cordon::broker {

class dns_cache {
 public:
  static constexpr std::size_t max_names = 4096;

  // `name` (normalized) resolved to `addresses` (normalized literals).
  void learn(const std::string& name, const std::vector<std::string>& addresses) {
    if (addresses.empty()) return;
    auto& known = by_name_[name];
    if (known.empty()) order_.push_back(name);
    for (const auto& a : addresses) {
      bool seen = false;
      for (const auto& k : known) seen = seen || k == a;
      if (!seen) known.push_back(a);
      by_address_[a] = name;
    }
    while (order_.size() > max_names) {
      const std::string oldest = order_.front();
      order_.pop_front();
      for (const auto& a : by_name_[oldest]) {
        auto it = by_address_.find(a);
        if (it != by_address_.end() && it->second == oldest) by_address_.erase(it);
      }
      by_name_.erase(oldest);
    }
  }

  // The name most recently resolved to `address`, or empty.
  std::string name_of(const std::string& address) const {
    auto it = by_address_.find(address);
    return it == by_address_.end() ? std::string() : it->second;
  }

  // The addresses `name` resolved to, or empty.
  std::vector<std::string> addresses_of(const std::string& name) const {
    auto it = by_name_.find(name);
    return it == by_name_.end() ? std::vector<std::string>() : it->second;
  }

 private:
  std::unordered_map<std::string, std::vector<std::string>> by_name_;
  std::unordered_map<std::string, std::string> by_address_;
  std::deque<std::string> order_;
};

}  // namespace cordon::broker
