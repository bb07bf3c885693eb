// src/core/tls_evidence_json.h — the TLS-termination parts of the network
// evidence (docs/tls.md) as JSON, for the report (report.cpp) and for the
// outcome passed between processes (outcome_json.cpp). `J` is
// nlohmann::json or nlohmann::ordered_json.
#pragma once

#include <nlohmann/json.hpp>

#include "core/broker_endpoint.h"
#include "cordon/launch.h"

namespace cordon::core {

// [{method, host, path, status, action, reason?, bytes_sent, bytes_received, injected,
//   upgraded?, upgraded_bytes_sent?, upgraded_bytes_received?}]
template <class J>
J requests_to_json(const std::vector<network_request>& requests) {
  J out = J::array();
  for (const auto& r : requests) {
    J e = {{"method", r.method}, {"host", r.host}, {"path", r.path}, {"status", r.status}, {"action", r.action},
           {"bytes_sent", r.bytes_sent}, {"bytes_received", r.bytes_received}, {"injected", r.injected}};
    if (!r.reason.empty()) e["reason"] = r.reason;
    if (!r.upgraded.empty()) {  // only then: reports without upgrades keep their shape
      e["upgraded"] = r.upgraded;
      e["upgraded_bytes_sent"] = r.upgraded_bytes_sent;
      e["upgraded_bytes_received"] = r.upgraded_bytes_received;
    }
    out.push_back(std::move(e));
  }
  return out;
}

template <class J>
std::vector<network_request> requests_from_json(const J& j) {
  std::vector<network_request> out;
  for (const auto& e : j) {
    network_request r;
    r.method = e.value("method", "");
    r.host = e.value("host", "");
    r.path = e.value("path", "");
    r.status = e.value("status", 0);
    r.action = e.value("action", "");
    r.reason = e.value("reason", "");
    r.bytes_sent = e.value("bytes_sent", std::uint64_t{0});
    r.bytes_received = e.value("bytes_received", std::uint64_t{0});
    if (e.contains("injected")) r.injected = e.at("injected").template get<std::vector<std::string>>();
    r.upgraded = e.value("upgraded", "");
    r.upgraded_bytes_sent = e.value("upgraded_bytes_sent", std::uint64_t{0});
    r.upgraded_bytes_received = e.value("upgraded_bytes_received", std::uint64_t{0});
    out.push_back(std::move(r));
  }
  return out;
}

// {ca_certificate, variables, injections: [{host, header, count}]}
template <class J>
J tls_to_json(const network_evidence& e) {
  J injections = J::array();
  for (const auto& i : e.injections) injections.push_back({{"host", i.host}, {"header", i.header}, {"count", i.count}});
  return {{"ca_certificate", e.ca_certificate}, {"variables", e.ca_variables}, {"injections", injections}};
}

template <class J>
void tls_from_json(const J& j, network_evidence& e) {
  e.ca_certificate = j.value("ca_certificate", "");
  if (j.contains("variables")) e.ca_variables = j.at("variables").template get<std::vector<std::string>>();
  if (j.contains("injections")) {
    for (const auto& i : j.at("injections"))
      e.injections.push_back({i.value("host", ""), i.value("header", ""), i.value("count", std::uint64_t{0})});
  }
}

// Fills ca_certificate and ca_variables for a policy with a terminated rule.
inline void note_tls_trust(const network_policy& policy, network_evidence& e) {
  for (const auto& r : policy.rules) {
    if (r.tls != tls_mode::terminate) continue;
    e.ca_certificate = broker::sandbox_ca_bundle_path;
    e.ca_variables.assign(std::begin(broker::sandbox_ca_variables), std::end(broker::sandbox_ca_variables));
    return;
  }
}

}  // namespace cordon::core
