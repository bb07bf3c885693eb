// runtime.cpp — the execution runtime (the order of steps and the events are
// described in cordon/governance/runtime.h).
#include "cordon/governance/runtime.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>

#include "cordon/report.h"
#include "governance/sandbox_adapter.h"
#include "posix/unique_fd.h"

namespace cordon::governance {
namespace {

std::string random_run_id() {
  unsigned char bytes[16] = {};
  if (unique_fd fd(::open("/dev/urandom", O_RDONLY | O_CLOEXEC)); fd) {
    if (::read(fd.get(), bytes, sizeof bytes) != static_cast<ssize_t>(sizeof bytes)) {
      auto now = std::chrono::steady_clock::now().time_since_epoch().count();
      for (std::size_t i = 0; i < sizeof bytes; ++i) bytes[i] = static_cast<unsigned char>(now >> (i % 8 * 8));
    }
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (auto b : bytes) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 0xF]);
  }
  return out;
}

// `extra` ("NAME=VALUE") over `environment`: a name already there is replaced.
void add_environment(std::vector<std::string>& environment, const std::vector<std::string>& extra) {
  for (const auto& entry : extra) {
    const std::string name = entry.substr(0, entry.find('='));
    std::erase_if(environment, [&](const std::string& e) { return e.substr(0, e.find('=')) == name; });
    environment.push_back(entry);
  }
}

// A warning for each per-call variable the command did not receive (the
// report's environment.names lists those it did).
std::vector<std::string> dropped_variables(const std::vector<std::string>& extra, const std::string& report_json) {
  std::vector<std::string> out;
  if (extra.empty() || report_json.empty()) return out;
  auto report = nlohmann::json::parse(report_json, nullptr, false);
  if (!report.is_object() || !report.contains("environment")) return out;
  const auto names = report["environment"].value("names", nlohmann::json::array());
  for (const auto& entry : extra) {
    const std::string name = entry.substr(0, entry.find('='));
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      out.push_back("variable " + name + " was given for this call but the policy's environment rules dropped it "
                    "(environment.allow in the policy passes it through)");
    }
  }
  return out;
}

// The command a request runs, as argv.
std::vector<std::string> command_of(const capability_request& r) {
  if (r.action == action_kind::shell) return {"/bin/sh", "-c", r.command};
  return r.argv;
}

}  // namespace

std::string_view to_string(backend_preference p) noexcept {
  switch (p) {
    case backend_preference::auto_select: return "auto";
    case backend_preference::require: return "require";
    case backend_preference::forbid: return "forbid";
  }
  return "auto";
}

std::optional<backend_preference> backend_preference_from_string(std::string_view s) noexcept {
  if (s == "auto") return backend_preference::auto_select;
  if (s == "require") return backend_preference::require;
  if (s == "forbid") return backend_preference::forbid;
  return std::nullopt;
}

bool is_restricted(const sandbox_policy& p) noexcept {
  bool writes_root = false;
  for (const auto& w : p.filesystem.writable) writes_root = writes_root || w == "/";
  return !(p.filesystem.read == read_mode::full && writes_root && p.network.mode == network_mode::unrestricted &&
           p.environment.inherit == environment_inherit::all);
}

std::string_view to_string(execution_status s) noexcept {
  switch (s) {
    case execution_status::completed: return "completed";
    case execution_status::authorized: return "authorized";
    case execution_status::denied: return "denied";
    case execution_status::rejected: return "rejected";
    case execution_status::refused: return "refused";
    case execution_status::failed: return "failed";
    case execution_status::cancelled: return "cancelled";
    case execution_status::timed_out: return "timed_out";
  }
  return "rejected";
}

struct execution_runtime::impl {
  detail::sandbox_adapter adapter;
  mutable std::mutex mutex;
  std::optional<std::string> refusing;
};

execution_runtime::execution_runtime(capability_policy rules, audit_sink* audit, approval_service* approvals,
                                     approval_ledger* ledger)
    : rules_(std::move(rules)), audit_(audit), approvals_(approvals), ledger_(ledger), impl_(std::make_unique<impl>()) {}

execution_runtime::~execution_runtime() = default;

void execution_runtime::cancel() { impl_->adapter.cancel(); }

std::optional<std::string> execution_runtime::refusing() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->refusing;
}

// One request's way through the runtime; `record` stamps every event with the
// request's ids so that none can be forgotten.
namespace {

struct journey {
  execution_result result;
  audit_sink* audit = nullptr;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  std::map<std::string, std::string> ids;
  std::map<std::string, std::string> common;  // attributes on every event
  std::optional<error> audit_error;

  bool record(std::string event, std::string outcome, std::map<std::string, std::string> attributes = {},
              std::map<std::string, std::string> documents = {}) {
    if (audit_error) return false;
    auto e = make_audit_event("execution", std::move(event), std::move(outcome));
    e.ids = ids;
    e.elapsed_ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
    e.attributes = std::move(attributes);
    for (const auto& [k, v] : common) e.attributes[k] = v;
    e.documents = std::move(documents);
    auto appended = audit->append(e);
    if (!appended) audit_error = appended.error_value();
    return static_cast<bool>(appended);
  }

  execution_result& finish(execution_status status, std::string reason) {
    result.status = status;
    result.reason = std::move(reason);
    return result;
  }
};

// One request's phases (execution_runtime::run_request). Each returns true
// to let the request go on, false once it ended it (j.result is final).
struct request_run {
  journey& j;
  capability_request& request;
  const execution_context& context;
  const tool_io* io;
  detail::sandbox_adapter& adapter;
  const capability_policy& rules;
  approval_service* approvals;
  approval_ledger* ledger;
  std::function<void(const std::string&)> refuse_new_runs;  // after an audit failure
  // Learnt on the way.
  std::map<std::string, std::string> host_metadata{};
  bool runs = false;  // the action runs a command
  bool host = false;  // ... on the host, without a sandbox
  std::shared_ptr<const sandbox_plan> plan{};
  launch_request launch{};

  bool audit_failed() {
    std::string why = "the audit sink failed: " + j.audit_error->describe();
    refuse_new_runs(why);
    j.finish(execution_status::rejected, why + "; no new runs until it is fixed");
    return false;
  }

  // Phase 0: the request is normalized and digested; the ids every event carries.
  bool admit() {
    j.ids = {{"run_id", j.result.run_id}, {"rules_digest", j.result.rules_digest}};
    if (!context.session_id.empty()) j.ids["session_id"] = context.session_id;
    if (approvals != nullptr && approvals->for_tests_only()) {
      j.common = {{"approval_service", std::string(approvals->name())}, {"approval_for_tests_only", "true"}};
    }
    if (auto normal = normalize_capability_request(request); !normal) {
      std::string why = "invalid request: " + normal.error_value().describe();
      if (!j.record("request.rejected", "invalid", {{"reason", why}})) return audit_failed();
      j.finish(execution_status::rejected, why);
      return false;
    }
    j.result.request_digest = request_digest(request);
    j.ids["request_digest"] = j.result.request_digest;
    if (!request.trace_id.empty()) j.ids["trace_id"] = request.trace_id;
    for (const auto& [k, v] : request.host_metadata) host_metadata["host." + k] = v;
    return true;
  }

  // Phase 1: the capability policy.
  bool decide() {
    j.result.decision = rules.evaluate(request);
    const auto& decision = j.result.decision;
    auto attributes = host_metadata;
    attributes["action"] = std::string(to_string(request.action));
    attributes["decision"] = std::string(to_string(decision.decision));
    attributes["rule"] = decision.rule_id;
    attributes["reason"] = decision.reason;
    if (!decision.uncertain.empty()) attributes["uncertain"] = decision.uncertain.front();
    if (!j.record("policy.decision", std::string(to_string(decision.decision)), attributes)) return audit_failed();
    if (decision.decision == decision_kind::deny) {
      j.finish(execution_status::denied, decision.reason);
      return false;
    }
    return true;
  }

  // Phase 2: the session boundary's revision.
  bool check_revision() {
    if (!request.boundary_revision || *request.boundary_revision == context.boundary_revision) return true;
    std::string why = "stale boundary revision " + std::to_string(*request.boundary_revision) + ": the session is at " +
                      std::to_string(context.boundary_revision);
    if (!j.record("request.rejected", "stale_revision", {{"reason", why}})) return audit_failed();
    j.finish(execution_status::rejected, why);
    return false;
  }

  // Phase 3: backend selection and compile (before approval: the approver sees the plan).
  bool select_and_compile() {
    runs = runs_command(request.action);
    bool restricted = is_restricted(context.policy);
    launch.argv = command_of(request);
    launch.working_directory = request.working_directory;
    launch.host_environment = context.host_environment;
    if (io != nullptr) add_environment(launch.host_environment, io->environment);
    j.result.sandbox_policy_digest = policy_digest(context.policy);
    j.ids["sandbox_policy_digest"] = j.result.sandbox_policy_digest;
    if (runs) {
      bool available = adapter.available();
      std::string why;
      if (context.backend == backend_preference::forbid) {
        if (restricted) why = "backend selection forbid: a restricted boundary never runs without its sandbox";
        host = true;
      } else if (!available) {
        if (restricted || context.backend == backend_preference::require) {
          why = "the platform sandbox (" + adapter.backend_name() + ") is not available on this host; a restricted boundary fails closed";
        }
        host = true;
      }
      if (host && why.empty() && io != nullptr) why = "the tool-use call runs only confined, and this request would run on the host (backend selection)";
      if (!why.empty()) {
        if (!j.record("request.rejected", "backend_selection", {{"reason", why}, {"backend", std::string(to_string(context.backend))}})) {
          return audit_failed();
        }
        j.finish(execution_status::rejected, why);
        return false;
      }
      if (!host) {
        compile_options options;
        options.workspace = context.workspace;
        auto compiled = adapter.compile(context.policy, options);
        if (!compiled) {
          j.result.report_json = adapter.refused_report(context.policy.name, launch, compiled.failure());
          j.result.report_digest = sha256_digest(j.result.report_json);
          j.ids["report_digest"] = j.result.report_digest;
          std::string refusal = "the sandbox cannot enforce the policy: " + compiled.failure().message;
          if (!j.record("sandbox.refused", std::string(to_string(compiled.failure().code)), {{"reason", refusal}},
                        {{"report", j.result.report_json}})) {
            return audit_failed();
          }
          j.finish(execution_status::refused, refusal);
          return false;
        }
        plan = compiled.plan();
        // The digest of what will run: the plan's normalized, resolved policy.
        j.result.sandbox_policy_digest = policy_digest(plan->policy());
        j.ids["sandbox_policy_digest"] = j.result.sandbox_policy_digest;
      }
    }
    return true;
  }

  // Phase 4: approval, when the decision requires it (a ledger grant, else the service).
  bool approve() {
    const auto& decision = j.result.decision;
    if (decision.decision == decision_kind::require_approval) {
      approval_request ask;
      ask.request = request;
      ask.request_digest = j.result.request_digest;
      ask.normalized_form = normalized_form(request);
      ask.policy = decision;
      ask.rules_digest = rules.digest();
      ask.session_id = context.session_id;
      ask.workspace = context.workspace;
      ask.sandbox_policy_digest = j.result.sandbox_policy_digest;
      ask.backend = !runs ? "none (no command runs)" : host ? "host (no sandbox)" : adapter.backend_name();
      if (plan) {
        ask.plan_levels = detail::sandbox_adapter::levels(*plan);
        ask.plan_warnings = plan->warnings();
      }
      approval_decision answer;
      std::optional<approval_scope> grant = ledger != nullptr ? ledger->find(ask) : std::nullopt;
      bool reused = grant.has_value();
      approval_scope reused_scope = grant.value_or(approval_scope::once);
      if (reused) {
        answer = {approval_decision_kind::approved, reused_scope, "a " + std::string(to_string(reused_scope)) + " grant covers this request",
                  ask.request_digest, "ledger"};
      } else if (approvals == nullptr) {
        std::string why = "approval required (" + decision.reason + ") but no approval service is configured";
        if (!j.record("approval", "rejected", {{"reason", why}})) return audit_failed();
        j.finish(execution_status::rejected, why);
        return false;
      } else {
        answer = approvals->decide(ask);
        answer.approver = std::string(approvals->name());
        if (answer.request_digest.empty()) answer.request_digest = ask.request_digest;
        if (answer.request_digest != ask.request_digest) {
          answer = {approval_decision_kind::denied, approval_scope::once,
                    "the approval names another request (" + answer.request_digest + ")", ask.request_digest, answer.approver};
        }
      }
      j.result.approval = answer;
      std::map<std::string, std::string> approval_attributes = {
          {"decision", std::string(to_string(answer.kind))}, {"scope", std::string(to_string(answer.scope))},
          {"reason", answer.reason}, {"approver", answer.approver}};
      if (reused) approval_attributes["reused_grant"] = std::string(to_string(reused_scope));
      if (!j.record("approval", std::string(to_string(answer.kind)), approval_attributes)) return audit_failed();
      if (answer.kind == approval_decision_kind::denied) {
        j.finish(execution_status::denied, answer.reason);
        return false;
      }
      if (answer.kind == approval_decision_kind::manual_review) {
        j.finish(execution_status::rejected, "sent for manual review: " + answer.reason);
        return false;
      }
      if (ledger != nullptr && !reused) ledger->record(ask, answer);
    }
    return true;
  }

  // Phase 5 for an action that runs nothing: authorized.
  void authorize() {
    const auto& decision = j.result.decision;
    if (!j.record("request.authorized", "allow", host_metadata)) {
      audit_failed();
      return;
    }
    j.finish(execution_status::authorized, decision.decision == decision_kind::allow ? decision.reason : "approved");
  }

  // Phase 5: run, report, audit.
  void run() {
    std::map<std::string, std::string> start_attributes = host_metadata;
    start_attributes["backend"] = host ? "host" : adapter.backend_name();
    if (!j.record("run.started", "started", start_attributes)) {
      audit_failed();
      return;
    }
    detail::adapter_run ran = host ? adapter.run_on_host(launch)
                               : io != nullptr ? adapter.run_captured(plan, launch, *io)
                                               : adapter.run(*plan, launch);
    adapter.reset_cancel();
    j.result.report_json = ran.report_json;
    j.result.outcome = ran.outcome;
    j.result.stdout_data = std::move(ran.stdout_data);
    j.result.stderr_data = std::move(ran.stderr_data);
    j.result.pooled = ran.pooled;
    j.result.warnings = std::move(ran.warnings);
    if (io != nullptr) {
      for (auto& w : dropped_variables(io->environment, ran.report_json)) j.result.warnings.push_back(std::move(w));
    }
    std::map<std::string, std::string> end_attributes;
    if (io != nullptr) {
      end_attributes = {{"stdout_bytes", std::to_string(j.result.stdout_data.total_bytes)},
                        {"stderr_bytes", std::to_string(j.result.stderr_data.total_bytes)},
                        {"stdout_dropped", std::to_string(j.result.stdout_data.dropped_bytes)},
                        {"stderr_dropped", std::to_string(j.result.stderr_data.dropped_bytes)},
                        {"pooled", ran.pooled ? "true" : "false"}};
      for (std::size_t i = 0; i < j.result.warnings.size(); ++i) end_attributes["warning." + std::to_string(i)] = j.result.warnings[i];
    }
    if (!ran.report_json.empty()) {
      j.result.report_digest = sha256_digest(ran.report_json);
      j.ids["report_digest"] = j.result.report_digest;
    }
    std::map<std::string, std::string> documents;
    if (!ran.report_json.empty()) documents["report"] = ran.report_json;
    execution_status status;
    std::string event, outcome, why;
    // Cancelled: by cancel(), or by a SIGINT/SIGTERM/SIGHUP the sandbox's
    // supervisor received and forwarded to the tree (outcome.interrupted).
    bool interrupted = ran.outcome && ran.outcome->interrupted;
    if (ran.timed_out) {
      status = execution_status::timed_out;
      event = "run.timeout";
      outcome = "timed_out";
      why = "the timeout fired; the tree was killed";
    } else if ((ran.cancelled && (!ran.outcome || interrupted || !ran.outcome->exited)) || interrupted) {
      status = execution_status::cancelled;
      event = "run.cancelled";
      outcome = "cancelled";
      why = ran.outcome ? "cancelled while running" : "cancelled before it started";
    } else if (ran.launch_error) {
      status = execution_status::failed;
      event = "run.failed";
      outcome = std::string(to_string(ran.launch_error->code));
      why = ran.launch_error->describe();
    } else if (ran.outcome->timed_out) {
      status = execution_status::timed_out;
      event = "run.timeout";
      outcome = "timed_out";
      why = "the policy's timeout fired; the tree was killed";
    } else {
      status = execution_status::completed;
      event = "run.completed";
      outcome = ran.outcome->exited ? "exited " + std::to_string(ran.outcome->exit_code)
                                    : "signal " + std::to_string(ran.outcome->signal);
      why = outcome;
    }
    end_attributes["reason"] = why;
    if (!j.record(event, outcome, end_attributes, documents)) {
      audit_failed();
      j.result.status = status;  // the run happened; the result says so, and that its end was not recorded
      return;
    }
    j.finish(status, why);
  }
};

}  // namespace

int exit_status(const execution_result& r) noexcept {
  switch (r.status) {
    case execution_status::completed:
      return r.outcome && r.outcome->exited ? r.outcome->exit_code : 128 + (r.outcome ? r.outcome->signal : 0);
    case execution_status::authorized: return 0;
    case execution_status::denied: return 200;
    case execution_status::rejected:
    case execution_status::cancelled: return 201;
    case execution_status::timed_out: return exit_timeout;
    case execution_status::refused: return exit_cordon_failed;
    case execution_status::failed:
      if (r.reason.rfind("command_not_found", 0) == 0) return exit_not_found;
      if (r.reason.rfind("command_not_executable", 0) == 0) return exit_not_executable;
      return exit_cordon_failed;
  }
  return exit_cordon_failed;
}

execution_result execution_runtime::execute(capability_request request, const execution_context& context) {
  return run_request(std::move(request), context, nullptr);
}

execution_result execution_runtime::execute_tool(capability_request request, const execution_context& context,
                                                 const tool_io& io) {
  return run_request(std::move(request), context, &io);
}

execution_result execution_runtime::run_request(capability_request request, const execution_context& context,
                                                const tool_io* io) {
  journey j;
  j.audit = audit_;
  j.result.run_id = random_run_id();
  j.result.rules_digest = rules_.digest();
  request_run r{j, request, context, io, impl_->adapter, rules_, approvals_, ledger_, [this](const std::string& why) {
                  std::lock_guard lock(impl_->mutex);
                  if (!impl_->refusing) impl_->refusing = why;
                }};
  if (audit_ == nullptr) return j.finish(execution_status::rejected, "no audit sink: the runtime does not run what it cannot record");
  if (auto why = refusing()) return j.finish(execution_status::rejected, *why + "; no new runs until it is fixed");
  // The phases, in order; each either lets the request go on or ends it (its
  // result, and the event that says why, recorded).
  if (r.admit() && r.decide() && r.check_revision() && r.select_and_compile() && r.approve()) {
    if (!r.runs) {
      r.authorize();
    } else {
      r.run();
    }
  }
  if (!j.result.report_json.empty()) j.result.sandbox_notes = sandbox_notes(j.result.report_json);
  return std::move(j.result);
}

void deny_records_to_command(execution_context& context, const std::string& audit_path,
                             const std::string& session_path) {
  for (const std::string& own : {audit_path, audit_path.empty() ? std::string() : audit_path + ".head", session_path}) {
    if (own.empty()) continue;
    std::error_code ec;
    const auto path = std::filesystem::absolute(own, ec);
    if (ec) continue;
    const auto dir = std::filesystem::weakly_canonical(path.parent_path(), ec);
    context.policy.filesystem.denied.push_back(((ec ? path.parent_path() : dir) / path.filename()).string());
  }
}

}  // namespace cordon::governance
