// sidecar_report.cpp — the JSON of sidecar_report.h.
#include "sidecars/sidecar_report.h"

#include "cordon/report.h"

namespace cordon::sidecars {

using ojson = nlohmann::ordered_json;

namespace {

ojson extension_json(const extension_evidence& e) {
  const extension_manifest& m = *e.manifest;
  ojson files = ojson::array();
  for (const auto& f : m.files) files.push_back({{"path", f.path}, {"sha256", f.sha256}});
  ojson grants = ojson::array();
  for (const auto& g : e.grants) {
    grants.push_back({{"grant", g.grant},
                      {"decision", std::string(governance::to_string(g.decision))},
                      {"rule", g.rule_id},
                      {"reason", g.reason}});
  }
  return {{"name", m.name},
          {"version", m.version},
          {"manifest", {{"path", m.path}, {"digest", m.digest}}},
          {"files", files},
          {"integrity", e.file_problems.empty() ? "verified" : "mismatch"},
          {"integrity_problems", e.file_problems},
          // Matching digests say the files are the ones named, not that anyone
          // vouched for them (docs/sidecars.md, "Integrity is not trust").
          {"trust", "untrusted"},
          {"grants", grants},
          {"capability_rules", e.rules_name.empty() ? ojson(nullptr)
                                                    : ojson{{"name", e.rules_name}, {"digest", e.rules_digest}}}};
}

ojson requirements_json(const std::vector<requirement>& requirements, const enforcement_contract* contract) {
  ojson out = ojson::array();
  for (const auto& r : requirements) {
    ojson item = {{"control", std::string(to_string(r.subject))}, {"required", std::string(to_string(r.required))}};
    if (contract != nullptr) {
      auto it = contract->find(r.subject);
      enforcement_level available = it == contract->end() ? enforcement_level::not_enforced : it->second.level;
      item["available"] = std::string(to_string(available));
      item["met"] = level_satisfies(available, r.required);
    }
    out.push_back(item);
  }
  return out;
}

}  // namespace

ojson report_head(const launch_facts& facts, const char* state) {
  return {{"schema", sidecar_report_schema},
          {"kind", "cordon-sidecar"},
          {"state", state},
          {"protocol", std::string(to_string(facts.proto))},
          {"command", facts.argv},
          {"workspace", facts.workspace},
          {"handshake_timeout_ms", facts.handshake_timeout_ms == 0 ? ojson(nullptr) : ojson(facts.handshake_timeout_ms)},
          {"extension", facts.extension == nullptr ? ojson(nullptr) : extension_json(*facts.extension)}};
}

ojson launch_report(const launch_facts& facts, const sandbox_plan& plan, pid_t pid, const std::string& started_at) {
  ojson j = report_head(facts, "launched");
  j["pid"] = pid;
  j["started_at"] = started_at;
  j["backend"] = plan.backend_name();
  j["isolation"] = std::string(to_string(plan.isolation()));
  j["policy"] = {{"name", plan.policy().name}, {"digest", policy_digest(plan.policy())}};
  ojson controls = ojson::object();
  for (const auto& [c, status] : plan.contract()) {
    controls[std::string(to_string(c))] = {{"level", std::string(to_string(status.level))},
                                           {"mechanism", status.mechanism}};
  }
  j["controls"] = controls;
  j["requirements"] = requirements_json(facts.requirements, &plan.contract());
  j["warnings"] = plan.warnings();
  return j;
}

void add_ending(ojson& report, const session_result& s, int exit_status, const std::string& ended_at) {
  report["state"] = "ended";
  report["ended_at"] = ended_at;
  report["duration_ms"] = s.duration_ms;
  const run_outcome* o = s.run.outcome ? &*s.run.outcome : nullptr;
  report["ending"] = {{"reason", std::string(to_string(s.reason))},
                      {"stage", std::string(to_string(s.stage))},
                      {"detail", s.detail},
                      {"exit_code", o != nullptr && o->exited ? ojson(o->exit_code) : ojson(nullptr)},
                      {"signal", o != nullptr && !o->exited ? ojson(o->signal) : ojson(nullptr)},
                      {"cordon_signal", s.cordon_signal == 0 ? ojson(nullptr) : ojson(s.cordon_signal)},
                      {"failure", s.run.failure ? ojson(s.run.failure->describe()) : ojson(nullptr)},
                      {"exit_status", exit_status}};
  report["handshake"] = {{"completed", s.handshake_done},
                         {"ms", s.handshake_ms ? ojson(*s.handshake_ms) : ojson(nullptr)}};
  report["traffic"] = {{"frames_to_sidecar", s.frames_to_sidecar},
                       {"frames_from_sidecar", s.frames_from_sidecar},
                       {"bytes_to_sidecar", s.bytes_to_sidecar},
                       {"bytes_from_sidecar", s.bytes_from_sidecar},
                       {"bytes_undelivered", s.bytes_undelivered}};
  ojson samples = ojson::array();
  for (const auto& d : s.samples) samples.push_back({{"reason", d.reason}, {"bytes", d.bytes}, {"text", d.sample}});
  report["discarded"] = {{"count", s.discarded_count}, {"bytes", s.discarded_bytes}, {"samples", samples}};
  ojson sandbox = ojson::parse(s.run.json, nullptr, false);
  report["sandbox"] = sandbox.is_discarded() ? ojson(nullptr) : sandbox;
}

ojson refused_report(const launch_facts& facts, const error& why, const std::vector<blocker>& blockers,
                     const std::vector<std::string>& unmet) {
  ojson j = report_head(facts, "refused");
  ojson b = ojson::array();
  for (const auto& x : blockers) {
    b.push_back({{"subject", x.subject_name()},
                 {"required", x.required_name()},
                 {"available", x.available_name()},
                 {"reason", x.reason}});
  }
  j["requirements"] = requirements_json(facts.requirements, nullptr);
  j["refusal"] = {{"code", std::string(to_string(why.code))}, {"message", why.message}, {"blockers", b}, {"unmet", unmet}};
  return j;
}

std::vector<std::string> unmet_requirements(const std::vector<requirement>& requirements,
                                            const enforcement_contract& contract) {
  std::vector<std::string> out;
  for (const auto& r : requirements) {
    auto it = contract.find(r.subject);
    enforcement_level available = it == contract.end() ? enforcement_level::not_enforced : it->second.level;
    if (!level_satisfies(available, r.required)) {
      out.push_back(std::string(to_string(r.subject)) + "=" + std::string(to_string(available)) + " (required " +
                    std::string(to_string(r.required)) + ")");
    }
  }
  return out;
}

}  // namespace cordon::sidecars
