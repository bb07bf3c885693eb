// outcome_json.h — run_outcome and error as JSON, for the run API's helper
// process, which hands them to the host over its socket. Private: the public
// shape of a run is the report (cordon/report.h).
#pragma once

#include <nlohmann/json.hpp>

#include "cordon/launch.h"
#include "cordon/result.h"

namespace cordon::core {

nlohmann::json outcome_to_json(const run_outcome& outcome);
run_outcome outcome_from_json(const nlohmann::json& j);  // throws nlohmann::json::exception on a bad shape

// The report's `deferred_execution` object (docs/report.md):
// {findings: [{kind, path, key?, detail}], scan: {entries, complete}}.
nlohmann::json deferred_execution_to_json(const deferred_execution_evidence& evidence);

// The published ports' relays (run_outcome::published) as the report's
// "published_ports" array (schemas/report.v1.schema.json), and back.
nlohmann::json published_to_json(const std::vector<published_port_evidence>& relays);
std::vector<published_port_evidence> published_from_json(const nlohmann::json& j);
deferred_execution_evidence deferred_execution_from_json(const nlohmann::json& j);  // throws on a bad shape
// The broker's evidence, also for the confined broker's channel (src/linux/broker_process.h).
nlohmann::json evidence_to_json(const network_evidence& evidence);
// One entry of it, as the confined broker streams them (src/broker/evidence_stream.h).
nlohmann::json connection_to_json(const network_connection& connection);
network_connection connection_from_json(const nlohmann::json& j);  // throws nlohmann::json::exception on a bad shape
network_evidence evidence_from_json(const nlohmann::json& j);  // throws nlohmann::json::exception on a bad shape

nlohmann::json error_to_json(const error& err);
error error_from_json(const nlohmann::json& j);

}  // namespace cordon::core
