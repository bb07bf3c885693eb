// The run report (schema 1). Field meanings: docs/report.md; shape:
// schemas/report.v1.schema.json.
#include "cordon/report.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "cordon/policy_json.h"
#include "cordon/version.h"
#include "core/controls_json.h"
#include "core/outcome_json.h"
#include "core/refusal_json.h"
#include "core/sha256.h"
#include "core/tls_evidence_json.h"

namespace cordon {
namespace {

using json = nlohmann::ordered_json;

std::string utc_time(std::chrono::system_clock::time_point when) {
  std::time_t t = std::chrono::system_clock::to_time_t(when);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

json header(const std::string& outcome, const std::string& backend_name, const launch_request& request) {
  json j;
  j["schema"] = report_schema_version;
  j["cordon_version"] = std::string(library_version());
  j["outcome"] = outcome;
  j["finished_at"] = utc_time(std::chrono::system_clock::now());
  j["backend"] = {{"name", backend_name}};
  j["command"] = {{"argv", request.argv}};
  return j;
}

json limits_json(const process_policy& p) {
  json out = json::object();
  if (p.timeout_ms) out["timeout_ms"] = *p.timeout_ms;
  if (p.memory_bytes) out["memory_bytes"] = *p.memory_bytes;
  if (p.cpu_seconds) out["cpu_seconds"] = *p.cpu_seconds;
  if (p.max_processes) out["max_processes"] = *p.max_processes;
  return out;
}

json plan_part(json j, const sandbox_plan& plan) {
  j["backend"]["plan_format_version"] = plan.format_version();
  j["backend"]["platform"] = plan.platform();
  j["backend"]["isolation"] = std::string(to_string(plan.isolation()));
  j["policy"] = {{"name", plan.policy().name},
                 {"digest", policy_digest(plan.policy())},
                 {"isolation", std::string(to_string(plan.policy().isolation))}};
  j["controls"] = core::controls_json(plan.contract());
  j["limits"] = limits_json(plan.policy().process);
  return j;
}

// The order a reader looks for things in: what happened and when, what ran
// under which policy, what was enforced, what the command tried, then the
// measurements and the long lists. Keys not named here follow in the order
// they were added.
constexpr const char* kOrder[] = {
      "outcome", "exit",   "timeout_fired", "error",    "policy_errors", "blockers",  "started_at", "finished_at",
      "prepared", "prepared_at",
      "command", "policy", "backend",       "controls", "limits",        "limits_hit", "violations", "probes", "warnings",
      "deferred_execution", "network", "published_ports", "timing", "resources",     "environment", "mounts",     "schema",    "cordon_version"};

json in_reading_order(const json& j) {
  json out = json::object();
  for (const char* key : kOrder) {
    if (j.contains(key)) out[key] = j[key];
  }
  for (const auto& [key, value] : j.items()) {
    if (!out.contains(key)) out[key] = value;
  }
  return out;
}

// Paths and argv need not be UTF-8 on Linux; JSON must be. Invalid bytes
// become U+FFFD rather than aborting the report.
std::string dump(const json& j) {
  return in_reading_order(j).dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

// A top-level member's value as dump() writes it: the value's own lines one
// level (two spaces) further in. JSON text has no raw newline inside a
// string, so every newline is a line break.
std::string member_value_text(const json& value) {
  std::string text = value.dump(2, ' ', false, json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (char c : text) {
    out.push_back(c);
    if (c == '\n') out.append("  ");
  }
  return out;
}

// dump(outcome half + plan half) without the plan half's values rendered
// again: the same members in the same reading order, the same bytes
// (tests/prepared/report_half_test.cpp).
std::string assemble(const json& outcome_half, const std::vector<std::pair<std::string, std::string>>& plan_half) {
  std::string out = "{\n";
  bool first = true;
  auto add = [&](const std::string& key, const std::string& value_text) {
    if (!first) out.append(",\n");
    first = false;
    out.append("  ").append(json(key).dump()).append(": ").append(value_text);
  };
  auto planned = [&](const std::string& key) -> const std::string* {
    for (const auto& [name, text] : plan_half) {
      if (name == key) return &text;
    }
    return nullptr;
  };
  std::vector<std::string> placed;
  for (const std::string key : kOrder) {
    if (outcome_half.contains(key)) {
      add(key, member_value_text(outcome_half[key]));
    } else if (const std::string* text = planned(key)) {
      add(key, *text);
    } else {
      continue;
    }
    placed.push_back(key);
  }
  auto is_placed = [&](const std::string& key) { return std::find(placed.begin(), placed.end(), key) != placed.end(); };
  for (const auto& [key, value] : outcome_half.items()) {
    if (!is_placed(key)) add(key, member_value_text(value));
  }
  for (const auto& [key, text] : plan_half) {
    if (!is_placed(key) && !outcome_half.contains(key)) add(key, text);
  }
  return out.append("\n}\n");
}

const char* signal_name(int sig) {
  const char* abbrev = ::sigabbrev_np(sig);
  return abbrev != nullptr ? abbrev : "UNKNOWN";
}

}  // namespace

std::string policy_digest(const sandbox_policy& policy) {
  return "sha256:" + detail::sha256_hex(sandbox_policy_to_json(policy));
}

report_plan_half::report_plan_half(const sandbox_plan& plan)
    : plan_identity_(plan.identity()), plan_process_token_(plan.process_token()) {
  // The members plan_part() and header() write that depend on the plan alone.
  json j;
  j["backend"] = {{"name", plan.backend_name()}};  // "name" first, as header() then plan_part() order it
  j = plan_part(std::move(j), plan);
  j["schema"] = report_schema_version;
  j["cordon_version"] = std::string(library_version());
  for (const auto& [key, value] : j.items()) sections_.emplace_back(key, member_value_text(value));
}

bool report_plan_half::renders(const sandbox_plan& plan) const noexcept {
  return plan.identity() == plan_identity_ && plan.process_token() == plan_process_token_;
}

std::string run_report_json(const sandbox_plan& plan, const launch_request& request, const run_outcome& outcome) {
  return run_report_json(plan, request, outcome, report_plan_half(plan));
}

std::string run_report_json(const sandbox_plan& plan, const launch_request& request, const run_outcome& outcome,
                            const report_plan_half& ahead) {
  if (!ahead.renders(plan)) return run_report_json(plan, request, outcome);
  std::string kind = outcome.timed_out     ? "timed_out"
                     : outcome.cancelled   ? "cancelled"
                     : outcome.interrupted ? "interrupted"
                                           : "completed";
  // The outcome's half: header() without what the plan half holds.
  json j;
  j["outcome"] = kind;
  j["finished_at"] = utc_time(std::chrono::system_clock::now());
  j["command"] = {{"argv", request.argv}};
  j["started_at"] = utc_time(std::chrono::system_clock::now() - std::chrono::milliseconds(outcome.wall_ms));
  // A prepared run (cordon/prepared.h): the sandbox was set up ahead of the command.
  j["prepared"] = outcome.prepared_at.has_value();
  if (outcome.prepared_at) j["prepared_at"] = *outcome.prepared_at;
  j["command"]["working_directory"] = outcome.working_directory;
  j["environment"] = {{"names", outcome.environment_names}};
  j["timeout_fired"] = outcome.timed_out;
  if (outcome.exited) {
    j["exit"] = {{"code", outcome.exit_code}};
  } else {
    j["exit"] = {{"signal", outcome.signal}, {"signal_name", std::string("SIG") + signal_name(outcome.signal)}};
  }
  j["timing"] = {{"wall_ms", outcome.wall_ms},
                 {"user_cpu_ms", outcome.user_cpu_ms},
                 {"system_cpu_ms", outcome.system_cpu_ms}};
  j["resources"] = {{"max_process_rss_bytes", outcome.max_rss_bytes}};
  if (outcome.peak_memory_bytes) j["resources"]["peak_memory_bytes"] = *outcome.peak_memory_bytes;
  if (outcome.tree_cpu_ms) j["resources"]["tree_cpu_ms"] = *outcome.tree_cpu_ms;
  j["limits_hit"] = {{"memory", outcome.memory_limit_hit},
                     {"processes", outcome.process_limit_hit},
                     {"cpu", outcome.cpu_limit_hit}};
  j["mounts"] = outcome.mounts;
  // Harmless probes (a route query: kind network_probe) were refused all the
  // same, but are listed apart: they are no attempt to get out (docs/report.md).
  json violations = json::array();
  json probes = json::array();
  for (const auto& v : outcome.violations) {
    (v.kind == "network_probe" ? probes : violations).push_back({{"kind", v.kind}, {"target", v.target}, {"count", v.count}});
  }
  j["violations"] = violations;
  if (!probes.empty()) j["probes"] = probes;
  if (outcome.network) {
    const network_evidence& n = *outcome.network;
    json connections = json::array();
    for (const auto& c : n.connections) {
      json entry = {{"protocol", c.protocol}, {"host", c.host}, {"port", c.port},
                    {"rule", !c.rule_consulted ? json(nullptr) : c.rule ? json(*c.rule) : json("default")}, {"action", c.action},
                    {"bytes_sent", c.bytes_sent}, {"bytes_received", c.bytes_received},
                    {"duration_ms", c.duration_ms}};
      if (!c.reason.empty()) entry["reason"] = c.reason;
      if (!c.address.empty()) entry["address"] = c.address;
      if (!c.original.empty()) entry["original"] = c.original;
      if (!c.name_source.empty()) entry["name_source"] = c.name_source;
      if (!c.tls.empty()) entry["tls"] = c.tls;
      if (!c.requests.empty()) entry["requests"] = core::requests_to_json<json>(c.requests);
      if (c.count != 1) entry["count"] = c.count;
      connections.push_back(std::move(entry));
    }
    j["network"] = {{"listeners", n.listeners},
                    {"total", n.total},
                    {"allowed", n.allowed},
                    {"denied", n.denied},
                    {"unreachable", n.unreachable},
                    {"malformed", n.malformed},
                    {"error", n.error},
                    {"not_recorded", n.not_recorded},
                    {"aggregated", n.aggregated},
                    {"memory", {{"budget_bytes", n.memory_budget_bytes}, {"peak_bytes", n.memory_peak_bytes}}},
                    {"connections", connections}};
    network_evidence trust = n;  // the CA file and its variables come from the policy
    core::note_tls_trust(plan.policy().network, trust);
    if (!trust.ca_certificate.empty() || !trust.injections.empty()) j["network"]["tls"] = core::tls_to_json<json>(trust);
  }
  if (!outcome.published.empty()) j["published_ports"] = core::published_to_json(outcome.published);
  if (outcome.deferred_execution) j["deferred_execution"] = core::deferred_execution_to_json(*outcome.deferred_execution);
  std::vector<std::string> warnings = plan.warnings();
  warnings.insert(warnings.end(), outcome.warnings.begin(), outcome.warnings.end());
  j["warnings"] = warnings;
  return assemble(j, ahead.sections_);
}

std::string refused_report_json(const std::string& backend_name, const std::string& policy_name,
                                const launch_request& request, const compile_failure& failure) {
  json j = header("refused", backend_name, request);
  j["policy"] = {{"name", policy_name}};
  core::add_refusal(j, failure);
  return dump(j);
}

std::string launch_failed_report_json(const sandbox_plan& plan, const launch_request& request, const error& err) {
  json j = plan_part(header("launch_failed", plan.backend_name(), request), plan);
  j["error"] = {{"code", std::string(to_string(err.code))}, {"message", err.describe()}};
  j["warnings"] = plan.warnings();
  return dump(j);
}

}  // namespace cordon
