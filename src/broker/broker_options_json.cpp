// src/broker/broker_options_json.cpp — see broker_options_json.h.
#include "broker/broker_options_json.h"

#include <string>
#include <utility>
#include <vector>

#include "broker/tls_authority.h"
#include "cordon/policy_json.h"

namespace cordon::broker {
namespace {

using json = nlohmann::json;

json limits_to_json(const broker_limits& l) {
  return {{"max_connections", l.max_connections},
          {"max_request_bytes", l.max_request_bytes},
          {"request_timeout_ms", l.request_timeout.count()},
          {"connect_timeout_ms", l.connect_timeout.count()},
          {"splice", l.splice},
          {"relay_buffer_bytes", l.relay_buffer_bytes},
          {"memory_budget_bytes", l.memory_budget_bytes},
          {"first_bytes_wait_ms", l.first_bytes_wait.count()}};
}

broker_limits limits_from_json(const json& j) {
  broker_limits l;
  l.max_connections = j.at("max_connections").get<std::size_t>();
  l.max_request_bytes = j.at("max_request_bytes").get<std::size_t>();
  l.request_timeout = std::chrono::milliseconds(j.at("request_timeout_ms").get<long long>());
  l.connect_timeout = std::chrono::milliseconds(j.at("connect_timeout_ms").get<long long>());
  l.splice = j.at("splice").get<bool>();
  l.relay_buffer_bytes = j.at("relay_buffer_bytes").get<std::size_t>();
  l.memory_budget_bytes = j.at("memory_budget_bytes").get<std::uint64_t>();
  l.first_bytes_wait = std::chrono::milliseconds(j.at("first_bytes_wait_ms").get<long long>());
  return l;
}

result<json> tls_to_json(const tls_options& t) {
  json out = {{"upstream_ca_file", t.upstream_ca_file}, {"upstream", t.upstream != nullptr}};
  if (t.authority) {
    auto pem = t.authority->export_pem();
    if (!pem) return std::move(pem).error_value();
    out["authority"] = std::move(*pem);
  }
  json credentials = json::array();
  for (const auto& c : t.credentials) credentials.push_back({{"host", c.host}, {"header", c.header}, {"value", c.value}});
  out["credentials"] = std::move(credentials);
  return out;
}

result<tls_options> tls_from_json(const json& j) {
  tls_options t;
  t.upstream_ca_file = j.at("upstream_ca_file").get<std::string>();
  if (j.contains("authority")) {
    auto authority = tls_authority::import_pem(j.at("authority").get<std::string>());
    if (!authority) return std::move(authority).error_value();
    t.authority = std::move(*authority);
  }
  if (j.at("upstream").get<bool>()) {
    std::string why;
    t.upstream = make_upstream_context(t.upstream_ca_file, why);
    if (!t.upstream) return make_error(error_code::launch_failed, "tls termination: " + why);
  }
  for (const auto& c : j.at("credentials")) {
    t.credentials.push_back(
        {c.at("host").get<std::string>(), c.at("header").get<std::string>(), c.at("value").get<std::string>()});
  }
  return t;
}

}  // namespace

result<json> broker_options_to_json(const broker_options& options, std::size_t listener_count) {
  const broker_hooks& h = options.hooks;
  if (h.resolve || h.dial || h.resolve_async) {
    return make_error(error_code::usage_error,
                      "network broker: hooks cannot follow the broker into its own process (use test_routes)");
  }
  sandbox_policy carrier;
  carrier.network = options.policy;
  auto tls = tls_to_json(options.tls);
  if (!tls) return std::move(tls).error_value();
  return json{{"encoding", options_encoding_version},
              {"policy", sandbox_policy_to_json(carrier)},
              {"limits", limits_to_json(options.limits)},
              {"listener_names", options.listener_names},
              {"listener_count", listener_count},
              {"transparent_listener", options.transparent_listener},
              {"dns", options.dns_socket >= 0},
              {"dns_upstream", options.dns_upstream},
              {"tls", std::move(*tls)},
              {"test_routes",
               {{"resolve_to", options.test_routes.resolve_to}, {"dial_port", options.test_routes.dial_port}}}};
}

result<decoded_broker_options> broker_options_from_json(const json& j) {
  auto unreadable = [](const std::string& why) {
    return make_error(error_code::launch_failed, "network broker: its options are unreadable: " + why);
  };
  if (!j.is_object() || j.value("encoding", 0) != options_encoding_version) {
    return unreadable("not encoding " + std::to_string(options_encoding_version) +
                      " (is the supervisor helper of another cordon version? CORDON_SUPERVISOR)");
  }
  decoded_broker_options out;
  try {
    auto policy = sandbox_policy_from_json(j.at("policy").get<std::string>());
    if (!policy) return unreadable(policy.error_value().describe());
    out.options.policy = std::move(policy->network);
    out.options.limits = limits_from_json(j.at("limits"));
    out.options.listener_names = j.at("listener_names").get<std::vector<std::string>>();
    out.listener_count = j.at("listener_count").get<std::size_t>();
    out.options.transparent_listener = j.at("transparent_listener").get<int>();
    out.dns = j.at("dns").get<bool>();
    out.options.dns_upstream = j.at("dns_upstream").get<std::string>();
    auto tls = tls_from_json(j.at("tls"));
    if (!tls) return std::move(tls).error_value();
    out.options.tls = std::move(*tls);
    out.options.test_routes.resolve_to = j.at("test_routes").at("resolve_to").get<std::vector<std::string>>();
    out.options.test_routes.dial_port = j.at("test_routes").at("dial_port").get<int>();
  } catch (const json::exception& e) {
    return unreadable(e.what());
  }
  return out;
}

}  // namespace cordon::broker
