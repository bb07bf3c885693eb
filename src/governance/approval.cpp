// approval.cpp — decision names, the built-in services, the request and
// decision JSON, and the ledger of remembered grants.
#include "cordon/governance/approval.h"

#include "governance/json_util.h"

namespace cordon::governance {
namespace {

using detail::json;

std::string grant_key(approval_scope scope, const approval_request& r) {
  // NUL separates fields: none of them can contain it (valid_text).
  std::string sep(1, '\0');
  if (scope == approval_scope::session) return "session" + sep + r.session_id + sep + r.normalized_form;
  return "workspace" + sep + r.workspace + sep + r.sandbox_policy_digest + sep + r.normalized_form;
}

}  // namespace

std::string_view to_string(approval_decision_kind k) noexcept {
  switch (k) {
    case approval_decision_kind::approved: return "approved";
    case approval_decision_kind::denied: return "denied";
    case approval_decision_kind::manual_review: return "manual_review";
  }
  return "denied";
}

std::string_view to_string(approval_scope s) noexcept {
  switch (s) {
    case approval_scope::once: return "once";
    case approval_scope::session: return "session";
    case approval_scope::workspace: return "workspace";
  }
  return "once";
}

std::optional<approval_decision_kind> approval_decision_kind_from_string(std::string_view s) noexcept {
  for (auto k : {approval_decision_kind::approved, approval_decision_kind::denied, approval_decision_kind::manual_review}) {
    if (to_string(k) == s) return k;
  }
  return std::nullopt;
}

std::optional<approval_scope> approval_scope_from_string(std::string_view s) noexcept {
  for (auto k : {approval_scope::once, approval_scope::session, approval_scope::workspace}) {
    if (to_string(k) == s) return k;
  }
  return std::nullopt;
}

approval_decision deny_all_approval_service::decide(const approval_request&) {
  return {approval_decision_kind::denied, approval_scope::once, "the deny_all approval service denies every request", {}, {}};
}

approval_decision allow_all_approval_service::decide(const approval_request&) {
  return {approval_decision_kind::approved, scope_, "allow_all approval service (tests only): approved without review", {}, {}};
}

std::string approval_request_json(const approval_request& r) {
  json levels = json::array();
  for (const auto& l : r.plan_levels) levels.push_back({{"control", l.control}, {"level", l.level}, {"mechanism", l.mechanism}});
  json parts = json::array();
  for (const auto& p : r.policy.parts) {
    parts.push_back({{"part", p.part}, {"decision", to_string(p.decision)}, {"rule", p.rule_id}, {"reason", p.reason}});
  }
  json out = {
      {"schema_version", 1},
      {"request", json::parse(canonical_json(r.request))},
      {"request_digest", r.request_digest},
      {"policy", {{"decision", to_string(r.policy.decision)}, {"reason", r.policy.reason}, {"rule", r.policy.rule_id},
                  {"parts", parts}, {"uncertain", r.policy.uncertain}, {"rules_digest", r.rules_digest}}},
      {"session_id", r.session_id},
      {"workspace", r.workspace},
      {"sandbox", {{"backend", r.backend}, {"policy_digest", r.sandbox_policy_digest}, {"controls", levels},
                   {"warnings", r.plan_warnings}}},
  };
  return detail::canonical(out);
}

std::string approval_decision_json(const approval_decision& d) {
  return detail::canonical(json{{"decision", to_string(d.kind)}, {"scope", to_string(d.scope)}, {"reason", d.reason},
                                {"approver", d.approver}});
}

result<approval_decision> approval_decision_from_json(std::string_view text) {
  auto doc = detail::parse_document(text);
  if (!doc) return std::move(doc).error_value();
  const json& j = *doc;
  if (auto keys = detail::check_keys(j, {"decision", "scope", "reason", "request_digest"}, ""); !keys) {
    return std::move(keys).error_value();
  }
  approval_decision d;
  auto kind = detail::get_string(j, "decision", "", true);
  if (!kind) return std::move(kind).error_value();
  auto k = approval_decision_kind_from_string(*kind);
  if (!k) return detail::invalid("/decision", "approved, denied or manual_review");
  d.kind = *k;
  auto scope = detail::get_string(j, "scope", "", false);
  if (!scope) return std::move(scope).error_value();
  if (!scope->empty()) {
    auto s = approval_scope_from_string(*scope);
    if (!s) return detail::invalid("/scope", "once, session or workspace");
    d.scope = *s;
  }
  auto reason = detail::get_string(j, "reason", "", false);
  if (!reason) return std::move(reason).error_value();
  d.reason = *reason;
  auto digest = detail::get_string(j, "request_digest", "", true);
  if (!digest) return std::move(digest).error_value();
  d.request_digest = *digest;
  return d;
}

void approval_ledger::record(const approval_request& request, const approval_decision& decision) {
  if (decision.kind != approval_decision_kind::approved || decision.scope == approval_scope::once) return;
  grants_[grant_key(decision.scope, request)] = decision.scope;
}

std::optional<approval_scope> approval_ledger::find(const approval_request& request) const {
  for (auto scope : {approval_scope::session, approval_scope::workspace}) {
    if (grants_.count(grant_key(scope, request)) != 0) return scope;
  }
  return std::nullopt;
}

void approval_ledger::merge(const approval_ledger& other) { grants_.insert(other.grants_.begin(), other.grants_.end()); }

std::string approval_ledger::to_json() const {
  json grants = json::array();
  for (const auto& [key, scope] : grants_) {
    // Keys hold NULs between fields; stored as their parts.
    json fields = json::array();
    std::size_t start = 0;
    for (std::size_t i = 0; i <= key.size(); ++i) {
      if (i == key.size() || key[i] == '\0') {
        fields.push_back(key.substr(start, i - start));
        start = i + 1;
      }
    }
    grants.push_back(fields);
  }
  return detail::canonical(grants);
}

result<approval_ledger> approval_ledger::from_json(std::string_view text) {
  auto doc = detail::parse_document(text);
  if (!doc) return std::move(doc).error_value();
  approval_ledger ledger;
  if (!doc->is_array()) return detail::invalid("", "expected an array of grants");
  for (std::size_t i = 0; i < doc->size(); ++i) {
    const json& g = (*doc)[i];
    std::string where = "/" + std::to_string(i);
    if (!g.is_array() || g.empty() || !g[0].is_string()) return detail::invalid(where, "not a grant");
    auto scope = approval_scope_from_string(g[0].get<std::string>());
    std::size_t expected = scope == approval_scope::session ? 3 : 4;
    if (!scope || *scope == approval_scope::once || g.size() != expected) return detail::invalid(where, "not a grant");
    std::string key;
    for (std::size_t k = 0; k < g.size(); ++k) {
      if (!g[k].is_string()) return detail::invalid(where + "/" + std::to_string(k), "expected a string");
      key += (k == 0 ? "" : std::string(1, '\0')) + g[k].get<std::string>();
    }
    ledger.grants_[key] = *scope;
  }
  return ledger;
}

}  // namespace cordon::governance
