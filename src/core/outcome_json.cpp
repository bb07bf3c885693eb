#include "core/outcome_json.h"

#include "core/tls_evidence_json.h"

#include <string>
#include <utility>

namespace cordon::core {
namespace {

using json = nlohmann::json;

template <class T>
void put(json& j, const char* key, const std::optional<T>& value) {
  if (value) j[key] = *value;
}

template <class T>
void get(const json& j, const char* key, std::optional<T>& value) {
  if (j.contains(key)) value = j.at(key).get<T>();
}

template <class T>
void get(const json& j, const char* key, T& value) {
  if (j.contains(key)) value = j.at(key).get<T>();
}


}  // namespace

json connection_to_json(const network_connection& c) {
  json cj = {{"protocol", c.protocol}, {"original", c.original}, {"name_source", c.name_source},
             {"host", c.host}, {"port", c.port}, {"rule_consulted", c.rule_consulted}, {"action", c.action},
             {"reason", c.reason}, {"address", c.address}, {"bytes_sent", c.bytes_sent},
             {"bytes_received", c.bytes_received}, {"duration_ms", c.duration_ms}};
  put(cj, "rule", c.rule);
  if (!c.tls.empty()) cj["tls"] = c.tls;
  if (!c.requests.empty()) cj["requests"] = requests_to_json<json>(c.requests);
  if (c.count != 1) cj["count"] = c.count;
  return cj;
}

network_connection connection_from_json(const json& cj) {
  network_connection c;
  using text = std::string network_connection::*;
  for (const auto& [key, field] : {std::pair<const char*, text>{"protocol", &network_connection::protocol},
                                   {"original", &network_connection::original},
                                   {"name_source", &network_connection::name_source},
                                   {"host", &network_connection::host}, {"action", &network_connection::action},
                                   {"reason", &network_connection::reason},
                                   {"address", &network_connection::address}, {"tls", &network_connection::tls}}) {
    get(cj, key, c.*field);
  }
  get(cj, "port", c.port);
  get(cj, "rule", c.rule);
  get(cj, "rule_consulted", c.rule_consulted);
  get(cj, "bytes_sent", c.bytes_sent);
  get(cj, "bytes_received", c.bytes_received);
  get(cj, "duration_ms", c.duration_ms);
  get(cj, "count", c.count);
  if (cj.contains("requests")) c.requests = requests_from_json(cj.at("requests"));
  return c;
}

json evidence_to_json(const network_evidence& e) {
  json connections = json::array();
  for (const auto& c : e.connections) connections.push_back(connection_to_json(c));
  return {{"listeners", e.listeners}, {"connections", connections}, {"total", e.total}, {"allowed", e.allowed},
          {"denied", e.denied}, {"unreachable", e.unreachable}, {"malformed", e.malformed}, {"error", e.error},
          {"not_recorded", e.not_recorded}, {"aggregated", e.aggregated}, {"memory_budget_bytes", e.memory_budget_bytes},
          {"memory_peak_bytes", e.memory_peak_bytes}, {"tls", tls_to_json<json>(e)}};
}

network_evidence evidence_from_json(const json& j) {
  network_evidence e;
  get(j, "listeners", e.listeners);
  for (const auto& cj : j.at("connections")) e.connections.push_back(connection_from_json(cj));
  get(j, "total", e.total);
  get(j, "allowed", e.allowed);
  get(j, "denied", e.denied);
  get(j, "unreachable", e.unreachable);
  get(j, "malformed", e.malformed);
  get(j, "error", e.error);
  get(j, "not_recorded", e.not_recorded);
  get(j, "aggregated", e.aggregated);
  get(j, "memory_budget_bytes", e.memory_budget_bytes);
  get(j, "memory_peak_bytes", e.memory_peak_bytes);
  if (j.contains("tls")) tls_from_json(j.at("tls"), e);
  return e;
}

json deferred_execution_to_json(const deferred_execution_evidence& evidence) {
  json findings = json::array();
  for (const auto& f : evidence.findings) {
    json entry = {{"kind", f.kind}, {"path", f.path}, {"detail", f.detail}};
    if (!f.key.empty()) entry["key"] = f.key;
    findings.push_back(std::move(entry));
  }
  return {{"findings", findings},
          {"scan", {{"entries", evidence.entries}, {"complete", evidence.complete}, {"listings", evidence.listings}}}};
}

deferred_execution_evidence deferred_execution_from_json(const json& j) {
  deferred_execution_evidence e;
  for (const auto& f : j.at("findings")) {
    e.findings.push_back({f.at("kind").get<std::string>(), f.at("path").get<std::string>(),
                          f.value("key", std::string()), f.at("detail").get<std::string>()});
  }
  e.entries = j.at("scan").at("entries").get<std::uint64_t>();
  e.complete = j.at("scan").at("complete").get<bool>();
  e.listings = j.at("scan").value("listings", std::string("walk"));
  return e;
}

json published_to_json(const std::vector<published_port_evidence>& relays) {
  json out = json::array();
  for (const auto& r : relays) {
    out.push_back({{"port", r.port}, {"host_port", r.host_port}, {"host_address", r.host_address},
                   {"max_connections", r.max_connections}, {"buffer_bytes", r.buffer_bytes},
                   {"accepted", r.accepted}, {"refused", r.refused}, {"failed", r.failed},
                   {"bytes_in", r.bytes_in}, {"bytes_out", r.bytes_out}});
  }
  return out;
}

std::vector<published_port_evidence> published_from_json(const json& j) {
  std::vector<published_port_evidence> out;
  for (const auto& e : j) {
    published_port_evidence r;
    get(e, "port", r.port);
    get(e, "host_port", r.host_port);
    get(e, "host_address", r.host_address);
    get(e, "max_connections", r.max_connections);
    get(e, "buffer_bytes", r.buffer_bytes);
    get(e, "accepted", r.accepted);
    get(e, "refused", r.refused);
    get(e, "failed", r.failed);
    get(e, "bytes_in", r.bytes_in);
    get(e, "bytes_out", r.bytes_out);
    out.push_back(std::move(r));
  }
  return out;
}

json outcome_to_json(const run_outcome& o) {
  json violations = json::array();
  for (const auto& v : o.violations) violations.push_back({{"kind", v.kind}, {"target", v.target}, {"count", v.count}});
  json j = {{"exited", o.exited}, {"exit_code", o.exit_code}, {"signal", o.signal}, {"timed_out", o.timed_out},
            {"interrupted", o.interrupted}, {"cancelled", o.cancelled}, {"wall_ms", o.wall_ms},
            {"user_cpu_ms", o.user_cpu_ms}, {"system_cpu_ms", o.system_cpu_ms}, {"max_rss_bytes", o.max_rss_bytes},
            {"memory_limit_hit", o.memory_limit_hit}, {"process_limit_hit", o.process_limit_hit},
            {"cpu_limit_hit", o.cpu_limit_hit}, {"environment_names", o.environment_names}, {"mounts", o.mounts},
            {"violations", violations}, {"warnings", o.warnings}, {"working_directory", o.working_directory}};
  put(j, "peak_memory_bytes", o.peak_memory_bytes);
  put(j, "tree_cpu_ms", o.tree_cpu_ms);
  put(j, "prepared_at", o.prepared_at);
  if (o.network) j["network"] = evidence_to_json(*o.network);
  if (!o.published.empty()) j["published_ports"] = published_to_json(o.published);
  if (o.deferred_execution) j["deferred_execution"] = deferred_execution_to_json(*o.deferred_execution);
  return j;
}

run_outcome outcome_from_json(const json& j) {
  run_outcome o;
  get(j, "exited", o.exited);
  get(j, "exit_code", o.exit_code);
  get(j, "signal", o.signal);
  get(j, "timed_out", o.timed_out);
  get(j, "interrupted", o.interrupted);
  get(j, "cancelled", o.cancelled);
  get(j, "wall_ms", o.wall_ms);
  get(j, "user_cpu_ms", o.user_cpu_ms);
  get(j, "system_cpu_ms", o.system_cpu_ms);
  get(j, "max_rss_bytes", o.max_rss_bytes);
  get(j, "peak_memory_bytes", o.peak_memory_bytes);
  get(j, "tree_cpu_ms", o.tree_cpu_ms);
  get(j, "prepared_at", o.prepared_at);
  get(j, "memory_limit_hit", o.memory_limit_hit);
  get(j, "process_limit_hit", o.process_limit_hit);
  get(j, "cpu_limit_hit", o.cpu_limit_hit);
  get(j, "environment_names", o.environment_names);
  get(j, "mounts", o.mounts);
  for (const auto& v : j.at("violations")) {
    o.violations.push_back({v.at("kind").get<std::string>(), v.at("target").get<std::string>(),
                            v.at("count").get<std::uint64_t>()});
  }
  get(j, "warnings", o.warnings);
  get(j, "working_directory", o.working_directory);
  if (j.contains("network")) o.network = evidence_from_json(j.at("network"));
  if (j.contains("published_ports")) o.published = published_from_json(j.at("published_ports"));
  if (j.contains("deferred_execution")) o.deferred_execution = deferred_execution_from_json(j.at("deferred_execution"));
  return o;
}

json error_to_json(const error& err) {
  json errors = json::array();
  for (const auto& e : err.errors) errors.push_back({{"location", e.location}, {"reason", e.reason}});
  return {{"code", std::string(to_string(err.code))}, {"message", err.message}, {"location", err.location},
          {"errno", err.sys_errno}, {"errors", errors}};
}

error error_from_json(const json& j) {
  error err = make_error(error_code_from_string(j.at("code").get<std::string>()).value_or(error_code::launch_failed),
                         j.at("message").get<std::string>(), j.at("location").get<std::string>(),
                         j.at("errno").get<int>());
  for (const auto& e : j.at("errors")) err.errors.push_back({e.at("location"), e.at("reason")});
  return err;
}

}  // namespace cordon::core
