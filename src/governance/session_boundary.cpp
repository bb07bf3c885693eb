// session_boundary.cpp — monotonic growth of a session's sandbox policy.
#include "cordon/governance/session_boundary.h"

#include <algorithm>

#include "cordon/policy_json.h"
#include "cordon/report.h"
#include "cordon/validation.h"
#include "core/strict_json.h"
#include "governance/host_port.h"
#include "governance/json_util.h"
#include "governance/sandbox_adapter.h"

namespace cordon::governance {
namespace {

using detail::json;

void add_unique(std::vector<std::string>& list, const std::string& value) {
  if (std::find(list.begin(), list.end(), value) == list.end()) list.push_back(value);
}

// The grown policy, or why the growth is not one.
result<sandbox_policy> grown(const sandbox_policy& base, const boundary_growth& g) {
  sandbox_policy p = base;
  if (g.values.empty()) return detail::invalid("/values", "a growth adds at least one value");
  for (const auto& v : g.values) {
    switch (g.kind) {
      case growth_kind::readable: add_unique(p.filesystem.readable, v); break;
      case growth_kind::writable: add_unique(p.filesystem.writable, v); break;
      case growth_kind::environment: add_unique(p.environment.allow, v); break;
      case growth_kind::hosts: {
        if (p.network.mode == network_mode::unrestricted) {
          return detail::invalid("/values", "the network is already unrestricted");
        }
        auto split = detail::split_host_port(v);
        if (!split) return detail::invalid("/values", split.error_value().message);
        if (p.network.mode == network_mode::denied) {
          p.network.mode = network_mode::filtered;
          p.network.rules.clear();
          p.network.default_action = rule_action::deny;
        }
        network_rule rule{split->host, split->port, rule_action::allow};
        if (std::find(p.network.rules.begin(), p.network.rules.end(), rule) == p.network.rules.end()) {
          // Before the policy's own rules: a deny the policy has (first match
          // decides) must not hide the growth, and allow rules only add.
          p.network.rules.insert(p.network.rules.begin(), rule);
        }
        break;
      }
    }
  }
  auto checked = validate_sandbox_policy(p);
  if (!checked.ok()) {
    return detail::invalid(checked.errors.front().location, "the grown boundary is not valid: " + checked.errors.front().reason);
  }
  if (checked.policy == validate_sandbox_policy(base).policy) {
    return detail::invalid("/values", "the boundary already holds these values");
  }
  return checked.policy;
}

capability_request growth_request(const session_boundary& b, const boundary_growth& g) {
  capability_request r;
  r.risk = risk_level::high;
  r.tool = "session-boundary";
  r.subject_id = g.subject_id;
  r.boundary_revision = g.base_revision;
  r.host_metadata["growth"] = std::string(to_string(g.kind));
  r.host_metadata["session"] = b.session_id();
  switch (g.kind) {
    case growth_kind::readable: r.action = action_kind::filesystem_read; break;
    case growth_kind::writable: r.action = action_kind::filesystem_write; break;
    case growth_kind::hosts: r.action = action_kind::network_outbound; break;
    case growth_kind::environment: r.action = action_kind::environment_access; break;
  }
  // Resources as the request format wants them; token paths stay in host_metadata.
  for (const auto& v : g.values) {
    if (g.kind == growth_kind::hosts) r.hosts.push_back(v);
    else if (g.kind == growth_kind::environment) r.variables.push_back(v);
    else if (!v.empty() && v.front() == '/') r.paths.push_back(v);
    else r.host_metadata["path." + std::to_string(r.host_metadata.size())] = v;
  }
  return r;
}

}  // namespace

std::string_view to_string(growth_kind k) noexcept {
  switch (k) {
    case growth_kind::readable: return "readable";
    case growth_kind::writable: return "writable";
    case growth_kind::hosts: return "hosts";
    case growth_kind::environment: return "environment";
  }
  return "readable";
}

std::optional<growth_kind> growth_kind_from_string(std::string_view s) noexcept {
  for (auto k : {growth_kind::readable, growth_kind::writable, growth_kind::hosts, growth_kind::environment}) {
    if (to_string(k) == s) return k;
  }
  return std::nullopt;
}

std::string_view to_string(growth_status s) noexcept {
  switch (s) {
    case growth_status::grown: return "grown";
    case growth_status::rejected: return "rejected";
    case growth_status::refused: return "refused";
    case growth_status::denied: return "denied";
  }
  return "rejected";
}

result<session_boundary> session_boundary::create(std::string session_id, std::string workspace, sandbox_policy initial) {
  auto checked = validate_sandbox_policy(initial);
  if (!checked.ok()) return detail::invalid(checked.errors.front().location, checked.errors.front().reason);
  session_boundary b;
  b.session_id_ = std::move(session_id);
  b.workspace_ = std::move(workspace);
  b.policy_ = checked.policy;
  b.history_.push_back({1, policy_digest(b.policy_), "", "", "initial boundary", audit_timestamp_now()});
  return b;
}

execution_context session_boundary::context(backend_preference backend) const {
  execution_context c;
  c.session_id = session_id_;
  c.workspace = workspace_;
  c.policy = policy_;
  c.boundary_revision = revision();
  c.backend = backend;
  return c;
}

growth_result session_boundary::grow(const boundary_growth& g, approval_service* approvals, audit_sink& audit) {
  growth_result out;
  out.revision = revision();
  std::string summary = std::string(to_string(g.kind)) + ":";
  for (const auto& v : g.values) summary += " " + v;
  auto record = [&](std::string event, std::string outcome, std::map<std::string, std::string> attributes) {
    auto e = make_audit_event("session", std::move(event), std::move(outcome));
    e.ids = {{"session_id", session_id_}, {"revision", std::to_string(revision())}};
    attributes["growth"] = summary;
    attributes["base_revision"] = std::to_string(g.base_revision);
    e.attributes = std::move(attributes);
    auto appended = audit.append(e);
    if (!appended) out.reason = "the audit sink failed: " + appended.error_value().describe();
    return static_cast<bool>(appended);
  };
  auto finish = [&](growth_status status, std::string reason) {
    out.status = status;
    if (out.reason.empty()) out.reason = std::move(reason);
    else out.status = growth_status::rejected;  // an audit failure wins
    out.revision = revision();
    return out;
  };
  if (g.base_revision != revision()) {
    std::string why = "stale revision " + std::to_string(g.base_revision) + ": the boundary is at revision " +
                      std::to_string(revision());
    record("boundary.rejected", "stale_revision", {{"reason", why}});
    return finish(growth_status::rejected, why);
  }
  bool text = detail::valid_text(g.reason) && detail::valid_text(g.subject_id);
  for (const auto& v : g.values) text = text && detail::valid_text(v);
  if (!text) {
    std::string why = "a growth's values, reason and subject are UTF-8 text without NUL";
    record("boundary.rejected", "invalid", {{"reason", why}});
    return finish(growth_status::rejected, why);
  }
  auto next = grown(policy_, g);
  if (!next) {
    std::string why = next.error_value().describe();
    record("boundary.rejected", "invalid", {{"reason", why}});
    return finish(growth_status::rejected, why);
  }
  detail::sandbox_adapter adapter;
  compile_options options;
  options.workspace = workspace_;
  auto compiled = adapter.compile(*next, options);
  if (!compiled) {
    std::string why = "the grown boundary cannot be enforced here: " + compiled.failure().message;
    record("boundary.refused", std::string(cordon::to_string(compiled.failure().code)), {{"reason", why}});
    return finish(growth_status::refused, why);
  }
  if (approvals == nullptr) {
    std::string why = "a boundary growth needs approval and no approval service is configured";
    record("boundary.approval", "rejected", {{"reason", why}});
    return finish(growth_status::rejected, why);
  }
  approval_request ask;
  ask.request = growth_request(*this, g);
  (void)normalize_capability_request(ask.request);
  ask.request_digest = request_digest(ask.request);
  ask.normalized_form = normalized_form(ask.request);
  ask.policy.decision = decision_kind::require_approval;
  ask.policy.reason = "grow the session boundary (" + summary + ")" + (g.reason.empty() ? "" : ": " + g.reason);
  ask.session_id = session_id_;
  ask.workspace = workspace_;
  ask.sandbox_policy_digest = policy_digest(compiled.plan()->policy());
  ask.backend = adapter.backend_name();
  ask.plan_levels = detail::sandbox_adapter::levels(*compiled.plan());
  ask.plan_warnings = compiled.plan()->warnings();
  auto answer = approvals->decide(ask);
  if (!answer.request_digest.empty() && answer.request_digest != ask.request_digest) {
    answer = {approval_decision_kind::denied, approval_scope::once, "the approval names another request", {}, {}};
  }
  std::map<std::string, std::string> attributes = {{"decision", std::string(to_string(answer.kind))},
                                                   {"approver", std::string(approvals->name())},
                                                   {"reason", answer.reason},
                                                   {"request_digest", ask.request_digest}};
  if (approvals->for_tests_only()) attributes["approval_for_tests_only"] = "true";
  if (!record("boundary.approval", std::string(to_string(answer.kind)), attributes)) return finish(growth_status::rejected, "");
  if (answer.kind != approval_decision_kind::approved) {
    return finish(answer.kind == approval_decision_kind::denied ? growth_status::denied : growth_status::rejected,
                  "the growth was not approved: " + answer.reason);
  }
  std::string old_digest = policy_digest(policy_);
  std::string new_digest = policy_digest(*next);
  if (!record("boundary.grown", "grown", {{"from_policy_digest", old_digest}, {"to_policy_digest", new_digest},
                                          {"to_revision", std::to_string(revision() + 1)}})) {
    return finish(growth_status::rejected, "");
  }
  policy_ = *next;
  history_.push_back({revision() + 1, new_digest, summary, std::string(approvals->name()), answer.reason, audit_timestamp_now()});
  return finish(growth_status::grown, "revision " + std::to_string(revision()));
}

std::string session_boundary::to_json(const approval_ledger& ledger) const {
  json history = json::array();
  for (const auto& h : history_) {
    history.push_back({{"revision", h.revision}, {"policy_digest", h.policy_digest}, {"growth", h.growth},
                       {"approver", h.approver}, {"reason", h.reason}, {"timestamp", h.timestamp}});
  }
  // Ordered: the policy's own key order matters (environment.set applies in order).
  nlohmann::ordered_json out = {{"schema_version", 1},
                                {"session_id", session_id_},
                                {"workspace", workspace_},
                                {"revision", revision()},
                                {"policy", nlohmann::ordered_json::parse(sandbox_policy_to_json(policy_))},
                                {"history", nlohmann::ordered_json::parse(history.dump())},
                                {"approvals", nlohmann::ordered_json::parse(ledger.to_json())}};
  return out.dump(2) + "\n";
}

result<std::pair<session_boundary, approval_ledger>> session_boundary::from_json(std::string_view text) {
  auto doc = detail::parse_document(text);
  if (!doc) return std::move(doc).error_value();
  const json& j = *doc;
  if (auto keys = detail::check_keys(j, {"schema_version", "session_id", "workspace", "revision", "policy", "history", "approvals"}, "");
      !keys) {
    return std::move(keys).error_value();
  }
  auto id = detail::get_string(j, "session_id", "", true);
  if (!id) return std::move(id).error_value();
  auto ws = detail::get_string(j, "workspace", "", true);
  if (!ws) return std::move(ws).error_value();
  if (!j.contains("policy")) return detail::invalid("/policy", "required field is missing");
  // Read from the document in its own order (the sorted DOM would reorder environment.set).
  auto policy = sandbox_policy_from_json(cordon::detail::parse_strict_json(text).root["policy"].dump());
  if (!policy) {
    auto err = std::move(policy).error_value();
    err.location = "/policy" + err.location;
    return err;
  }
  auto made = create(*id, *ws, *policy);
  if (!made) return std::move(made).error_value();
  session_boundary b = std::move(*made);
  b.history_.clear();
  auto history = j.find("history");
  if (history == j.end() || !history->is_array() || history->empty()) return detail::invalid("/history", "expected the revisions");
  for (std::size_t i = 0; i < history->size(); ++i) {
    const json& h = (*history)[i];
    std::string where = "/history/" + std::to_string(i);
    if (!h.is_object() || !h.contains("revision") || h["revision"] != i + 1) return detail::invalid(where, "revisions count from 1 without gaps");
    boundary_revision r;
    r.revision = i + 1;
    for (auto [key, field] : {std::pair{"policy_digest", &r.policy_digest}, std::pair{"growth", &r.growth},
                              std::pair{"approver", &r.approver}, std::pair{"reason", &r.reason},
                              std::pair{"timestamp", &r.timestamp}}) {
      auto value = detail::get_string(h, key, where, false);
      if (!value) return std::move(value).error_value();
      *field = std::move(*value);
    }
    b.history_.push_back(r);
  }
  if (!j.contains("revision") || j["revision"] != b.revision()) return detail::invalid("/revision", "does not match the history");
  if (b.history_.back().policy_digest != policy_digest(b.policy_)) {
    return detail::invalid("/policy", "the policy is not the one the last revision recorded (edited?)");
  }
  approval_ledger ledger;
  if (auto a = j.find("approvals"); a != j.end()) {
    auto read = approval_ledger::from_json(a->dump());
    if (!read) {
      auto err = std::move(read).error_value();
      err.location = "/approvals" + err.location;
      return err;
    }
    ledger = std::move(*read);
  }
  return std::pair{std::move(b), std::move(ledger)};
}

}  // namespace cordon::governance
