// record.cpp — run.json and JUnit XML. Portable: the Windows gate runner
// (src/windows/launcher/gate_runner.cpp) writes the same record.
#include "gates/record.h"
#include "core/utc_time.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <map>
#include <nlohmann/json.hpp>

namespace cordon::gates {
namespace {

using json = nlohmann::ordered_json;

std::string_view to_string(gate_phase phase) {
  switch (phase) {
    case gate_phase::pending: return "pending";
    case gate_phase::running: return "running";
    case gate_phase::finished: return "finished";
  }
  return "pending";
}

// What the record says now: a gate is `interrupted` until it has finished.
gate_outcome recorded_outcome(const gate_state& g) {
  return g.phase == gate_phase::finished ? g.outcome : gate_outcome::interrupted;
}

std::string xml_escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default:
        // XML 1.0 allows no control characters but tab, LF, CR.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') out += '?';
        else out += c;
    }
  }
  return out;
}

std::string seconds(std::uint64_t ms) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3f", static_cast<double>(ms) / 1000.0);
  return buffer;
}

}  // namespace

std::string utc_now() { return cordon::detail::utc_timestamp_ms_now(); }

std::string run_record_json(const run_header& header, const std::vector<gate_state>& gates) {
  json record;
  record["schema"] = run_record_schema_version;
  record["kind"] = "cordon-gate-run";
  record["manifest"] = {{"path", header.manifest->path}, {"digest", header.manifest->digest}};
  record["workspace"] = header.workspace;
  record["host_os"] = std::string(to_string(host_os()));
  record["backend"] = header.backend;
  record["jobs"] = header.jobs;
  record["state"] = header.state;
  record["started_at"] = header.started_at;
  record["updated_at"] = utc_now();
  record["elapsed_ms"] = header.elapsed_ms;
  std::map<std::string, int> summary;
  json list = json::array();
  for (const auto& g : gates) {
    gate_outcome outcome = recorded_outcome(g);
    ++summary[std::string(to_string(outcome))];
    json entry;
    entry["name"] = g.spec->name;
    entry["env"] = std::string(to_string(g.spec->os));
    entry["phase"] = std::string(to_string(g.phase));
    entry["outcome"] = std::string(to_string(outcome));
    entry["argv"] = g.spec->argv;
    entry["needs"] = g.spec->needs;
    entry["exit_status"] = g.exit_status >= 0 ? json(g.exit_status) : json(nullptr);
    if (g.signal != 0) entry["signal"] = g.signal;
    entry["started_ms"] = g.started_ms;
    entry["duration_ms"] = g.duration_ms;
    entry["policy"] = {{"source", g.spec->policy_ref},
                       {"name", g.policy_name},
                       {"digest", g.policy_digest.empty() ? json(nullptr) : json(g.policy_digest)}};
    const std::string base = "gate/" + g.spec->name;
    bool ran = g.launched;
    entry["report"] = ran || g.reported ? json(base + ".sandbox.json") : json(nullptr);
    entry["report_digest"] = g.report_digest.empty() ? json(nullptr) : json(g.report_digest);
    entry["stdout"] = ran ? json(base + ".stdout") : json(nullptr);
    entry["stderr"] = ran ? json(base + ".stderr") : json(nullptr);
    entry["below_enforced"] = g.below_enforced;
    entry["findings"] = g.findings;
    entry["accept_findings"] = g.spec->accept_findings;
    json blockers = json::array();
    for (const auto& b : g.blockers) {
      blockers.push_back({{"control", b.subject_name()}, {"required", b.required_name()},
                          {"available", b.available_name()}, {"reason", b.reason}});
    }
    entry["blockers"] = blockers;
    entry["detail"] = g.detail;
    list.push_back(entry);
  }
  record["gates"] = list;
  json counts = json::object();
  for (auto o : {gate_outcome::passed, gate_outcome::failed, gate_outcome::timed_out, gate_outcome::refused,
                 gate_outcome::not_applicable, gate_outcome::skipped, gate_outcome::interrupted}) {
    counts[std::string(to_string(o))] = summary[std::string(to_string(o))];
  }
  record["summary"] = counts;
  return record.dump(2) + "\n";
}

std::string junit_xml(const run_header& header, const std::vector<gate_state>& gates) {
  int failures = 0, errors = 0, skipped = 0;
  std::string cases;
  for (const auto& g : gates) {
    gate_outcome outcome = recorded_outcome(g);
    std::string message = std::string(to_string(outcome)) + (g.detail.empty() ? "" : ": " + g.detail);
    for (const auto& b : g.blockers) message += "; " + b.subject_name() + " requires " + b.required_name() + ", has " + b.available_name();
    cases += "    <testcase classname=\"cordon.gate\" name=\"" + xml_escape(g.spec->name) + "\" time=\"" +
             seconds(g.duration_ms) + "\">\n";
    if (!g.findings.empty()) {
      cases += "      <properties>\n";
      for (const auto& f : g.findings) cases += "        <property name=\"finding\" value=\"" + xml_escape(f) + "\"/>\n";
      cases += "      </properties>\n";
    }
    std::string attrs = " type=\"" + std::string(to_string(outcome)) + "\" message=\"" + xml_escape(message) + "\"";
    switch (outcome) {
      case gate_outcome::passed: break;
      case gate_outcome::failed:
      case gate_outcome::timed_out: ++failures; cases += "      <failure" + attrs + "/>\n"; break;
      case gate_outcome::refused:
      case gate_outcome::interrupted: ++errors; cases += "      <error" + attrs + "/>\n"; break;
      case gate_outcome::skipped:
      case gate_outcome::not_applicable:
        ++skipped;
        cases += "      <skipped message=\"" + xml_escape(message) + "\"/>\n";
        break;
    }
    if (g.launched) {
      cases += "      <system-out>gate/" + xml_escape(g.spec->name) + ".stdout</system-out>\n";
      cases += "      <system-err>gate/" + xml_escape(g.spec->name) + ".stderr</system-err>\n";
    }
    cases += "    </testcase>\n";
  }
  std::string counts = " tests=\"" + std::to_string(gates.size()) + "\" failures=\"" + std::to_string(failures) +
                       "\" errors=\"" + std::to_string(errors) + "\" skipped=\"" + std::to_string(skipped) +
                       "\" time=\"" + seconds(header.elapsed_ms) + "\"";
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"cordon gate run\"" + counts +
         ">\n  <testsuite name=\"" + xml_escape(header.manifest->path) + "\"" + counts + " timestamp=\"" +
         xml_escape(header.started_at) + "\">\n" + cases + "  </testsuite>\n</testsuites>\n";
}

}  // namespace cordon::gates
