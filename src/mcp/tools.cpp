// tools.cpp — the tools of `cordon mcp` (tools.h): a shell command through
// the tool-use call, file tools authorized by the rules and done by the
// confined filesystem worker.
#include "mcp/tools.h"

#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "cordon/governance/audit.h"

namespace cordon::mcp {
namespace gov = cordon::governance;

namespace {

json string_property(const std::string& description) { return {{"type", "string"}, {"description", description}}; }
json integer_property(const std::string& description) { return {{"type", "integer"}, {"description", description}}; }
json boolean_property(const std::string& description) { return {{"type", "boolean"}, {"description", description}}; }

json tool(const std::string& name, const std::string& description, json properties, std::vector<std::string> required,
          bool read_only) {
  return {{"name", name},
          {"description", description},
          {"inputSchema", {{"type", "object"}, {"properties", std::move(properties)}, {"required", required}}},
          {"annotations", {{"readOnlyHint", read_only}, {"openWorldHint", false}}}};
}

// A text result (isError as given) with the structured document beside it.
json tool_result(std::string text, json structured, bool is_error) {
  return {{"content", json::array({{{"type", "text"}, {"text", std::move(text)}}})},
          {"structuredContent", std::move(structured)},
          {"isError", is_error}};
}

pool_options sized_pool(std::size_t size) {
  pool_options o;
  o.size = size;
  return o;
}

std::string absolute_in(const std::string& workspace, const std::string& path) {
  std::filesystem::path p(path);
  if (p.is_relative()) p = std::filesystem::path(workspace) / p;
  return p.lexically_normal().string();
}

// The files an apply_patch names (agent format and unified diff), for the
// rules: a patch writes these paths.
std::vector<std::string> patch_paths(const std::string& patch) {
  std::vector<std::string> out;
  std::istringstream lines(patch);
  for (std::string line; std::getline(lines, line);) {
    for (const char* prefix : {"*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: ", "+++ ", "--- "}) {
      const std::string p(prefix);
      if (line.rfind(p, 0) != 0) continue;
      std::string path = line.substr(p.size());
      if (path.find('\t') != std::string::npos) path.erase(path.find('\t'));
      if (path == "/dev/null") break;
      if ((p == "+++ " || p == "--- ") && path.size() > 2 && (path.rfind("a/", 0) == 0 || path.rfind("b/", 0) == 0)) {
        path.erase(0, 2);
      }
      if (!path.empty()) out.push_back(path);
      break;
    }
  }
  return out;
}

// What the model reads about a governed call that did not run.
std::string refusal_text(const gov::execution_result& r) {
  std::string text = std::string(gov::to_string(r.status)) + ": " + r.reason;
  if (r.status == gov::execution_status::denied) text += " (do not retry this request; choose another way or ask the user)";
  return text;
}

json decision_json(const gov::execution_result& r) {
  const json approval = r.approval ? json::parse(gov::approval_decision_json(*r.approval)) : json(nullptr);
  return {{"status", std::string(gov::to_string(r.status))}, {"reason", r.reason},
          {"decision", std::string(gov::to_string(r.decision.decision))}, {"rule_id", r.decision.rule_id},
          {"approval", approval}, {"run_id", r.run_id}};
}

std::string stream_text(const captured_output& o) {
  if (!o.truncated()) return o.data;
  return o.data.substr(0, o.dropped_at) + "\n[... " + std::to_string(o.dropped_bytes) + " bytes dropped ...]\n" +
         o.data.substr(o.dropped_at);
}

}  // namespace

json tool_list() {
  return json::array({
      tool("shell",
           "Run a shell command line (sh -c) in the workspace, confined by the sandbox policy and governed by the "
           "rules (some commands need the user's approval, some are denied). Returns stdout, stderr and the exit "
           "status; long output keeps its beginning and end.",
           {{"command", string_property("The command line")},
            {"stdin", string_property("Text the command reads on stdin")},
            {"timeout_ms", integer_property("Kill the command after this many milliseconds (exit status 124)")},
            {"cwd", string_property("Working directory (default: the workspace)")}},
           {"command"}, false),
      tool("read", "Read a file (text; offset and length in bytes).",
           {{"path", string_property("File path, relative to the workspace or absolute")},
            {"offset", integer_property("Start at this byte")},
            {"length", integer_property("Read at most this many bytes")}},
           {"path"}, true),
      tool("write", "Create or replace a file with the given content.",
           {{"path", string_property("File path")},
            {"content", string_property("The whole new content")},
            {"create_parents", boolean_property("Create missing parent directories")}},
           {"path", "content"}, false),
      tool("edit", "Replace exact text in a file (expected_occurrences times, default 1).",
           {{"path", string_property("File path")},
            {"old_string", string_property("Text to find, exactly")},
            {"new_string", string_property("Replacement")},
            {"expected_occurrences", integer_property("How many occurrences must be found (default 1)")}},
           {"path", "old_string", "new_string"}, false),
      tool("glob", "List files matching a glob pattern (** for any depth).",
           {{"pattern", string_property("Glob pattern, e.g. src/**/*.js")},
            {"path", string_property("Base directory (default: the workspace)")}},
           {"pattern"}, true),
      tool("grep", "Search file contents with a regular expression (RE2).",
           {{"pattern", string_property("Regular expression")},
            {"path", string_property("File or directory (default: the workspace)")},
            {"glob", string_property("Only files matching this glob")},
            {"case_insensitive", boolean_property("Ignore case")}},
           {"pattern"}, true),
      tool("apply_patch", "Apply a patch (unified diff, or *** Begin Patch format) to files in the workspace.",
           {{"patch", string_property("The patch text")},
            {"dry_run", boolean_property("Only check it and show the diff")}},
           {"patch"}, false),
  });
}

result<std::unique_ptr<toolbox>> toolbox::open(const server_options& options, gov::execution_runtime& runtime,
                                               gov::audit_sink& audit) {
  std::unique_ptr<toolbox> box(new toolbox(options, runtime, audit));
  box->context_.session_id = options.session_id;
  box->context_.workspace = options.workspace;
  box->context_.policy = options.policy;
  box->context_.host_environment = options.host_environment;
  gov::deny_records_to_command(box->context_, options.audit_path, "");
  box->backend_ = make_host_backend();
  compile_options compile;
  compile.workspace = options.workspace;
  // The pool's plan is compiled as the runtime compiles each request's, so
  // that their fingerprints agree and commands start from the pool.
  auto compiled = box->backend_->compile(box->context_.policy, compile);
  if (!compiled) return compiled.failure();
  if (options.pool_size > 0) {
    box->pool_ = std::make_unique<prepared_pool>(compiled.plan(), sized_pool(options.pool_size));
  }
  // The file worker: the same policy, with the worker's one file readable when the plan hides it.
  const std::string worker_path = find_fs_worker("");
  std::shared_ptr<const sandbox_plan> worker_plan = compiled.plan();
  if (!fs_worker_visible(*worker_plan, worker_path)) {
    auto again = box->backend_->compile(with_fs_worker_readable(box->context_.policy, worker_path), compile);
    if (!again) return again.failure();
    worker_plan = again.plan();
  }
  auto worker = fs_worker::start(*worker_plan);
  if (!worker) return std::move(worker).error_value();
  box->worker_.emplace(std::move(*worker));
  return box;
}

std::optional<json> toolbox::call(const std::string& name, const json& arguments) {
  if (name == "shell") return shell(arguments);
  for (const char* file : {"read", "write", "edit", "glob", "grep", "apply_patch"}) {
    if (name == file) return file_tool(name, arguments);
  }
  return std::nullopt;
}

json toolbox::shell(const json& arguments) {
  if (!arguments.is_object() || !arguments.contains("command") || !arguments["command"].is_string()) {
    return tool_result("invalid arguments: \"command\" (a string) is required", {{"status", "invalid"}}, true);
  }
  gov::capability_request request;
  request.action = gov::action_kind::shell;
  request.risk = gov::risk_level::medium;
  request.tool = "mcp:shell";
  request.command = arguments["command"].get<std::string>();
  request.working_directory = arguments.contains("cwd") && arguments["cwd"].is_string()
                                  ? absolute_in(options_.workspace, arguments["cwd"].get<std::string>())
                                  : options_.workspace;
  gov::tool_io io;
  io.max_output = options_.max_output;
  io.timeout = options_.timeout;
  if (arguments.contains("timeout_ms") && arguments["timeout_ms"].is_number_integer() &&
      arguments["timeout_ms"].get<long long>() > 0) {
    io.timeout = std::min(options_.timeout, std::chrono::milliseconds(arguments["timeout_ms"].get<long long>()));
  }
  if (arguments.contains("stdin") && arguments["stdin"].is_string()) io.stdin_data = arguments["stdin"].get<std::string>();
  io.pool = pool_.get();
  auto r = runtime_.execute_tool(request, context_, io);
  json structured = decision_json(r);
  const int exit = gov::exit_status(r);
  structured["exit_code"] = exit;
  const bool ran = r.outcome.has_value();
  if (!ran && r.status != gov::execution_status::timed_out) {
    structured["report"] = r.report_json.empty() ? json(nullptr) : json::parse(r.report_json, nullptr, false);
    return tool_result(refusal_text(r), structured, true);
  }
  structured["stdout"] = r.stdout_data.data;
  structured["stderr"] = r.stderr_data.data;
  structured["stdout_dropped"] = r.stdout_data.dropped_bytes;
  structured["stderr_dropped"] = r.stderr_data.dropped_bytes;
  structured["pooled"] = r.pooled;
  structured["warnings"] = r.warnings;
  structured["sandbox_notes"] = r.sandbox_notes;
  structured["report"] = json::parse(r.report_json, nullptr, false);
  std::string text = stream_text(r.stdout_data);
  if (!r.stderr_data.data.empty()) text += (text.empty() || text.back() == '\n' ? "" : "\n") + std::string("[stderr]\n") + stream_text(r.stderr_data);
  if (!text.empty() && text.back() != '\n') text += "\n";
  // What the sandbox refused or hid, for a model to act on (gov::sandbox_notes, docs/mcp.md "Results").
  for (const auto& note : r.sandbox_notes) text += note + "\n";
  text += r.status == gov::execution_status::timed_out ? "[timed out: the command was killed; exit status 124]"
                                                       : "[exit status " + std::to_string(exit) + "]";
  return tool_result(text, structured, exit != 0);
}

json toolbox::file_tool(const std::string& name, const json& arguments) {
  if (!arguments.is_object()) return tool_result("invalid arguments: an object is required", {{"status", "invalid"}}, true);
  const bool writes = name == "write" || name == "edit" || (name == "apply_patch" && !arguments.value("dry_run", false));
  gov::capability_request request;
  request.action = writes ? gov::action_kind::filesystem_write : gov::action_kind::filesystem_read;
  request.risk = writes ? gov::risk_level::medium : gov::risk_level::low;
  request.tool = "mcp:" + name;
  if (name == "apply_patch") {
    for (const auto& p : patch_paths(arguments.value("patch", std::string()))) request.paths.push_back(absolute_in(options_.workspace, p));
  } else {
    request.paths.push_back(absolute_in(options_.workspace, arguments.value("path", std::string("."))));
  }
  auto r = runtime_.execute_tool(request, context_, gov::tool_io{});
  json structured = decision_json(r);
  if (r.status != gov::execution_status::authorized) return tool_result(refusal_text(r), structured, true);
  json op = arguments;
  op["op"] = name;
  auto answered = worker_->call(op.dump(-1, ' ', false, json::error_handler_t::replace));
  auto event = gov::make_audit_event("mcp", "fs." + name, "ok");
  event.ids = {{"run_id", r.run_id}, {"session_id", options_.session_id}};
  if (!answered) {
    event.outcome = "failed";
    event.attributes["reason"] = answered.error_value().describe();
    (void)audit_.append(event);
    return tool_result("the file worker failed: " + answered.error_value().describe(), structured, true);
  }
  auto response = json::parse(*answered, nullptr, false);
  const bool ok = response.is_object() && response.value("ok", false);
  if (!ok) event.outcome = response.is_object() && response.contains("error") ? response["error"].value("code", "error") : "error";
  event.documents["response"] = *answered;
  if (auto appended = audit_.append(event); !appended) {
    return tool_result("the audit log failed: " + appended.error_value().describe(), structured, true);
  }
  structured["response"] = response;
  if (!ok) {
    const json error = response.value("error", json::object());
    return tool_result(error.value("code", std::string("error")) + ": " + error.value("message", std::string()), structured, true);
  }
  const json result = response.value("result", json::object());
  if (name == "read" && result.contains("content")) return tool_result(result["content"].get<std::string>(), structured, false);
  return tool_result(result.dump(2), structured, false);
}

}  // namespace cordon::mcp
