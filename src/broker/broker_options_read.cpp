// src/broker/broker_options_read.cpp — see broker_options_json.h: the
// broker's half, which makes the run's authority and the upstream context
// with OpenSSL; apart from the supervisor's half (broker_options_json.cpp)
// so that the supervisor's executables do not link OpenSSL.
#include <string>
#include <utility>
#include <vector>

#include "broker/broker_options_json.h"
#include "broker/tls_authority.h"
#include "broker/upstream_trust.h"
#include "cordon/policy_json.h"

namespace cordon::broker {
namespace {

using json = nlohmann::json;

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

result<tls_options> tls_from_json(const json& j) {
  tls_options t;
  t.upstream_ca_file = j.at("upstream_ca_file").get<std::string>();
  if (j.at("make_authority").get<bool>()) {
    auto authority = tls_authority::create();
    if (!authority) return std::move(authority).error_value();
    t.authority = std::move(*authority);
  }
  // Asked for, read by make_requested_upstream.
  t.make_upstream = j.at("upstream").get<bool>();
  for (const auto& c : j.at("credentials")) {
    t.credentials.push_back(
        {c.at("host").get<std::string>(), c.at("header").get<std::string>(), c.at("value").get<std::string>()});
  }
  return t;
}

}  // namespace

result<broker_options> broker_options_from_json(const json& j) {
  auto unreadable = [](const std::string& why) {
    return make_error(error_code::launch_failed, "network broker: its options are unreadable: " + why);
  };
  if (!j.is_object() || j.value("encoding", 0) != options_encoding_version) {
    return unreadable("not encoding " + std::to_string(options_encoding_version) +
                      " (is the supervisor helper of another cordon version? CORDON_SUPERVISOR)");
  }
  broker_options out;
  try {
    auto policy = sandbox_policy_from_json(j.at("policy").get<std::string>());
    if (!policy) return unreadable(policy.error_value().describe());
    out.policy = std::move(policy->network);
    out.limits = limits_from_json(j.at("limits"));
    out.listener_names = j.at("listener_names").get<std::vector<std::string>>();
    out.transparent_listener = j.at("transparent_listener").get<int>();
    out.dns_upstream = j.at("dns_upstream").get<std::string>();
    auto tls = tls_from_json(j.at("tls"));
    if (!tls) return std::move(tls).error_value();
    out.tls = std::move(*tls);
    out.test_routes.resolve_to = j.at("test_routes").at("resolve_to").get<std::vector<std::string>>();
    out.test_routes.dial_port = j.at("test_routes").at("dial_port").get<int>();
  } catch (const json::exception& e) {
    return unreadable(e.what());
  }
  return out;
}

result<void> make_requested_upstream(tls_options& tls) {
  if (!tls.make_upstream || tls.upstream) return ok;
  std::string why;
  tls.upstream = upstream_trust::read(tls.upstream_ca_file, why);
  if (!tls.upstream) return make_error(error_code::launch_failed, "tls termination: " + why);
  return ok;
}

}  // namespace cordon::broker
