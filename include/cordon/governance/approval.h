// cordon/governance/approval.h — who decides a require_approval request.
//
// An approval service sees an approval_request: the capability request, its
// digest and normalized form, why the capability policy wants approval, and
// the compiled sandbox plan's level for every control, so that the approver
// knows what will really be enforced. It answers approved, denied or
// manual_review, with a scope. The answer can only permit or refuse the run:
// it has no field that could change the plan, and the runtime launches the
// very plan that was shown (docs/governance.md, "Approvals").
//
// Scopes are enforced by the runtime (runtime.h) through an approval_ledger
// and are bound to what was shown:
//   once       this request (its digest), this time only; never remembered;
//   session    the same normalized request in the same session id;
//   workspace  the same normalized request in the same workspace path under
//              the same sandbox policy digest (stricter than the path alone:
//              a workspace approval never covers another command).
// manual_review means "a human must look later": the run does not happen.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/governance/capability_policy.h"
#include "cordon/governance/capability_request.h"
#include "cordon/result.h"

namespace cordon::governance {

enum class approval_decision_kind { approved, denied, manual_review };
enum class approval_scope { once, session, workspace };
std::string_view to_string(approval_decision_kind k) noexcept;
std::string_view to_string(approval_scope s) noexcept;
std::optional<approval_decision_kind> approval_decision_kind_from_string(std::string_view s) noexcept;
std::optional<approval_scope> approval_scope_from_string(std::string_view s) noexcept;

// One control of the compiled plan, as the report names it.
struct control_level {
  std::string control;    // e.g. "filesystem_write"
  std::string level;      // "enforced", "partial", "not_enforced", ...
  std::string mechanism;  // e.g. "landlock abi 7 + mount namespace"
  bool operator==(const control_level&) const = default;
};

struct approval_request {
  capability_request request;
  std::string request_digest;          // request_digest(request)
  std::string normalized_form;         // normalized_form(request)
  capability_policy_result policy;     // why approval is asked
  std::string rules_digest;            // the capability policy's digest
  std::string session_id;
  std::string workspace;
  std::string sandbox_policy_digest;   // of the normalized sandbox policy (report's policy_digest)
  std::string backend;                 // e.g. "linux-namespaces", or "host" (no sandbox)
  std::vector<control_level> plan_levels;
  std::vector<std::string> plan_warnings;
};

struct approval_decision {
  approval_decision_kind kind = approval_decision_kind::denied;
  approval_scope scope = approval_scope::once;
  std::string reason;
  // The digest of the request the approver answered. Empty from in-process
  // services (the runtime fills it); an external answer must carry it, and
  // one that names another digest counts as denied.
  std::string request_digest;
  std::string approver;  // the service's name, filled by the runtime
};

class approval_service {
 public:
  virtual ~approval_service() = default;
  // Decides one request. Must not throw; a service that cannot decide denies.
  virtual approval_decision decide(const approval_request& request) = 0;
  virtual std::string_view name() const noexcept = 0;
  // True for services that approve without anyone looking (allow_all): every
  // audit event of a run they approve says so.
  virtual bool for_tests_only() const noexcept { return false; }
};

// Denies everything, scope once. The default.
class deny_all_approval_service final : public approval_service {
 public:
  approval_decision decide(const approval_request& request) override;
  std::string_view name() const noexcept override { return "deny_all"; }
};

// Approves everything with `scope`. For tests only: for_tests_only() is true
// and the runtime marks every audit event of such a run.
class allow_all_approval_service final : public approval_service {
 public:
  explicit allow_all_approval_service(approval_scope scope = approval_scope::once) : scope_(scope) {}
  approval_decision decide(const approval_request& request) override;
  std::string_view name() const noexcept override { return "allow_all (tests only)"; }
  bool for_tests_only() const noexcept override { return true; }

 private:
  approval_scope scope_;
};

// Runs a program (argv, no shell, looked up in PATH) for each decision: the
// approval request as one JSON document on its stdin (approval_request_json),
// one JSON decision on its stdout:
//   {"decision": "approved"|"denied"|"manual_review",
//    "scope": "once"|"session"|"workspace", "reason": "...",
//    "request_digest": "sha256:..."}   (request_digest required)
// Denied, with the cause as the reason, when the program cannot start, exits
// non-zero, is killed, prints anything else (unknown fields included), names
// another digest, or has not answered within `timeout`.
class external_command_approval_service final : public approval_service {
 public:
  external_command_approval_service(std::vector<std::string> argv, std::chrono::milliseconds timeout);
  approval_decision decide(const approval_request& request) override;
  std::string_view name() const noexcept override { return name_; }

 private:
  std::vector<std::string> argv_;
  std::chrono::milliseconds timeout_;
  std::string name_;
};

// Asks on a terminal: shows the request, the policy's reason and the plan's
// levels, reads one answer line ("once", "session", "workspace", "manual",
// anything else: denied). Without a terminal (open fails, end of input):
// denied. The default opens /dev/tty; the fd constructor is for tests (the
// descriptors are not owned).
class terminal_approval_service final : public approval_service {
 public:
  terminal_approval_service() = default;
  terminal_approval_service(int in_fd, int out_fd) : in_fd_(in_fd), out_fd_(out_fd) {}
  approval_decision decide(const approval_request& request) override;
  std::string_view name() const noexcept override { return "terminal"; }

 private:
  int in_fd_ = -1;
  int out_fd_ = -1;
};

// The approval request as the external approver receives it (one JSON
// object, keys sorted, one line).
std::string approval_request_json(const approval_request& request);

// Reads an external approver's answer strictly (see above). Errors:
// parse_error, invalid_policy with a JSON pointer.
result<approval_decision> approval_decision_from_json(std::string_view text);

// A decision as a host shows it (the C API's and `cordon mcp`'s "approval"):
// {"decision", "scope", "reason", "approver"}, canonical JSON.
std::string approval_decision_json(const approval_decision& decision);

// The grants with session and workspace scope that the runtime remembers.
class approval_ledger {
 public:
  // Remembers `decision` for `request` when it is an approved session or
  // workspace grant; once-scope and refusals are not remembered.
  void record(const approval_request& request, const approval_decision& decision);
  // The remembered grant that covers `request`, if any.
  std::optional<approval_scope> find(const approval_request& request) const;
  std::size_t size() const noexcept { return grants_.size(); }
  // Adds the grants of `other` this ledger does not hold (two runs of one
  // session, each with the grants it recorded: the CLI merges them when it
  // writes the session file back).
  void merge(const approval_ledger& other);

  // JSON persistence (the CLI keeps the ledger in the session file).
  std::string to_json() const;
  static result<approval_ledger> from_json(std::string_view text);

 private:
  std::map<std::string, approval_scope> grants_;  // key -> scope
};

}  // namespace cordon::governance
