// external_approver.cpp — one process per decision: the request on stdin,
// the decision on stdout; anything but a well-formed answer in time denies.
#include "cordon/governance/approval.h"
#include "governance/child_process.h"

namespace cordon::governance {
namespace {

approval_decision denied(std::string why) {
  return {approval_decision_kind::denied, approval_scope::once, std::move(why), {}, {}};
}

}  // namespace

external_command_approval_service::external_command_approval_service(std::vector<std::string> argv,
                                                                     std::chrono::milliseconds timeout)
    : argv_(std::move(argv)), timeout_(timeout), name_("command:" + (argv_.empty() ? std::string() : argv_[0])) {}

approval_decision external_command_approval_service::decide(const approval_request& request) {
  auto ran = detail::run_child(argv_, approval_request_json(request) + "\n", timeout_);
  if (!ran) return denied("the approver could not run: " + ran.error_value().describe());
  if (ran->timed_out) return denied("the approver did not answer within " + std::to_string(timeout_.count()) + " ms");
  if (!ran->exited) return denied("the approver was killed by signal " + std::to_string(ran->signal));
  if (ran->exit_code != 0) return denied("the approver exited with status " + std::to_string(ran->exit_code));
  auto decision = approval_decision_from_json(ran->output);
  if (!decision) return denied("the approver's answer is not a decision: " + decision.error_value().describe());
  if (decision->request_digest != request.request_digest) {
    return denied("the approver answered for another request (" + decision->request_digest + ")");
  }
  return *decision;
}

}  // namespace cordon::governance
