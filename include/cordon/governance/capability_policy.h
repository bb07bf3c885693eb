// cordon/governance/capability_policy.h — may this request be attempted?
//
// A capability policy is a list of rules read from a JSON file
// (schemas/capability_rules.v1.schema.json, docs/governance.md "Rules").
// Evaluation is pure: no file, process or network is touched, and the answer
// is one of three decisions:
//   allow             the request may run (it still runs under the sandbox);
//   deny              it may not, with the deciding rule's reason;
//   require_approval  an approval service must decide (approval.h).
//
// How a request is judged. It is cut into parts: each shell segment (the
// splitter in shell_split.h; argv requests are one segment, or the script of
// `bash -c`), each redirection target (a filesystem_write or _read of that
// path), each path, host and variable in its resources; a request with none
// of these is one part. A rule covers a part when its action, tool, subject
// and risk lists (an empty list: any) accept the request and:
//   - a segment:  `commands` and `command_forms` are empty, or a pattern
//                 or a form matches its argv (command_form);
//   - a path:     `paths` is empty, or a pattern matches it;
//   - a host:     `hosts` is empty, or a pattern matches it;
//   - a variable: `variables` is empty, or a pattern matches it;
//   - the whole request (no parts): the rule has none of the four lists.
// A rule that names one kind of list covers no part of another kind.
// Each part's decision combines the rules covering it: deny beats
// require_approval beats allow; a part no rule covers is denied. The
// request's decision combines its parts the same way, and a shell command the
// splitter could not parse with certainty is at least require_approval:
// never allow.
//
// Matching is conservative in the direction of the rule: for deny and
// require_approval rules a dynamic shell word (`$X`, `*`) matches any pattern
// word, a destination without a port matches a pattern with one, and a path
// that contains a denied prefix ("/" for a rule on "/etc") is covered; for
// allow rules none of these match.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/governance/capability_request.h"
#include "cordon/result.h"

namespace cordon::governance {

enum class decision_kind { allow, deny, require_approval };
std::string_view to_string(decision_kind d) noexcept;
std::optional<decision_kind> decision_kind_from_string(std::string_view s) noexcept;

// deny > require_approval > allow.
decision_kind combine(decision_kind a, decision_kind b) noexcept;

// A command pattern with the program's arguments read as the program parses
// them (docs/governance.md, "Command forms"): the form matches a segment when
// `command` matches the start of its argv (as a string pattern of `commands`
// does, git's global options skipped) and, in the arguments after those
// words, read as getopt_long reads them (clusters "-vRf", long options with
// "=value", options after operands, "--" ending the options):
//   - `options` is empty, or one of them is present ("-R" in "-vRf",
//     "--recursive" as "--recursive" or, for deny and require_approval rules,
//     an abbreviation such as "--rec"; "-delete", one dash and several
//     letters, is a whole word, find's way);
//   - `operands` is empty, or an operand (a word that is not an option or an
//     option's value; every word after "--") matches one of these globs.
// `with_value` names the options that take a value (the rest of the word, or
// the next word: "-b NAME", "-bNAME", "--orphan NAME"), so that the value is
// not read as an option or an operand. For deny and require_approval rules a
// dynamic word before "--" could be any option or operand and matches.
struct command_form {
  std::string command;                  // words, each a glob, as in capability_rule::commands
  std::vector<std::string> options;     // "-x", "--name", "-name"
  std::vector<std::string> operands;    // globs
  std::vector<std::string> with_value;  // "-x", "--name": options that take a value
};

struct capability_rule {
  std::string id;      // unique in the file
  std::string reason;  // shown with a deny, and in audit events
  decision_kind decision = decision_kind::deny;
  std::vector<action_kind> actions;    // empty: every action
  std::vector<risk_level> risks;       // empty: every risk
  std::vector<std::string> tools;      // globs (* ?); empty: every tool
  std::vector<std::string> subjects;   // globs; empty: every subject
  // Command patterns: words separated by spaces, each a glob; the pattern
  // matches an argv that starts with those words ("git status" matches
  // `git status -s`). A first word without "/" is compared with argv[0]'s
  // basename.
  std::vector<std::string> commands;
  // Command forms (patterns with options and operands): in the rules file,
  // the objects of the "commands" list.
  std::vector<command_form> command_forms;
  // Path patterns, absolute. Without a glob character a prefix on path
  // components ("/work" covers "/work" and "/work/a", not "/workx"). With one:
  // `*` and `?` within one component, `**` across components; "/a/**" also
  // covers "/a".
  std::vector<std::string> paths;
  // Host patterns with an optional port, the network rules' syntax and
  // matcher (cordon/host_rules.h): "example.com", "*.example.com",
  // "**.example.com:443", "*", IP literals.
  std::vector<std::string> hosts;
  std::vector<std::string> variables;  // name globs, e.g. "AWS_*"
  std::vector<capability_request> match_examples;      // requests this rule must cover
  std::vector<capability_request> not_match_examples;  // requests it must not cover
};

// A file-level example: this request must get this decision.
struct policy_example {
  std::string name;
  capability_request request;
  decision_kind decision = decision_kind::deny;
};

// Which rule decided which part of a request.
struct part_decision {
  std::string part;          // "segment 1: git status", "path /etc/passwd", "request"
  decision_kind decision = decision_kind::deny;
  std::string rule_id;       // empty when no rule covered the part
  std::string reason;        // the rule's reason, or why nothing covered it
};

struct capability_policy_result {
  decision_kind decision = decision_kind::deny;
  // One line: for deny, the deciding rule's reason (or "no rule covers ...");
  // for require_approval, the rule's reason or the splitter's doubt.
  std::string reason;
  std::string rule_id;                 // the deciding rule, when one decided
  std::vector<part_decision> parts;    // every part, in request order
  std::vector<std::string> uncertain;  // the shell splitter's doubts
};

class capability_policy {
 public:
  // Reads and checks a rules file: strict structure (unknown fields are
  // errors), unique rule ids, valid patterns; then every example in it
  // (rule-level match / not_match and file-level decisions) is evaluated and
  // a failing one is an error at its location ("/rules/2/examples/match/0").
  // Errors: parse_error; invalid_policy with a JSON pointer.
  static result<capability_policy> from_json(std::string_view text);
  // The same for a file; io_error (errno) when it cannot be read.
  static result<capability_policy> load(const std::string& path);

  // Judges one (normalized) request. Pure; never fails.
  capability_policy_result evaluate(const capability_request& request) const;

  // Does `rule` cover at least one part of `request`? (The `match` examples.)
  bool covers(const capability_rule& rule, const capability_request& request) const;

  const std::string& name() const noexcept { return name_; }
  const std::vector<capability_rule>& rules() const noexcept { return rules_; }
  const std::vector<policy_example>& examples() const noexcept { return examples_; }
  // "sha256:..." over the canonical JSON of the file as read.
  const std::string& digest() const noexcept { return digest_; }

  // Builds a policy from rules in code (tests, benchmarks); the examples are
  // checked as from_json does. Errors: invalid_policy.
  static result<capability_policy> from_rules(std::string name, std::vector<capability_rule> rules,
                                              std::vector<policy_example> examples = {});

 private:
  std::string name_;
  std::vector<capability_rule> rules_;
  std::vector<policy_example> examples_;
  std::string digest_;
};

}  // namespace cordon::governance
