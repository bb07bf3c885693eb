// src/broker/dns_cache.h — which names the sandbox resolved through the
// broker (dns_server.cpp), and to what: a transparent connection with no TLS
// server name and no Host is decided by the name that produced its address,
// and a name is dialed at the addresses the sandbox was given. Used on the
// broker's thread only.
//
// Bounded, because the command chooses what is asked (any name under an
// allowed wildcard, answered by servers it may control): at most max_names
// names, the least recently answered evicted first, each with at most
// max_addresses_per_name addresses, its oldest dropped first; the index by
// address holds only addresses some kept name has. held_bytes() is what it
// holds, counted into the broker's memory peak.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <list>
#include <string>
#include <unordered_map>
#include <vector>

namespace cordon::broker {

class dns_cache {
 public:
  static constexpr std::size_t max_names = 4096;
  static constexpr std::size_t max_addresses_per_name = 16;

  // `name` (normalized) resolved to `addresses` (normalized literals).
  void learn(const std::string& name, const std::vector<std::string>& addresses) {
    if (addresses.empty()) return;
    auto it = by_name_.find(name);
    if (it == by_name_.end()) {
      order_.push_back(name);
      it = by_name_.emplace(name, entry{{}, std::prev(order_.end())}).first;
      bytes_ += 2 * name.size() + per_name_overhead;
    } else {
      order_.splice(order_.end(), order_, it->second.place);  // answered again: the most recent
    }
    auto& known = it->second.addresses;
    for (const auto& a : addresses) {
      if (std::find(known.begin(), known.end(), a) == known.end()) {
        known.push_back(a);
        bytes_ += a.size() + per_address_overhead;
      }
      index(a, name);
    }
    while (known.size() > max_addresses_per_name) {
      forget(known.front(), name);
      known.erase(known.begin());
    }
    while (order_.size() > max_names) evict(order_.front());
  }

  // Forgets `name` and its addresses (nothing when it is not kept).
  void forget_name(const std::string& name) {
    if (by_name_.count(name) != 0) evict(name);
  }

  // The name most recently resolved to `address`, or empty.
  std::string name_of(const std::string& address) const {
    auto it = by_address_.find(address);
    return it == by_address_.end() ? std::string() : it->second;
  }

  // The addresses `name` resolved to, or empty.
  std::vector<std::string> addresses_of(const std::string& name) const {
    auto it = by_name_.find(name);
    return it == by_name_.end() ? std::vector<std::string>() : it->second.addresses;
  }

  std::size_t names() const { return by_name_.size(); }
  std::size_t indexed_addresses() const { return by_address_.size(); }
  // What the cache holds, bytes: its strings and an estimate of the
  // containers' own nodes.
  std::uint64_t held_bytes() const { return bytes_; }

 private:
  // Node, bucket and string header costs of one name (map entry, list node)
  // and one address (vector slot, index entry), estimated for libstdc++.
  static constexpr std::uint64_t per_name_overhead = 160;
  static constexpr std::uint64_t per_address_overhead = 128;

  struct entry {
    std::vector<std::string> addresses;
    std::list<std::string>::iterator place;  // in order_
  };

  void index(const std::string& address, const std::string& name) {
    auto [it, added] = by_address_.try_emplace(address, name);
    if (added) {
      bytes_ += address.size() + name.size();
    } else {
      bytes_ = bytes_ - it->second.size() + name.size();
      it->second = name;
    }
  }

  // `name` no longer has `address`: its index entry goes if it names `name`.
  void forget(const std::string& address, const std::string& name) {
    bytes_ -= address.size() + per_address_overhead;
    auto it = by_address_.find(address);
    if (it == by_address_.end() || it->second != name) return;
    bytes_ -= address.size() + it->second.size();
    by_address_.erase(it);
  }

  void evict(const std::string oldest) {  // a copy: order_'s node goes below
    auto it = by_name_.find(oldest);
    for (const auto& a : it->second.addresses) forget(a, oldest);
    order_.erase(it->second.place);
    by_name_.erase(it);
    bytes_ -= 2 * oldest.size() + per_name_overhead;
  }

  std::unordered_map<std::string, entry> by_name_;
  std::unordered_map<std::string, std::string> by_address_;
  std::list<std::string> order_;  // least recently answered first
  std::uint64_t bytes_ = 0;
};

}  // namespace cordon::broker
