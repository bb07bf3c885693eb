// sbpl_model.cpp — the rule-semantics model of sbpl_model.h.
#include "sbpl_model.h"

#include <algorithm>
#include <optional>
#include <regex>

namespace cordon::macos_test {

using macos_impl::sbpl_node;

sbpl_model::sbpl_model(const std::string& profile, std::map<std::string, std::string> params)
    : params_(std::move(params)) {
  auto forms = macos_impl::read_sbpl(profile);
  if (!forms) return;
  for (const auto& f : *forms) {
    if (f.head() != "allow" && f.head() != "deny") continue;
    rule r;
    r.allow = f.head() == "allow";
    for (std::size_t i = 1; i < f.items.size(); ++i) {
      const sbpl_node& item = f.items[i];
      if (item.type == sbpl_node::kind::symbol) {
        r.operations.push_back(item.text);
      } else if (item.head() != "with") {
        r.filters.push_back(item);
      }
    }
    if (r.operations.size() == 1 && r.operations[0] == "default") continue;  // the fallback
    rules_.push_back(std::move(r));
  }
  ok_ = true;
}

bool sbpl_model::covers(const std::string& rule_operation, const std::string& operation) {
  if (rule_operation == operation) return true;
  if (!rule_operation.empty() && rule_operation.back() == '*') {
    return operation.rfind(rule_operation.substr(0, rule_operation.size() - 1), 0) == 0;
  }
  return false;
}

std::string sbpl_model::argument(const sbpl_node& arg) const {
  if (arg.is_list() && arg.head() == "param" && arg.items.size() == 2) {
    auto it = params_.find(arg.items[1].text);
    return it == params_.end() ? std::string("\x01missing") : it->second;
  }
  return arg.text;
}

bool sbpl_model::matches(const sbpl_node& f, const std::string& path) const {
  const std::string_view head = f.head();
  if (head == "require-all") {
    for (std::size_t i = 1; i < f.items.size(); ++i) {
      if (!matches(f.items[i], path)) return false;
    }
    return true;
  }
  if (head == "require-any") {
    for (std::size_t i = 1; i < f.items.size(); ++i) {
      if (matches(f.items[i], path)) return true;
    }
    return false;
  }
  if (head == "require-not") return !matches(f.items.at(1), path);
  if (f.items.size() != 2) return false;
  const std::string a = argument(f.items[1]);
  if (head == "literal" || head == "path") return path == a;
  if (head == "subpath") {
    if (a == "/") return true;
    return path == a || (path.size() > a.size() && path.compare(0, a.size(), a) == 0 && path[a.size()] == '/');
  }
  if (head == "prefix") return path.rfind(a, 0) == 0;
  if (head == "regex") return std::regex_search(path, std::regex(a, std::regex::extended));
  return false;  // not a path filter: never matches a file operation
}

bool sbpl_model::allows(const std::string& operation, const std::string& path, match_order order) const {
  std::vector<const rule*> candidates;
  for (const auto& r : rules_) candidates.push_back(&r);
  if (order == match_order::reversed_last) std::reverse(candidates.begin(), candidates.end());
  std::optional<bool> verdict;
  for (const rule* r : candidates) {
    bool op = false;
    for (const auto& o : r->operations) op = op || covers(o, operation);
    if (!op) continue;
    bool hit = r->filters.empty();
    for (const auto& f : r->filters) hit = hit || matches(f, path);
    if (!hit) continue;
    verdict = r->allow;
    if (order == match_order::first) break;
  }
  return verdict.value_or(false);
}

}  // namespace cordon::macos_test
