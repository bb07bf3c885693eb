// server.cpp — the MCP protocol of `cordon mcp` (server.h): JSON-RPC 2.0
// lines on stdio, the lifecycle, tools/list and tools/call, and approvals
// through the client's elicitation.
#include "mcp/server.h"

#include <unistd.h>

#include <deque>
#include <istream>
#include <ostream>

#include "cordon/governance/audit.h"
#include "cordon/governance/runtime.h"
#include "cordon/version.h"
#include "mcp/tools.h"

namespace cordon::mcp {
namespace gov = cordon::governance;

namespace {

// JSON-RPC 2.0 error codes.
constexpr int parse_error = -32700;
constexpr int invalid_request = -32600;
constexpr int method_not_found = -32601;
constexpr int invalid_params = -32602;

json error_response(const json& id, int code, const std::string& message) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}};
}

json result_response(const json& id, json result) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

// The line channel: messages in order, with those that arrived while the
// server waited for an answer of the client kept for later.
class channel {
 public:
  channel(std::istream& in, std::ostream& out) : in_(in), out_(out) {}

  // The next message (a parse failure is answered here and skipped); nullopt at the end of input.
  std::optional<json> next() {
    if (!pending_.empty()) {
      json m = std::move(pending_.front());
      pending_.pop_front();
      return m;
    }
    return read();
  }

  void send(const json& message) {
    out_ << message.dump(-1, ' ', false, json::error_handler_t::replace) << '\n';
    out_.flush();
  }

  // Sends a request to the client and waits for its response (other messages are kept).
  std::optional<json> ask(const std::string& method, json params) {
    const std::string id = "cordon-" + std::to_string(++asked_);
    send({{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}});
    while (auto m = read()) {
      if (!m->contains("method") && m->contains("id") && (*m)["id"] == id) return m;
      pending_.push_back(std::move(*m));
    }
    return std::nullopt;
  }

 private:
  std::optional<json> read() {
    for (std::string line; std::getline(in_, line);) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      auto m = json::parse(line, nullptr, false);
      if (m.is_discarded()) {
        send(error_response(nullptr, parse_error, "not JSON"));
        continue;
      }
      return m;
    }
    return std::nullopt;
  }

  std::istream& in_;
  std::ostream& out_;
  std::deque<json> pending_;
  long asked_ = 0;
};

// Approvals: the user through the client's elicitation when it can, else the
// configured approver, else a rejection.
class client_approval_service final : public gov::approval_service {
 public:
  client_approval_service(channel& ch, gov::approval_service* fallback) : channel_(ch), fallback_(fallback) {}
  bool client_elicits = false;

  gov::approval_decision decide(const gov::approval_request& request) override {
    if (!client_elicits) {
      if (fallback_ != nullptr) return fallback_->decide(request);
      return {gov::approval_decision_kind::denied, gov::approval_scope::once,
              "approval needed (" + request.policy.reason + ") but the client cannot ask the user (no elicitation) "
              "and cordon mcp has no --approver",
              request.request_digest, ""};
    }
    std::string message = "cordon: approve this " + std::string(gov::to_string(request.request.action)) + "?\n" +
                          request.normalized_form + "\nwhy approval is needed: " + request.policy.reason + "\nsandbox:";
    for (const auto& c : request.plan_levels) message += " " + c.control + "=" + c.level;
    json schema = {{"type", "object"},
                   {"properties",
                    {{"approve", {{"type", "boolean"}, {"title", "Approve"}, {"description", "Run it"}}},
                     {"scope",
                      {{"type", "string"},
                       {"title", "For"},
                       {"enum", {"once", "session"}},
                       {"description", "once: this call; session: the same request again in this session"}}}}},
                   {"required", {"approve"}}};
    auto answer = channel_.ask("elicitation/create", {{"mode", "form"}, {"message", message}, {"requestedSchema", schema}});
    gov::approval_decision d{gov::approval_decision_kind::denied, gov::approval_scope::once, "", request.request_digest,
                             "elicitation"};
    if (!answer || !answer->contains("result")) {
      d.reason = answer ? "the client could not ask the user" : "the client went away";
      return d;
    }
    const json& result = (*answer)["result"];
    const std::string action = result.value("action", std::string());
    const json content = result.value("content", json::object());
    if (action != "accept" || !content.value("approve", false)) {
      d.reason = "the user " + std::string(action == "cancel" ? "cancelled" : "declined") + " it";
      return d;
    }
    d.kind = gov::approval_decision_kind::approved;
    d.scope = content.value("scope", std::string("once")) == "session" ? gov::approval_scope::session : gov::approval_scope::once;
    d.reason = "approved by the user through the client";
    return d;
  }
  std::string_view name() const noexcept override { return "elicitation"; }

 private:
  channel& channel_;
  gov::approval_service* fallback_;
};

std::string negotiate(const json& params) {
  const std::string asked = params.is_object() ? params.value("protocolVersion", std::string()) : std::string();
  for (const char* known : {protocol_version, "2025-06-18", "2025-03-26"}) {
    if (asked == known) return asked;
  }
  return protocol_version;
}

}  // namespace

result<void> serve(server_options options, std::istream& in, std::ostream& out) {
  if (options.session_id.empty()) options.session_id = "mcp-" + std::to_string(::getpid());
  std::unique_ptr<gov::audit_sink> sink;
  if (options.audit_path.empty()) {
    sink = std::make_unique<gov::in_memory_audit_sink>();
  } else {
    auto opened = gov::jsonl_audit_sink::open(options.audit_path);
    if (!opened) return std::move(opened).error_value();
    sink = std::move(*opened);
  }
  channel ch(in, out);
  client_approval_service approvals(ch, options.approver.get());
  gov::approval_ledger ledger;
  gov::execution_runtime runtime(options.rules, sink.get(), &approvals, &ledger);
  auto box = toolbox::open(options, runtime, *sink);
  if (!box) return std::move(box).error_value();

  while (auto message = ch.next()) {
    if (!message->is_object() || message->value("jsonrpc", std::string()) != "2.0" || !message->contains("method") ||
        !(*message)["method"].is_string()) {
      if (message->is_object() && message->contains("id") && !message->contains("method")) continue;  // a stray response
      ch.send(error_response(message->is_object() ? message->value("id", json(nullptr)) : json(nullptr), invalid_request,
                             "not a JSON-RPC 2.0 request"));
      continue;
    }
    const std::string method = (*message)["method"];
    const json params = message->value("params", json::object());
    if (!message->contains("id")) continue;  // a notification (initialized, cancelled, ...)
    const json id = (*message)["id"];
    if (method == "initialize") {
      approvals.client_elicits = params.is_object() && params.contains("capabilities") &&
                                 params["capabilities"].is_object() && params["capabilities"].contains("elicitation");
      ch.send(result_response(id, {{"protocolVersion", negotiate(params)},
                                   {"capabilities", {{"tools", {{"listChanged", false}}}}},
                                   {"serverInfo", {{"name", "cordon"}, {"version", std::string(library_version())}}},
                                   {"instructions",
                                    "Every tool runs confined to the workspace " + options.workspace +
                                        " and is checked against rules: a denied call says so (do not retry it), "
                                        "some calls need the user's approval. Long output keeps its start and end."}}));
    } else if (method == "ping") {
      ch.send(result_response(id, json::object()));
    } else if (method == "tools/list") {
      ch.send(result_response(id, {{"tools", tool_list()}}));
    } else if (method == "tools/call") {
      if (!params.is_object() || !params.contains("name") || !params["name"].is_string()) {
        ch.send(error_response(id, invalid_params, "tools/call needs a \"name\""));
        continue;
      }
      auto called = (*box)->call(params["name"], params.value("arguments", json::object()));
      if (!called) {
        ch.send(error_response(id, invalid_params, "unknown tool: " + params["name"].get<std::string>()));
        continue;
      }
      ch.send(result_response(id, std::move(*called)));
      if (auto why = runtime.refusing()) return make_error(error_code::io_error, *why);
    } else {
      ch.send(error_response(id, method_not_found, "method not found: " + method));
    }
  }
  return sink->flush();
}

}  // namespace cordon::mcp
