// capability_rules_json.cpp — reading a rules file
// (schemas/capability_rules.v1.schema.json) and checking its examples, so
// that a wrong rule fails at load, not in production.
#include <fstream>
#include <sstream>

#include "cordon/governance/capability_policy.h"
#include "cordon/host_rules.h"
#include "governance/command_args.h"
#include "governance/host_port.h"
#include "governance/json_util.h"

namespace cordon::governance {
namespace {

using detail::json;

result<capability_request> request_from(const json& value, const std::string& where) {
  json copy = value;
  if (copy.is_object() && !copy.contains("schema_version")) copy["schema_version"] = capability_request_schema_version;
  auto r = capability_request_from_json(copy.dump());
  if (!r) {
    auto err = std::move(r).error_value();
    err.location = where + err.location;
    return err;
  }
  return r;
}

result<void> check_patterns(const capability_rule& rule, const std::string& where) {
  for (std::size_t i = 0; i < rule.paths.size(); ++i) {
    if (rule.paths[i].empty() || rule.paths[i].front() != '/') {
      return detail::invalid(where + "/paths/" + std::to_string(i), "a path pattern is absolute");
    }
  }
  for (std::size_t i = 0; i < rule.hosts.size(); ++i) {
    auto split = detail::split_host_port(rule.hosts[i]);
    bool valid = static_cast<bool>(split);
    if (valid) {
      auto probe = host_pattern_matches(split->host, "example.com");
      valid = probe || probe.error_value().code != error_code::invalid_policy;
    }
    if (!valid) return detail::invalid(where + "/hosts/" + std::to_string(i), "not a host pattern: \"" + rule.hosts[i] + "\"");
  }
  for (std::size_t i = 0; i < rule.commands.size(); ++i) {
    if (rule.commands[i].find_first_not_of(' ') == std::string::npos) {
      return detail::invalid(where + "/commands/" + std::to_string(i), "an empty command pattern");
    }
  }
  for (std::size_t i = 0; i < rule.command_forms.size(); ++i) {
    // In the file the forms follow the strings in one list; from_rules names them after them too.
    auto at = where + "/commands/" + std::to_string(rule.commands.size() + i);
    if (auto checked = detail::check_command_form(rule.command_forms[i], at); !checked) return checked;
  }
  return ok;
}

// One command form: {"command": "rm", "options": [...], "operands": [...], "with_value": [...]}.
result<command_form> form_from(const json& j, const std::string& where) {
  if (auto keys = detail::check_keys(j, {"command", "options", "operands", "with_value"}, where); !keys) {
    return std::move(keys).error_value();
  }
  command_form form;
  auto command = detail::get_string(j, "command", where, true);
  if (!command) return std::move(command).error_value();
  form.command = *command;
  for (auto [key, field] : {std::pair{"options", &form.options}, std::pair{"operands", &form.operands},
                            std::pair{"with_value", &form.with_value}}) {
    auto list = detail::get_strings(j, key, where);
    if (!list) return std::move(list).error_value();
    *field = std::move(*list);
  }
  if (auto checked = detail::check_command_form(form, where); !checked) return std::move(checked).error_value();
  return form;
}

// "commands": strings (word patterns) and objects (command forms), in one
// list; the strings keep their order, so do the forms. Errors point at the
// item in the file.
result<void> commands_from(const json& j, const std::string& where, capability_rule& rule) {
  auto list = j.find("commands");
  if (list == j.end()) return ok;
  if (!list->is_array()) return detail::invalid(where + "/commands", "expected an array of command patterns");
  for (std::size_t i = 0; i < list->size(); ++i) {
    const json& item = (*list)[i];
    std::string at = where + "/commands/" + std::to_string(i);
    if (item.is_string()) {
      rule.commands.push_back(item.get<std::string>());
    } else if (item.is_object()) {
      auto form = form_from(item, at);
      if (!form) return std::move(form).error_value();
      rule.command_forms.push_back(std::move(*form));
    } else {
      return detail::invalid(at, "a command pattern is a string or a command form (an object)");
    }
  }
  return ok;
}

result<capability_rule> rule_from(const json& j, const std::string& where) {
  if (auto keys = detail::check_keys(j, {"id", "reason", "decision", "actions", "risks", "tools", "subjects", "commands",
                                         "paths", "hosts", "variables", "examples"}, where);
      !keys) {
    return std::move(keys).error_value();
  }
  capability_rule rule;
  auto id = detail::get_string(j, "id", where, true);
  if (!id) return std::move(id).error_value();
  auto reason = detail::get_string(j, "reason", where, true);
  if (!reason) return std::move(reason).error_value();
  auto decision = detail::get_string(j, "decision", where, true);
  if (!decision) return std::move(decision).error_value();
  if (id->empty()) return detail::invalid(where + "/id", "a rule id is not empty");
  if (reason->empty()) return detail::invalid(where + "/reason", "a rule gives its reason");
  auto kind = decision_kind_from_string(*decision);
  if (!kind) return detail::invalid(where + "/decision", "allow, deny or require_approval");
  rule.id = *id;
  rule.reason = *reason;
  rule.decision = *kind;
  auto actions = detail::get_strings(j, "actions", where);
  if (!actions) return std::move(actions).error_value();
  for (std::size_t i = 0; i < actions->size(); ++i) {
    auto a = action_kind_from_string((*actions)[i]);
    if (!a) return detail::invalid(where + "/actions/" + std::to_string(i), "unknown action \"" + (*actions)[i] + "\"");
    rule.actions.push_back(*a);
  }
  auto risks = detail::get_strings(j, "risks", where);
  if (!risks) return std::move(risks).error_value();
  for (std::size_t i = 0; i < risks->size(); ++i) {
    auto r = risk_level_from_string((*risks)[i]);
    if (!r) return detail::invalid(where + "/risks/" + std::to_string(i), "unknown risk \"" + (*risks)[i] + "\"");
    rule.risks.push_back(*r);
  }
  auto commands = commands_from(j, where, rule);
  if (!commands) return std::move(commands).error_value();
  for (auto [key, field] : {std::pair{"tools", &rule.tools}, std::pair{"subjects", &rule.subjects},
                            std::pair{"paths", &rule.paths},
                            std::pair{"hosts", &rule.hosts}, std::pair{"variables", &rule.variables}}) {
    auto list = detail::get_strings(j, key, where);
    if (!list) return std::move(list).error_value();
    *field = std::move(*list);
  }
  if (auto checked = check_patterns(rule, where); !checked) return std::move(checked).error_value();
  if (auto ex = j.find("examples"); ex != j.end()) {
    std::string at = where + "/examples";
    if (auto keys = detail::check_keys(*ex, {"match", "not_match"}, at); !keys) return std::move(keys).error_value();
    for (auto [key, field] : {std::pair{"match", &rule.match_examples}, std::pair{"not_match", &rule.not_match_examples}}) {
      auto list = ex->find(key);
      if (list == ex->end()) continue;
      if (!list->is_array()) return detail::invalid(at + "/" + key, "expected an array of requests");
      for (std::size_t i = 0; i < list->size(); ++i) {
        auto r = request_from((*list)[i], at + "/" + key + "/" + std::to_string(i));
        if (!r) return std::move(r).error_value();
        field->push_back(std::move(*r));
      }
    }
  }
  return rule;
}

result<policy_example> example_from(const json& j, const std::string& where) {
  if (auto keys = detail::check_keys(j, {"name", "request", "decision"}, where); !keys) return std::move(keys).error_value();
  policy_example ex;
  auto name = detail::get_string(j, "name", where, false);
  if (!name) return std::move(name).error_value();
  ex.name = *name;
  auto decision = detail::get_string(j, "decision", where, true);
  if (!decision) return std::move(decision).error_value();
  auto kind = decision_kind_from_string(*decision);
  if (!kind) return detail::invalid(where + "/decision", "allow, deny or require_approval");
  ex.decision = *kind;
  if (!j.contains("request")) return detail::invalid(where + "/request", "required field is missing");
  auto r = request_from(j["request"], where + "/request");
  if (!r) return std::move(r).error_value();
  ex.request = std::move(*r);
  return ex;
}

// Every example of the file, against the policy it belongs to.
result<void> check_examples(const capability_policy& policy) {
  for (std::size_t i = 0; i < policy.rules().size(); ++i) {
    const auto& rule = policy.rules()[i];
    std::string at = "/rules/" + std::to_string(i) + "/examples/";
    for (std::size_t k = 0; k < rule.match_examples.size(); ++k) {
      if (!policy.covers(rule, rule.match_examples[k])) {
        return detail::invalid(at + "match/" + std::to_string(k), "rule \"" + rule.id + "\" does not cover this example");
      }
    }
    for (std::size_t k = 0; k < rule.not_match_examples.size(); ++k) {
      if (policy.covers(rule, rule.not_match_examples[k])) {
        return detail::invalid(at + "not_match/" + std::to_string(k), "rule \"" + rule.id + "\" covers this example");
      }
    }
  }
  for (std::size_t i = 0; i < policy.examples().size(); ++i) {
    const auto& ex = policy.examples()[i];
    auto got = policy.evaluate(ex.request);
    if (got.decision != ex.decision) {
      return detail::invalid("/examples/" + std::to_string(i),
                             "example \"" + ex.name + "\" expects " + std::string(to_string(ex.decision)) + ", got " +
                                 std::string(to_string(got.decision)) + " (" + got.reason + ")");
    }
  }
  return ok;
}

}  // namespace

result<capability_policy> capability_policy::from_rules(std::string name, std::vector<capability_rule> rules,
                                                        std::vector<policy_example> examples) {
  capability_policy policy;
  for (std::size_t i = 0; i < rules.size(); ++i) {
    if (auto checked = check_patterns(rules[i], "/rules/" + std::to_string(i)); !checked) {
      return std::move(checked).error_value();
    }
    for (std::size_t k = 0; k < i; ++k) {
      if (rules[k].id == rules[i].id) return detail::invalid("/rules/" + std::to_string(i) + "/id", "duplicate rule id \"" + rules[i].id + "\"");
    }
  }
  policy.name_ = std::move(name);
  policy.rules_ = std::move(rules);
  policy.examples_ = std::move(examples);
  if (auto checked = check_examples(policy); !checked) return std::move(checked).error_value();
  std::string summary = policy.name_;
  for (const auto& r : policy.rules_) summary += "\n" + r.id + "\t" + std::string(to_string(r.decision)) + "\t" + r.reason;
  policy.digest_ = sha256_digest(summary);
  return policy;
}

result<capability_policy> capability_policy::from_json(std::string_view text) {
  auto doc = detail::parse_document(text);
  if (!doc) return std::move(doc).error_value();
  const json& j = *doc;
  if (auto keys = detail::check_keys(j, {"schema_version", "name", "rules", "examples"}, ""); !keys) {
    return std::move(keys).error_value();
  }
  auto version = j.find("schema_version");
  if (version == j.end() || !version->is_number_integer() || *version != 1) {
    return detail::invalid("/schema_version", "schema_version must be 1");
  }
  auto name = detail::get_string(j, "name", "", false);
  if (!name) return std::move(name).error_value();
  auto rules_json = j.find("rules");
  if (rules_json == j.end() || !rules_json->is_array()) return detail::invalid("/rules", "expected an array of rules");
  std::vector<capability_rule> rules;
  for (std::size_t i = 0; i < rules_json->size(); ++i) {
    auto rule = rule_from((*rules_json)[i], "/rules/" + std::to_string(i));
    if (!rule) return std::move(rule).error_value();
    rules.push_back(std::move(*rule));
  }
  std::vector<policy_example> examples;
  if (auto ex = j.find("examples"); ex != j.end()) {
    if (!ex->is_array()) return detail::invalid("/examples", "expected an array of examples");
    for (std::size_t i = 0; i < ex->size(); ++i) {
      auto e = example_from((*ex)[i], "/examples/" + std::to_string(i));
      if (!e) return std::move(e).error_value();
      examples.push_back(std::move(*e));
    }
  }
  auto policy = from_rules(*name, std::move(rules), std::move(examples));
  if (!policy) return policy;
  policy->digest_ = sha256_digest(detail::canonical(j));
  return policy;
}

result<capability_policy> capability_policy::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(error_code::io_error, "cannot read " + path, {}, errno);
  std::ostringstream text;
  text << in.rdbuf();
  return from_json(text.str());
}

}  // namespace cordon::governance
