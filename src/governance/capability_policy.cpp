// capability_policy.cpp — judging requests against rules (the algorithm is in
// cordon/governance/capability_policy.h). Reading rules files is in
// capability_rules_json.cpp.
#include "cordon/governance/capability_policy.h"

#include <algorithm>

#include "cordon/governance/shell_split.h"
#include "cordon/host_rules.h"
#include "governance/command_args.h"
#include "governance/glob.h"
#include "governance/host_port.h"

namespace cordon::governance {
namespace {

enum class part_kind { segment, path, host, variable, whole };

struct part {
  part_kind kind = part_kind::whole;
  action_kind action = action_kind::process;  // a redirect target is a filesystem part
  const shell_segment* segment = nullptr;
  std::string value;  // path, host, variable
  std::string label;
};

std::string segment_text(const shell_segment& s) {
  std::string out;
  for (const auto& w : s.words) out += (out.empty() ? "" : " ") + w.text;
  return out;
}

bool any_name(const std::vector<std::string>& patterns, std::string_view value) {
  return std::any_of(patterns.begin(), patterns.end(),
                     [&](const std::string& p) { return detail::name_glob_matches(p, value); });
}

// A necessary condition for a wildcard DNS pattern ("*.x", "**.x"): the
// destination ends with its suffix. It only skips the matcher where the
// matcher would say no; every decision that can be yes is the matcher's.
bool suffix_can_match(std::string_view pattern_host, std::string_view destination_host) {
  std::string_view suffix;
  if (pattern_host.substr(0, 3) == "**.") suffix = pattern_host.substr(3);
  else if (pattern_host.substr(0, 2) == "*.") suffix = pattern_host.substr(2);
  else return true;
  if (!suffix.empty() && suffix.back() == '.') suffix.remove_suffix(1);
  if (destination_host.size() < suffix.size()) return false;
  auto tail = destination_host.substr(destination_host.size() - suffix.size());
  for (std::size_t i = 0; i < suffix.size(); ++i) {
    char a = suffix[i], b = tail[i];
    if (a >= 'A' && a <= 'Z') a = static_cast<char>(a - 'A' + 'a');
    if (a != b) return false;
  }
  return true;
}

bool host_matches(const std::string& pattern, const std::string& destination, bool cautious) {
  auto p = detail::split_host_port(pattern);
  auto d = detail::split_host_port(destination);
  if (!p || !d) return cautious;  // unreadable: only a cautious rule takes it
  if (p->port && d->port != p->port && !(cautious && !d->port)) return false;
  if (!suffix_can_match(p->host, d->host)) return false;
  auto matched = host_pattern_matches(p->host, d->host);
  return matched ? *matched : cautious;
}

// The request-wide criteria: action, risk, tool, subject.
bool request_criteria(const capability_rule& rule, const capability_request& request, action_kind action) {
  if (!rule.actions.empty() && std::find(rule.actions.begin(), rule.actions.end(), action) == rule.actions.end()) return false;
  if (!rule.risks.empty() && std::find(rule.risks.begin(), rule.risks.end(), request.risk) == rule.risks.end()) return false;
  if (!rule.tools.empty() && !any_name(rule.tools, request.tool)) return false;
  if (!rule.subjects.empty() && !any_name(rule.subjects, request.subject_id)) return false;
  return true;
}

bool rule_covers(const capability_rule& rule, const capability_request& request, const part& p) {
  if (!request_criteria(rule, request, p.action)) return false;
  bool cautious = rule.decision != decision_kind::allow;
  bool commands = !rule.commands.empty() || !rule.command_forms.empty();
  bool targeted = commands || !rule.paths.empty() || !rule.hosts.empty() || !rule.variables.empty();
  switch (p.kind) {
    case part_kind::whole: return !targeted;
    case part_kind::segment:
      if (!commands) return !targeted;
      return std::any_of(rule.commands.begin(), rule.commands.end(),
                         [&](const std::string& c) {
                           std::size_t next = 0;
                           return detail::command_words_match(c, *p.segment, cautious, next);
                         }) ||
             std::any_of(rule.command_forms.begin(), rule.command_forms.end(), [&](const command_form& f) {
               return detail::command_form_matches(f, *p.segment, cautious);
             });
    case part_kind::path:
      if (rule.paths.empty()) return !targeted;
      return std::any_of(rule.paths.begin(), rule.paths.end(),
                         [&](const std::string& pat) { return detail::path_pattern_matches(pat, p.value, cautious); });
    case part_kind::host:
      if (rule.hosts.empty()) return !targeted;
      return std::any_of(rule.hosts.begin(), rule.hosts.end(),
                         [&](const std::string& pat) { return host_matches(pat, p.value, cautious); });
    case part_kind::variable:
      if (rule.variables.empty()) return !targeted;
      return any_name(rule.variables, p.value);
  }
  return false;
}

// The parts of a request (see the header), and the splitter's doubts.
std::vector<part> parts_of(const capability_request& request, shell_split& split) {
  std::vector<part> parts;
  if (request.action == action_kind::shell) {
    split = split_shell_command(request.command);
  } else if (runs_command(request.action)) {
    split = split_argv(request.argv);
  }
  // After a cd, pushd or popd, a relative target is not in the request's
  // working directory any more.
  bool moved = false;
  for (std::size_t i = 0; i < split.segments.size(); ++i) {
    const auto& seg = split.segments[i];
    parts.push_back({part_kind::segment, request.action, &seg, {},
                     "segment " + std::to_string(i + 1) + ": " + segment_text(seg)});
    for (const auto& r : seg.redirects) {
      action_kind kind = r.writes ? action_kind::filesystem_write : action_kind::filesystem_read;
      if (r.target.dynamic || r.target.text.empty()) continue;  // the splitter marked it uncertain
      std::string target = r.target.text;
      if (target.front() != '/') {
        if (request.working_directory.empty()) {
          split.uncertain.push_back("relative redirection target \"" + target + "\" without a working directory");
          continue;
        }
        if (moved) {
          split.uncertain.push_back("relative redirection target \"" + target + "\" after a change of directory");
          continue;
        }
        target = request.working_directory + "/" + target;
      }
      auto normal = normalize_absolute_path(target);
      if (!normal) continue;
      parts.push_back({part_kind::path, kind, nullptr, *normal,
                       std::string(r.writes ? "redirect to " : "redirect from ") + *normal});
    }
    if (!seg.words.empty()) {
      std::string_view command = seg.words[0].text;
      command = command.substr(command.find_last_of('/') == std::string_view::npos ? 0 : command.find_last_of('/') + 1);
      moved = moved || command == "cd" || command == "pushd" || command == "popd";
    }
  }
  for (const auto& p : request.paths) parts.push_back({part_kind::path, request.action, nullptr, p, "path " + p});
  for (const auto& h : request.hosts) parts.push_back({part_kind::host, request.action, nullptr, h, "host " + h});
  for (const auto& v : request.variables) {
    parts.push_back({part_kind::variable, request.action, nullptr, v, "variable " + v});
  }
  if (parts.empty() && split.uncertain.empty()) parts.push_back({part_kind::whole, request.action, nullptr, {}, "request"});
  return parts;
}

}  // namespace

std::string_view to_string(decision_kind d) noexcept {
  switch (d) {
    case decision_kind::allow: return "allow";
    case decision_kind::deny: return "deny";
    case decision_kind::require_approval: return "require_approval";
  }
  return "deny";
}

std::optional<decision_kind> decision_kind_from_string(std::string_view s) noexcept {
  if (s == "allow") return decision_kind::allow;
  if (s == "deny") return decision_kind::deny;
  if (s == "require_approval") return decision_kind::require_approval;
  return std::nullopt;
}

decision_kind combine(decision_kind a, decision_kind b) noexcept {
  if (a == decision_kind::deny || b == decision_kind::deny) return decision_kind::deny;
  if (a == decision_kind::require_approval || b == decision_kind::require_approval) return decision_kind::require_approval;
  return decision_kind::allow;
}

bool capability_policy::covers(const capability_rule& rule, const capability_request& request) const {
  shell_split split;
  auto parts = parts_of(request, split);
  return std::any_of(parts.begin(), parts.end(), [&](const part& p) { return rule_covers(rule, request, p); });
}

capability_policy_result capability_policy::evaluate(const capability_request& request) const {
  capability_policy_result out;
  shell_split split;
  auto parts = parts_of(request, split);
  std::optional<decision_kind> overall;
  const part_decision* decider = nullptr;
  for (const auto& p : parts) {
    part_decision d{p.label, decision_kind::deny, {}, "no rule covers " + p.label};
    bool covered = false;
    for (const auto& rule : rules_) {
      if (!rule_covers(rule, request, p)) continue;
      // The first rule of the strongest decision names the part's reason.
      if (!covered || combine(d.decision, rule.decision) != d.decision) {
        d.decision = covered ? combine(d.decision, rule.decision) : rule.decision;
        d.rule_id = rule.id;
        d.reason = rule.reason;
      }
      covered = true;
      if (d.decision == decision_kind::deny) break;
    }
    out.parts.push_back(std::move(d));
  }
  for (const auto& d : out.parts) {
    if (!overall || combine(*overall, d.decision) != *overall) {
      overall = overall ? combine(*overall, d.decision) : d.decision;
      decider = &d;
    }
  }
  out.uncertain = split.uncertain;
  if (!split.uncertain.empty() && (!overall || *overall == decision_kind::allow)) {
    out.decision = decision_kind::require_approval;
    out.reason = "the command cannot be judged with certainty: " + split.uncertain.front();
    return out;
  }
  if (!overall) {  // unreachable: a request has at least one part
    out.decision = decision_kind::deny;
    out.reason = "nothing to judge";
    return out;
  }
  out.decision = *overall;
  out.reason = decider->reason;
  out.rule_id = decider->rule_id;
  return out;
}

}  // namespace cordon::governance
