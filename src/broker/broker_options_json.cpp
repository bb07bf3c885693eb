// src/broker/broker_options_json.cpp — see broker_options_json.h: the
// supervisor's half, which links no TLS library (the broker's half, which
// makes the authority, is broker_options_read.cpp).
#include "broker/broker_options_json.h"

#include <string>
#include <utility>
#include <vector>

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

json tls_to_json(const tls_options& t) {
  json credentials = json::array();
  for (const auto& c : t.credentials) credentials.push_back({{"host", c.host}, {"header", c.header}, {"value", c.value}});
  return {{"make_authority", t.make_authority},
          {"upstream_ca_file", t.upstream_ca_file},
          {"upstream", t.make_upstream},
          {"credentials", std::move(credentials)}};
}

}  // namespace

result<json> broker_options_to_json(const broker_options& options) {
  const broker_hooks& h = options.hooks;
  if (h.resolve || h.dial || h.resolve_async) {
    return make_error(error_code::usage_error,
                      "network broker: hooks cannot follow the broker into its own process (use test_routes)");
  }
  if (options.tls.authority || options.tls.upstream) {
    return make_error(error_code::usage_error,
                      "network broker: its process makes its own authority and upstream context "
                      "(tls_options::make_authority, make_upstream)");
  }
  sandbox_policy carrier;
  carrier.network = options.policy;
  return json{{"encoding", options_encoding_version},
              {"policy", sandbox_policy_to_json(carrier)},
              {"limits", limits_to_json(options.limits)},
              {"listener_names", options.listener_names},
              {"transparent_listener", options.transparent_listener},
              {"dns_upstream", options.dns_upstream},
              {"tls", tls_to_json(options.tls)},
              {"test_routes",
               {{"resolve_to", options.test_routes.resolve_to}, {"dial_port", options.test_routes.dial_port}}}};
}

}  // namespace cordon::broker
