// cordon/governance/runtime.h — the execution runtime: one request from
// "may this be attempted?" to "what confined it", every step audited.
//
//   request -> capability policy -> backend selection -> compile
//           -> approval (shown the compiled plan) -> run -> report -> audit
//
// Compile comes before approval so that an approver sees the plan's real
// per-control levels; the approval can only permit or refuse that plan, and
// the plan that runs is the one that was shown (docs/governance.md).
//
// Events (module "execution"), each with ids run_id, request_digest,
// rules_digest and, where they exist, session_id, trace_id,
// sandbox_policy_digest and report_digest:
//   policy.decision     outcome allow / deny / require_approval
//   sandbox.refused     compile refused the sandbox policy (report attached)
//   approval            outcome approved / denied / manual_review / rejected
//   request.authorized  an allowed request that runs no command
//   request.rejected    why the runtime would not go on (no approver, stale
//                       revision, backend selection, invalid request)
//   run.started         the command is about to run
//   run.completed | run.failed | run.cancelled | run.timeout
//                       with the sandbox report under documents["report"]
// When the approval service is for tests only (allow_all), every event
// carries attributes approval_service and approval_for_tests_only = "true".
//
// Fail closed on audit: if the sink refuses an event, nothing further
// happens for that request, and every later request is rejected with the
// sink's error (the runtime does not run what it cannot record).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/governance/approval.h"
#include "cordon/governance/audit.h"
#include "cordon/governance/capability_policy.h"
#include "cordon/governance/capability_request.h"
#include "cordon/capture.h"
#include "cordon/launch.h"
#include "cordon/policy.h"
#include "cordon/prepared.h"

namespace cordon::governance {

// Backend selection (docs/governance.md, "Backend selection"):
//   auto     a restricted sandbox policy needs the platform sandbox and fails
//            closed without one; an unrestricted one uses the sandbox when
//            it is available, else the host;
//   require  the platform sandbox or nothing;
//   forbid   host execution; refused for a restricted policy (forbid is an
//            orchestration input, never a way around the boundary).
enum class backend_preference { auto_select, require, forbid };
std::string_view to_string(backend_preference p) noexcept;
std::optional<backend_preference> backend_preference_from_string(std::string_view s) noexcept;

// True unless the policy reads everything, writes "/", has unrestricted
// network and inherits the whole environment.
bool is_restricted(const sandbox_policy& policy) noexcept;

enum class execution_status {
  completed,   // the command ran and ended (any exit status, or a signal)
  authorized,  // allowed; the action runs no command (filesystem_read, ...)
  denied,      // the capability policy or the approver said no
  rejected,    // the runtime would not go on: approval needed but unavailable,
               // manual review, stale revision, backend selection, audit failure,
               // invalid request
  refused,     // the sandbox cannot enforce the policy (compile refused)
  failed,      // the command could not start (not found, sandbox setup)
  cancelled,   // cancel() stopped it
  timed_out,   // the policy's timeout killed it
};
std::string_view to_string(execution_status s) noexcept;

struct execution_context {
  std::string session_id;
  std::string workspace;              // absolute; resolves {workspace}
  sandbox_policy policy;              // the session boundary's policy
  std::uint64_t boundary_revision = 0;
  backend_preference backend = backend_preference::auto_select;
  std::vector<std::string> host_environment;  // "NAME=VALUE" the policy may pass through
};

// Adds cordon's own records of a run to `context.policy`'s
// filesystem.denied, so the command can neither write nor read them: an audit
// log at `audit_path` and its head (`audit_path` + ".head", cordon/governance/
// audit.h), and `session_path`, a session boundary's file. Either may be
// empty. Each becomes absolute with its directory's symlinks resolved (the
// policy names real paths, docs/policy.md); one that cannot is skipped. A
// command that could write them would break the chain, forge records or
// grant itself authority (docs/governance.md, "Audit").
void deny_records_to_command(execution_context& context, const std::string& audit_path,
                             const std::string& session_path);

// The tool-use call's input and output handling (execution_runtime::
// execute_tool): what the command reads, how long it may take, how much of
// its output the host keeps, and where it starts.
struct tool_io {
  std::string stdin_data;  // the command's stdin (then end of file); empty: end of file at once
  int stdin_fd = -1;       // >= 0: the command reads this descriptor instead (duplicated; the caller keeps it)
  // "NAME=VALUE" for this call only, added to (or replacing in) the
  // context's host environment. They pass the policy's environment rules
  // like any other; one the rules drop is named in the result's warnings.
  std::vector<std::string> environment;
  // Wall-clock limit from the start of the command: the tree is killed, the
  // status is timed_out, the exit status 124. nullopt: only the policy's
  // process.timeout_ms (if any).
  std::optional<std::chrono::milliseconds> timeout;
  std::uint64_t max_output = default_max_output;  // bytes kept per stream (cordon/capture.h)
  // Every chunk as it is read (stream 1 stdout, 2 stderr), on the calling
  // thread, before the cap.
  std::function<void(int stream, std::string_view bytes)> on_output;
  // A pool of prepared sandboxes (cordon/prepared.h). The command starts in
  // one of its sandboxes when the pool's plan is the plan compiled for this
  // request (same plan_fingerprint), so that the plan the approver saw is the
  // one that runs; otherwise, or when the pool has none ready in time, it
  // starts cold under the compiled plan, and the result's warnings say why.
  prepared_pool* pool = nullptr;
};

struct execution_result {
  execution_status status = execution_status::rejected;
  std::string reason;                 // one line
  std::string run_id;                 // 32 hex digits
  capability_policy_result decision;
  std::optional<approval_decision> approval;
  std::string request_digest, rules_digest, sandbox_policy_digest, report_digest;
  std::string report_json;            // the sandbox report, when there is one
  std::optional<run_outcome> outcome;
  // Set by execute_tool for a command that ran: its captured output (the
  // head and the tail within tool_io::max_output, with what was dropped).
  captured_output stdout_data, stderr_data;
  bool pooled = false;                // it started in a prepared sandbox of tool_io::pool
  std::vector<std::string> warnings;  // e.g. why the pool was not used
  // What the sandbox refused or hid that the command's own output may not
  // explain, one "[cordon] ..." line each (sandbox_notes(report_json)); empty
  // when there is no report or nothing to say.
  std::vector<std::string> sandbox_notes;
};

// The lines a model can act on for a run's report (docs/governance.md, "The
// tool-use call"): for each violation "[cordon] blocked by the sandbox: KIND
// TARGET (xCOUNT); the policy refuses it, retrying will not help" (the
// sandbox refused it, not the command), then each of the report's view
// diagnoses (a host path the command named that is outside the sandbox's
// view, and the --ro that adds it, src/linux/view_diagnosis.cpp) as
// "[cordon] TEXT". Input: the report JSON (schemas/report.v1.schema.json);
// text that is not a JSON object gives no lines. Never fails. Used by the
// runtime for every result with a report, and by cordon mcp's shell tool.
std::vector<std::string> sandbox_notes(std::string_view report_json);

// The exit status `cordon exec` gives for a result (docs/governance.md,
// "Exit status"): the command's own, 128+signal, 124 timed out, 125 refused
// or failed to start (126 not executable, 127 not found), 200 denied, 201
// rejected or cancelled, 0 authorized.
int exit_status(const execution_result& r) noexcept;

class execution_runtime {
 public:
  // `audit` is required (the runtime rejects every request without one);
  // `approvals` may be null (then require_approval = rejected); `ledger` may
  // be null (then session and workspace grants are not remembered). The
  // pointers must outlive the runtime.
  execution_runtime(capability_policy rules, audit_sink* audit, approval_service* approvals,
                    approval_ledger* ledger = nullptr);
  ~execution_runtime();
  execution_runtime(const execution_runtime&) = delete;
  execution_runtime& operator=(const execution_runtime&) = delete;

  // Judges, and when allowed runs, one request in `context`. Blocks until the
  // command ends. One request at a time per runtime.
  execution_result execute(capability_request request, const execution_context& context);

  // The tool-use call: the same steps as execute() (rules, approval shown the
  // compiled plan, the ledger's session and workspace grants, every step
  // audited), but the command's stdin comes from io.stdin_data, its stdout
  // and stderr are captured into the result (capped: io.max_output), the
  // host deadline io.timeout applies, and it may start from io.pool. The run
  // events carry attributes stdout_bytes, stderr_bytes, stdout_dropped,
  // stderr_dropped and pooled; the report carries "output". Host execution
  // (backend selection forbid, or no sandbox for an unrestricted policy) is
  // rejected: the tool-use call always runs confined.
  execution_result execute_tool(capability_request request, const execution_context& context, const tool_io& io);

  // Cancels the run in progress (from another thread), or the next one if
  // none is running yet: that run is recorded as cancelled.
  void cancel();

  // Why the runtime refuses new runs (its audit sink failed), if it does.
  std::optional<std::string> refusing() const;

  const capability_policy& rules() const noexcept { return rules_; }

 private:
  execution_result run_request(capability_request request, const execution_context& context, const tool_io* io);
  struct impl;
  capability_policy rules_;
  audit_sink* audit_;
  approval_service* approvals_;
  approval_ledger* ledger_;
  std::unique_ptr<impl> impl_;
};

}  // namespace cordon::governance
