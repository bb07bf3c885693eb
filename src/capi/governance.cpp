// The C API's governance (ABI minor 1): capability rules, the execution
// runtime with a host approver, and the tamper-evident audit log
// (cordon/governance/*.h, docs/governance.md). cordon_c.h documents each
// function; the runtime itself is the one `cordon exec` uses.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <new>
#include <sstream>
#include <vector>

#include "capi/capi.h"
#include "cordon/governance/runtime.h"
#include "cordon/policy_json.h"
#include "cordon/profiles.h"
#include "core/strict_json.h"
#include "fsworker/ops.h"

extern char** environ;

struct cordon_rules {
  cordon::governance::capability_policy rules;
};

struct cordon_ledger {
  cordon::governance::approval_ledger ledger;
};

namespace cordon::capi {
namespace {

namespace gov = cordon::governance;
using json = nlohmann::ordered_json;

// The decision size an approver may write, NUL included: a decision is three
// short fields, and a reason longer than this is not one line.
constexpr std::size_t approver_capacity = 4096;

json decision_document(const gov::capability_policy_result& r) {
  json parts = json::array();
  for (const auto& p : r.parts) {
    parts.push_back({{"part", p.part}, {"decision", std::string(gov::to_string(p.decision))}, {"rule_id", p.rule_id},
                     {"reason", p.reason}});
  }
  return {{"decision", std::string(gov::to_string(r.decision))}, {"reason", r.reason}, {"rule_id", r.rule_id},
          {"parts", parts}, {"uncertain", r.uncertain}};
}

// The host's answer to one approval request: a pre-approved digest first,
// then the callback, else denied (cordon exec's default).
class host_approval_service final : public gov::approval_service {
 public:
  host_approval_service(std::string pre_approved, cordon_approver_fn callback, void* user)
      : pre_approved_(std::move(pre_approved)), callback_(callback), user_(user) {}

  gov::approval_decision decide(const gov::approval_request& request) override {
    gov::approval_decision denied;
    denied.request_digest = request.request_digest;
    if (!pre_approved_.empty() && pre_approved_ == request.request_digest) {
      gov::approval_decision granted;
      granted.kind = gov::approval_decision_kind::approved;
      granted.reason = "pre-approved by the host for this request digest";
      granted.request_digest = request.request_digest;
      return granted;
    }
    if (callback_ == nullptr) {
      denied.reason = "no approver: the host gave neither a callback nor a pre-approval for this request";
      return denied;
    }
    std::vector<char> answer(approver_capacity, '\0');
    const std::string shown = gov::approval_request_json(request);
    if (int rc = callback_(user_, shown.c_str(), answer.data(), answer.size()); rc != 0) {
      denied.reason = "the host approver returned " + std::to_string(rc);
      return denied;
    }
    answer.back() = '\0';  // whatever it wrote, it ends inside the buffer
    // The in-process approver answers this very request: the digest is the
    // one shown unless it names one (then it must match, as for a command).
    auto text = json::parse(answer.data(), nullptr, false);
    if (text.is_object() && !text.contains("request_digest")) text["request_digest"] = request.request_digest;
    auto decision = gov::approval_decision_from_json(text.is_discarded() ? std::string(answer.data()) : text.dump());
    if (!decision) {
      denied.reason = "the host approver's answer is not a decision: " + decision.error_value().describe();
      return denied;
    }
    if (decision->request_digest != request.request_digest) {
      denied.reason = "the host approver answered another request (" + decision->request_digest + ")";
      return denied;
    }
    return *decision;
  }
  std::string_view name() const noexcept override { return "host"; }

 private:
  std::string pre_approved_;
  cordon_approver_fn callback_;
  void* user_;
};

// What cordon_governance_execute's context_json says.
struct execute_options {
  gov::execution_context context;
  std::string audit_path;
  std::string pre_approved;
};

result<std::string> string_field(const json& value, const std::string& key) {
  if (!value.is_string()) return make_error(error_code::usage_error, "context: " + key + " is not a string", "/" + key);
  return value.get<std::string>();
}

result<execute_options> read_context(const char* text) {
  execute_options out;
  out.context.workspace = std::filesystem::current_path().string();
  out.context.session_id = "capi-" + std::to_string(::getpid());
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) out.context.host_environment.emplace_back(*e);
  std::optional<sandbox_policy> policy;
  std::optional<json> shortcuts;
  std::string profile(default_profile_name);
  if (text != nullptr && text[0] != '\0') {
    auto parsed = detail::parse_strict_json(text);
    if (!parsed.syntax_ok) return make_error(error_code::parse_error, "context: " + parsed.syntax_error, parsed.syntax_location);
    if (!parsed.root.is_object()) return make_error(error_code::usage_error, "context: not a JSON object");
    for (const auto& [key, value] : parsed.root.items()) {
      if (key == "policy") {
        if (!value.is_object()) return make_error(error_code::usage_error, "context: policy is not a JSON object", "/policy");
        auto read = sandbox_policy_from_json(value.dump());
        if (!read) return std::move(read).error_value();
        policy = std::move(*read);
        continue;
      }
      if (key == "shortcuts") {
        shortcuts = value;
        continue;
      }
      if (key == "environment") {
        if (!value.is_array()) return make_error(error_code::usage_error, "context: environment is not an array", "/environment");
        out.context.host_environment.clear();
        for (const auto& entry : value) {
          auto s = string_field(entry, key);
          if (!s) return std::move(s).error_value();
          if (s->find('\0') != std::string::npos) {
            // A C string would end there: the command would silently get less than was asked for.
            return make_error(error_code::usage_error, "context: an environment entry holds a NUL byte",
                              "/environment/" + std::to_string(out.context.host_environment.size()));
          }
          out.context.host_environment.push_back(*s);
        }
        continue;
      }
      auto s = string_field(value, key);
      if (!s) return std::move(s).error_value();
      if (key == "workspace") {
        out.context.workspace = *s;
      } else if (key == "profile") {
        profile = *s;
      } else if (key == "session_id") {
        out.context.session_id = *s;
      } else if (key == "audit") {
        out.audit_path = *s;
      } else if (key == "pre_approved") {
        out.pre_approved = *s;
      } else if (key == "backend") {
        auto backend = gov::backend_preference_from_string(*s);
        if (!backend) return make_error(error_code::usage_error, "context: backend is auto, require or forbid", "/backend");
        out.context.backend = *backend;
      } else {
        return make_error(error_code::usage_error, "context: unknown field " + key, "/" + key);
      }
    }
  }
  if (!policy) {
    auto builtin = builtin_profile(profile);
    if (!builtin) return std::move(builtin).error_value();
    policy = std::move(*builtin);
  }
  if (shortcuts) {
    auto applied = apply_shortcuts_json(*policy, nlohmann::json::parse(shortcuts->dump()), "");
    if (!applied) return std::move(applied).error_value();
  }
  out.context.policy = std::move(*policy);
  return out;
}

json result_json(const gov::execution_result& r) {
  const json approval = r.approval ? json::parse(gov::approval_decision_json(*r.approval)) : json(nullptr);
  return {{"status", std::string(gov::to_string(r.status))},
          {"reason", r.reason},
          {"exit_code", gov::exit_status(r)},
          {"run_id", r.run_id},
          {"decision", decision_document(r.decision)},
          {"approval", approval},
          {"request_digest", r.request_digest},
          {"rules_digest", r.rules_digest},
          {"sandbox_policy_digest", r.sandbox_policy_digest},
          {"report_digest", r.report_digest},
          {"report", embedded(r.report_json)}};
}

result<std::unique_ptr<gov::audit_sink>> open_sink(const std::string& path) {
  if (path.empty()) return std::unique_ptr<gov::audit_sink>(std::make_unique<gov::in_memory_audit_sink>());
  auto sink = gov::jsonl_audit_sink::open(path);
  if (!sink) return std::move(sink).error_value();
  return std::unique_ptr<gov::audit_sink>(std::move(*sink));
}

json captured_document(const captured_output& o) {
  return {{"base64", fsworker::base64_encode(o.data)}, {"text", o.data}, {"bytes", o.total_bytes},
          {"kept", o.data.size()}, {"dropped", o.dropped_bytes}, {"dropped_at", o.dropped_at}};
}

gov::tool_io tool_io_of(const cordon_tool_io* c) {
  gov::tool_io io;
  if (c == nullptr) return io;
  if (c->stdin_data != nullptr) io.stdin_data.assign(c->stdin_data, c->stdin_size);
  if (c->timeout_ms > 0) io.timeout = std::chrono::milliseconds(c->timeout_ms);
  if (c->max_output > 0) io.max_output = c->max_output;
  if (c->on_output != nullptr) {
    io.on_output = [fn = c->on_output, user = c->output_user](int stream, std::string_view bytes) {
      fn(user, stream, bytes.data(), bytes.size());
    };
  }
  if (c->pool != nullptr) io.pool = c->pool->pool.get();
  for (const char* const* e = c->environment; e != nullptr && *e != nullptr; ++e) io.environment.emplace_back(*e);
  return io;
}

// cordon_governance_execute (capture false: inherited stdio) and
// cordon_governance_tool_call (capture true).
result<std::string> execute(const cordon_rules& rules, const char* request_json, const char* context_json,
                            bool capture, const cordon_tool_io* c_io, cordon_approver_fn approver, void* user) {
  auto request = gov::capability_request_from_json(request_json);
  if (!request) return std::move(request).error_value();
  auto options = read_context(context_json);
  if (!options) return std::move(options).error_value();
  if (request->working_directory.empty()) request->working_directory = options->context.workspace;
  auto sink = open_sink(options->audit_path);
  if (!sink) return std::move(sink).error_value();
  gov::deny_records_to_command(options->context, options->audit_path, "");
  host_approval_service approvals(options->pre_approved, approver, user);
  gov::approval_ledger* ledger = c_io != nullptr && c_io->ledger != nullptr ? &c_io->ledger->ledger : nullptr;
  gov::execution_runtime runtime(rules.rules, sink->get(), &approvals, ledger);
  const auto executed = capture ? runtime.execute_tool(*request, options->context, tool_io_of(c_io))
                                : runtime.execute(*request, options->context);
  if (auto flushed = (*sink)->flush(); !flushed) return std::move(flushed).error_value();
  json out = result_json(executed);
  if (capture) {
    out["stdout"] = captured_document(executed.stdout_data);
    out["stderr"] = captured_document(executed.stderr_data);
    out["pooled"] = executed.pooled;
    out["warnings"] = executed.warnings;
    out["sandbox_notes"] = executed.sandbox_notes;
  }
  if (auto* memory = dynamic_cast<gov::in_memory_audit_sink*>(sink->get())) {
    json events = json::array();
    for (const auto& e : memory->events()) events.push_back(embedded(gov::audit_event_json(e)));
    out["events"] = events;
  }
  return out.dump(-1, ' ', false, json::error_handler_t::replace);
}

result<gov::audit_event> event_of(const char* text) {
  auto parsed = detail::parse_strict_json(text);
  if (!parsed.syntax_ok) return make_error(error_code::parse_error, "event: " + parsed.syntax_error, parsed.syntax_location);
  const json& root = parsed.root;
  if (!root.is_object()) return make_error(error_code::usage_error, "event: not a JSON object");
  for (const char* key : {"module", "event", "outcome"}) {
    if (!root.contains(key) || !root[key].is_string() || root[key].get<std::string>().empty()) {
      return make_error(error_code::usage_error, std::string("event: ") + key + " must be a non-empty string", std::string("/") + key);
    }
  }
  auto event = gov::make_audit_event(root["module"], root["event"], root["outcome"]);
  for (const auto& [key, value] : root.items()) {
    if (key == "module" || key == "event" || key == "outcome") continue;
    if (key == "elapsed_ms") {
      if (!value.is_number_integer()) return make_error(error_code::usage_error, "event: elapsed_ms is not an integer", "/elapsed_ms");
      event.elapsed_ms = value.get<std::int64_t>();
      continue;
    }
    if (key != "ids" && key != "attributes") return make_error(error_code::usage_error, "event: unknown field " + key, "/" + key);
    if (!value.is_object()) return make_error(error_code::usage_error, "event: " + key + " is not an object", "/" + key);
    auto& into = key == "ids" ? event.ids : event.attributes;
    for (const auto& [name, v] : value.items()) {
      if (!v.is_string()) return make_error(error_code::usage_error, "event: " + key + "/" + name + " is not a string", "/" + key + "/" + name);
      into[name] = v.get<std::string>();
    }
  }
  return event;
}

json verification_document(const gov::audit_verification& v) {
  json records = json::array();
  for (const auto& r : v.records) {
    records.push_back({{"seq", r.seq}, {"hash", r.hash}, {"event", embedded(gov::audit_event_json(r.event))}});
  }
  return {{"ok", v.ok},
          {"events", v.events},
          {"bad_line", v.bad_line},
          {"problem", v.problem},
          {"last_hash", v.last_hash},
          {"interrupted_runs", v.interrupted_runs},
          {"records", records},
          {"head_present", v.head_present},
          {"head_keyed", v.head_keyed},
          {"head_seq", v.head_seq}};
}

// A key file's bytes, as `cordon audit verify --head-key-file` reads them.
result<std::string> key_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(error_code::io_error, "cannot read the head key file " + path, {}, errno);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// cordon_audit_verify_with's options: the head is required unless
// "no_head" says no head is kept (cordon/cordon_c.h).
result<gov::audit_verify_options> verify_options_of(const char* text) {
  gov::audit_verify_options options;
  options.require_head = true;
  if (text == nullptr) return options;
  auto parsed = detail::parse_strict_json(text);
  if (!parsed.syntax_ok) return make_error(error_code::parse_error, "options: " + parsed.syntax_error, parsed.syntax_location);
  if (!parsed.root.is_object()) return make_error(error_code::usage_error, "options: not a JSON object");
  for (const auto& [key, value] : parsed.root.items()) {
    if (key == "no_head" && value.is_boolean()) {
      options.require_head = !value.get<bool>();
    } else if (key == "head_key_file" && value.is_string()) {
      auto key_bytes = key_of(value.get<std::string>());
      if (!key_bytes) return std::move(key_bytes).error_value();
      options.head_key = std::move(*key_bytes);
    } else {
      return make_error(error_code::usage_error, "options: " + key + " is unknown or of the wrong type", "/" + key);
    }
  }
  if (!options.require_head && !options.head_key.empty()) {
    return make_error(error_code::usage_error, "options: no_head with head_key_file (a keyed head is a head)");
  }
  return options;
}

}  // namespace
}  // namespace cordon::capi

using namespace cordon;
using namespace cordon::capi;

extern "C" {

uint32_t cordon_abi_minor(void) { return CORDON_ABI_MINOR; }

int cordon_rules_load(const char* rules_json, cordon_rules** rules, char** error_json) {
  if (rules_json == nullptr || rules == nullptr) return fail(make_error(error_code::usage_error, "no rules JSON or output"), error_json);
  *rules = nullptr;
  try {
    auto loaded = cordon::governance::capability_policy::from_json(rules_json);
    if (!loaded) return fail(loaded.error_value(), error_json);
    *rules = new cordon_rules{std::move(*loaded)};
    return succeed(error_json);
  } catch (const std::bad_alloc&) {
    return fail(make_error(error_code::launch_failed, "out of memory", {}, ENOMEM), error_json);
  }
}

void cordon_rules_free(cordon_rules* rules) { delete rules; }

int cordon_rules_decide(const cordon_rules* rules, const char* request_json, char** decision_json, char** error_json) {
  return answer(decision_json, error_json, [&]() -> result<std::string> {
    if (rules == nullptr || request_json == nullptr) return make_error(error_code::usage_error, "no rules or request");
    auto request = cordon::governance::capability_request_from_json(request_json);
    if (!request) return std::move(request).error_value();
    auto out = decision_document(rules->rules.evaluate(*request));
    out["request_digest"] = cordon::governance::request_digest(*request);
    out["rules_digest"] = rules->rules.digest();
    return out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  });
}

int cordon_governance_execute(const cordon_rules* rules, const char* request_json, const char* context_json,
                              cordon_approver_fn approver, void* user, char** result_json, char** error_json) {
  return answer(result_json, error_json, [&]() -> result<std::string> {
    if (rules == nullptr || request_json == nullptr) return make_error(error_code::usage_error, "no rules or request");
    return execute(*rules, request_json, context_json, false, nullptr, approver, user);
  });
}

cordon_ledger* cordon_ledger_new(void) { return new (std::nothrow) cordon_ledger{}; }

void cordon_ledger_free(cordon_ledger* ledger) { delete ledger; }

int cordon_governance_tool_call(const cordon_rules* rules, const char* request_json, const char* context_json,
                                const cordon_tool_io* io, cordon_approver_fn approver, void* user, char** result_json,
                                char** error_json) {
  return answer(result_json, error_json, [&]() -> result<std::string> {
    if (rules == nullptr || request_json == nullptr) return make_error(error_code::usage_error, "no rules or request");
    return execute(*rules, request_json, context_json, true, io, approver, user);
  });
}

int cordon_audit_append(const char* path, const char* event_json, char** error_json) {
  char* nothing = nullptr;
  int rc = answer(&nothing, error_json, [&]() -> result<std::string> {
    if (path == nullptr || event_json == nullptr) return make_error(error_code::usage_error, "no path or event");
    auto event = event_of(event_json);
    if (!event) return std::move(event).error_value();
    auto sink = cordon::governance::jsonl_audit_sink::open(path);
    if (!sink) return std::move(sink).error_value();
    if (auto appended = (*sink)->append(*event); !appended) return std::move(appended).error_value();
    if (auto flushed = (*sink)->flush(); !flushed) return std::move(flushed).error_value();
    return std::string();
  });
  cordon_string_free(nothing);
  return rc;
}

int cordon_audit_verify(const char* path, char** verification_json, char** error_json) {
  return cordon_audit_verify_with(path, nullptr, verification_json, error_json);
}

int cordon_audit_verify_with(const char* path, const char* options_json, char** verification_json, char** error_json) {
  return answer(verification_json, error_json, [&]() -> result<std::string> {
    if (path == nullptr) return make_error(error_code::usage_error, "no path");
    auto options = verify_options_of(options_json);
    if (!options) return std::move(options).error_value();
    auto verified = cordon::governance::verify_audit_log(path, *options);
    if (!verified) return std::move(verified).error_value();
    return verification_document(*verified).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  });
}

}  // extern "C"
