// A run report for a person: see report_view.h. Everything here reads the
// JSON that src/core/report.cpp writes (docs/report.md), so the summary at
// the end of a run and `cordon report show` of a file say the same things.
#include "cli/report_view.h"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <vector>

#include "cli/command.h"
#include "cli/exit_codes.h"
#include "cli/table.h"

namespace cordon::cli {
namespace {

using json = nlohmann::ordered_json;

std::string text_of(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}

// An argument as a POSIX shell would need it written to mean itself.
std::string shell_word(const std::string& word) {
  if (!word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                              "-_./=:,+@%") == std::string::npos) {
    return word;
  }
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string command_line(const json& report) {
  std::string out;
  if (!report.contains("command") || !report["command"].contains("argv")) return out;
  for (const auto& arg : report["command"]["argv"]) {
    if (!out.empty()) out += ' ';
    out += shell_word(arg.is_string() ? arg.get<std::string>() : arg.dump());
  }
  return out;
}

std::string milliseconds(std::int64_t ms) {
  if (ms < 1000) return std::to_string(ms) + " ms";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f s", static_cast<double>(ms) / 1000.0);
  return buffer;
}

std::string bytes(std::uint64_t n) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(n);
  std::size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < std::size(units)) {
    value /= 1024.0;
    ++unit;
  }
  if (unit == 0) return std::to_string(n) + " bytes";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f %s", value, units[unit]);
  return buffer;
}

// "completed, exit 0 after 31 ms", "timed_out, killed by SIGKILL after 2.0 s", "refused: nothing ran".
std::string outcome_line(const json& report) {
  const std::string outcome = text_of(report, "outcome");
  if (outcome == "refused") return "refused: nothing ran";
  if (outcome == "launch_failed") return "launch_failed: the command did not start";
  std::string line = outcome.empty() ? "unknown outcome" : outcome;
  if (report.contains("exit")) {
    const json& exit = report["exit"];
    if (exit.contains("code")) {
      line += ", exit " + exit["code"].dump();
    } else if (exit.contains("signal_name")) {
      line += ", killed by " + text_of(exit, "signal_name");
    }
  }
  if (report.contains("timing") && report["timing"].contains("wall_ms") && report["timing"]["wall_ms"].is_number()) {
    line += " after " + milliseconds(report["timing"]["wall_ms"].get<std::int64_t>());
  }
  return line;
}

struct control_groups {
  std::vector<std::string> enforced;
  std::vector<std::string> not_applicable;
  std::vector<std::pair<std::string, std::string>> below;  // "name: level", why
};

control_groups group_controls(const json& report) {
  control_groups g;
  if (!report.contains("controls") || !report["controls"].is_object()) return g;
  for (const auto& [name, c] : report["controls"].items()) {
    const std::string level = text_of(c, "level");
    if (level == "enforced") {
      g.enforced.push_back(name);
    } else if (level == "not_applicable") {
      g.not_applicable.push_back(name);
    } else {
      g.below.emplace_back(name + " " + level, text_of(c, "detail"));
    }
  }
  return g;
}

std::string joined(const std::vector<std::string>& items, const char* separator = ", ") {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

// Warnings that only repeat a control's level ("unix_sockets is partial: ...")
// are already in the control lines.
bool repeats_a_control(const json& report, const std::string& warning) {
  if (!report.contains("controls") || !report["controls"].is_object()) return false;
  const auto space = warning.find(" is ");
  return space != std::string::npos && report["controls"].contains(warning.substr(0, space));
}

std::vector<std::string> violation_texts(const json& report) {
  std::vector<std::string> out;
  if (!report.contains("violations") || !report["violations"].is_array()) return out;
  for (const auto& v : report["violations"]) {
    out.push_back(text_of(v, "target") + " (" + text_of(v, "kind") + ") x" + v.value("count", json(1)).dump());
  }
  return out;
}

bool is_object(const json& j) { return j.is_object(); }
bool is_list(const json& j) { return j.is_array(); }
bool is_string(const json& j) { return j.is_string(); }
bool is_number(const json& j) { return j.is_number(); }
bool is_count(const json& j) { return j.is_number_unsigned(); }
bool is_boolean(const json& j) { return j.is_boolean(); }

// The value at `key` of `j`; null when `j` is no object or has no such key.
const json& member(const json& j, const char* key) {
  static const json none;
  return j.is_object() && j.contains(key) ? j[key] : none;
}

// Keeps the first problem of a report's shape: "POINTER: not WHAT".
struct shape_check {
  std::string problem;
  // `key` of `j` (at pointer `at`), when present, passes `ok`.
  void member_is(const json& j, const std::string& at, const char* key, bool (*ok)(const json&), const char* what) {
    if (problem.empty() && j.is_object() && j.contains(key) && !ok(j[key])) problem = at + "/" + key + ": not " + what;
  }
  // `key` of `j`, when present, is a list whose every element passes `ok`.
  void elements_are(const json& j, const std::string& at, const char* key, bool (*ok)(const json&), const char* what) {
    member_is(j, at, key, is_list, "a list");
    const json& list = member(j, key);
    for (std::size_t i = 0; problem.empty() && list.is_array() && i < list.size(); ++i) {
      if (!ok(list[i])) problem = at + "/" + key + "/" + std::to_string(i) + ": not " + what;
    }
  }
};

}  // namespace

std::string_view isolation_meaning(std::string_view level) {
  if (level == "none") return "no isolation: an ordinary process";
  if (level == "process") return "process restrictions only (limits, privileges); the same view of the host";
  if (level == "os_sandbox") return "the OS's sandbox facility limits what the process may touch";
  if (level == "container") {
    return "an OS sandbox plus its own namespaces (filesystem view, processes, network, IPC) on the host's kernel";
  }
  if (level == "vm") return "a virtual machine with its own kernel";
  return "";
}

void print_isolation_lines(const std::string& provided, const std::string& required, std::ostream& out) {
  out << "isolation:  " << provided;
  if (std::string_view meaning = isolation_meaning(provided); !meaning.empty()) out << " (" << meaning << ")";
  out << "\n";
  if (!required.empty()) {
    out << "            the policy requires at least " << required
        << " (levels: none < process < os_sandbox < container < vm)\n";
  }
}

void print_run_summary(const json& report, const std::string& report_path, std::ostream& out) {
  const std::string policy = report.contains("policy") ? text_of(report["policy"], "name") : "";
  out << "cordon: summary: " << outcome_line(report) << (policy.empty() ? "" : " (policy " + policy + ")") << "\n";
  const auto line = [&out](const char* label, const std::string& text) {
    char head[32];
    std::snprintf(head, sizeof head, "cordon:   %-12s", label);
    out << head << text << "\n";
  };
  if (report.contains("backend")) {
    const std::string provided = text_of(report["backend"], "isolation");
    const std::string required = report.contains("policy") ? text_of(report["policy"], "isolation") : "";
    if (!provided.empty()) {
      line("isolation", provided + " (" + std::string(isolation_meaning(provided)) + ")" +
                            (required.empty() ? "" : "; the policy requires at least " + required));
    }
  }
  const control_groups g = group_controls(report);
  if (!g.enforced.empty()) line("enforced", joined(g.enforced));
  for (const auto& [name, why] : g.below) line("not fully", name + (why.empty() ? "" : ": " + why));
  if (!g.not_applicable.empty()) line("not asked", joined(g.not_applicable) + " (not_applicable: no such limit or mode set)");
  const auto violations = violation_texts(report);
  line("violations", violations.empty() ? "none" : std::to_string(violations.size()) + " kind(s) stopped: " +
                                                       joined(violations, "; "));
  // Deferred execution (docs/deferred-execution.md): one line per finding, the host acts on each.
  if (report.contains("deferred_execution") && report["deferred_execution"].contains("findings")) {
    for (const auto& f : report["deferred_execution"]["findings"]) {
      const std::string key = text_of(f, "key");
      line("deferred", text_of(f, "kind") + " " + text_of(f, "path") +
                           (key.empty() ? "" : " " + key) + ": " + text_of(f, "detail"));
    }
  }
  if (report.contains("warnings") && report["warnings"].is_array()) {
    for (const auto& w : report["warnings"]) {
      if (w.is_string() && !repeats_a_control(report, w.get<std::string>())) line("warning", w.get<std::string>());
    }
  }
  if (report.contains("error")) line("error", text_of(report["error"], "code") + ": " + text_of(report["error"], "message"));
  if (!report_path.empty()) line("report", report_path + " (cordon report show " + shell_word(report_path) + ")");
}

std::string report_shape_problem(const json& report) {
  shape_check c;
  c.member_is(report, "", "environment", is_object, "an object");
  c.elements_are(member(report, "environment"), "/environment", "names", is_string, "a string");
  c.member_is(report, "", "timing", is_object, "an object");
  for (const char* key : {"wall_ms", "user_cpu_ms", "system_cpu_ms"}) {
    c.member_is(member(report, "timing"), "/timing", key, is_number, "a number");
  }
  c.member_is(report, "", "resources", is_object, "an object");
  for (const char* key : {"max_process_rss_bytes", "peak_memory_bytes"}) {
    c.member_is(member(report, "resources"), "/resources", key, is_count, "a count of bytes");
  }
  c.member_is(member(report, "resources"), "/resources", "tree_cpu_ms", is_number, "a number");
  c.member_is(report, "", "limits_hit", is_object, "an object");
  for (const char* key : {"memory", "cpu", "processes"}) {
    c.member_is(member(report, "limits_hit"), "/limits_hit", key, is_boolean, "true or false");
  }
  c.member_is(report, "", "timeout_fired", is_boolean, "true or false");
  c.elements_are(report, "", "violations", is_object, "an object");
  c.member_is(report, "", "network", is_object, "an object");
  for (const char* key : {"total", "allowed", "denied", "failed", "not_recorded"}) {
    c.member_is(member(report, "network"), "/network", key, is_number, "a number");
  }
  c.elements_are(member(report, "network"), "/network", "connections", is_object, "an object");
  return c.problem;
}

void print_report_tables(const json& report, std::ostream& out) {
  const auto field = [&out](const char* label, const std::string& text) {
    if (text.empty()) return;
    char head[32];
    std::snprintf(head, sizeof head, "%-12s", (std::string(label) + ":").c_str());
    out << head << text << "\n";
  };
  field("outcome", outcome_line(report));
  const std::string started = text_of(report, "started_at"), finished = text_of(report, "finished_at");
  field("started", started);
  field("finished", finished);
  field("command", command_line(report));
  if (report.contains("command")) field("directory", text_of(report["command"], "working_directory"));
  if (report.contains("policy")) {
    const json& p = report["policy"];
    const std::string name = text_of(p, "name").empty() ? "(unnamed)" : text_of(p, "name");
    field("policy", name + (p.contains("digest") ? " " + text_of(p, "digest") : ""));
  }
  if (report.contains("backend")) {
    const json& b = report["backend"];
    field("backend", text_of(b, "name") + (b.contains("platform") ? " on " + text_of(b, "platform") : ""));
    if (b.contains("isolation")) {
      print_isolation_lines(text_of(b, "isolation"), report.contains("policy") ? text_of(report["policy"], "isolation") : "",
                            out);
    }
  }
  if (report.contains("timing")) {
    const json& t = report["timing"];
    field("timing", "wall " + milliseconds(t.value("wall_ms", 0)) + ", user CPU " +
                        milliseconds(t.value("user_cpu_ms", 0)) + ", system CPU " +
                        milliseconds(t.value("system_cpu_ms", 0)));
  }
  if (report.contains("resources")) {
    const json& r = report["resources"];
    std::string text = "largest process " + bytes(r.value("max_process_rss_bytes", std::uint64_t{0}));
    if (r.contains("peak_memory_bytes")) text += ", tree peak " + bytes(r["peak_memory_bytes"].get<std::uint64_t>());
    if (r.contains("tree_cpu_ms")) text += ", tree CPU " + milliseconds(r["tree_cpu_ms"].get<std::int64_t>());
    field("memory", text);
  }
  if (report.contains("limits") && report["limits"].is_object()) {
    std::vector<std::string> limits;
    const json& hit = report.value("limits_hit", json::object());
    for (const auto& [name, value] : report["limits"].items()) {
      std::string text = name + " " + value.dump();
      const std::string which = name == "memory_bytes" ? "memory" : name == "cpu_seconds" ? "cpu"
                                : name == "max_processes" ? "processes" : "";
      if (!which.empty() && hit.value(which, false)) text += " (hit)";
      if (name == "timeout_ms" && report.value("timeout_fired", false)) text += " (fired)";
      limits.push_back(text);
    }
    field("limits", limits.empty() ? "none" : joined(limits));
  }
  if (report.contains("environment") && report["environment"].contains("names")) {
    std::vector<std::string> names;
    for (const auto& n : report["environment"]["names"]) names.push_back(n.get<std::string>());
    field("variables", names.empty() ? "(empty)" : joined(names, " "));
  }
  if (report.contains("error")) {
    field("error", text_of(report["error"], "code") + ": " + text_of(report["error"], "message"));
  }
  if (report.contains("policy_errors") && !report["policy_errors"].empty()) {
    std::vector<table_row> rows;
    for (const auto& e : report["policy_errors"]) {
      rows.push_back({{text_of(e, "location").empty() ? "(document)" : text_of(e, "location"), text_of(e, "reason")}, {}});
    }
    out << "\n";
    print_table({"LOCATION", "PROBLEM"}, rows, out);
  }
  if (report.contains("blockers") && !report["blockers"].empty()) {
    std::vector<table_row> rows;
    for (const auto& b : report["blockers"]) {
      rows.push_back({{text_of(b, "control"), text_of(b, "required"), text_of(b, "available"), text_of(b, "reason")}, {}});
    }
    out << "\n";
    print_table({"BLOCKER", "REQUIRED", "AVAILABLE", "WHY"}, rows, out);
  }
  if (report.contains("controls") && report["controls"].is_object()) {
    std::vector<table_row> rows;
    for (const auto& [name, c] : report["controls"].items()) {
      table_row row;
      row.cells = {name, text_of(c, "level")};
      const std::string mechanism = text_of(c, "mechanism"), detail = text_of(c, "detail");
      if (mechanism.empty()) {
        row.cells.push_back(detail.empty() ? "-" : "why: " + detail);
      } else {
        row.cells.push_back(mechanism);
        if (!detail.empty()) row.notes.push_back("why: " + detail);
      }
      rows.push_back(std::move(row));
    }
    out << "\n";
    print_table({"CONTROL", "LEVEL", "MECHANISM AND WHY"}, rows, out);
    out << "\n" << kLevelsNote;
  }
  if (report.contains("violations")) {
    out << "\n";
    if (report["violations"].empty()) {
      out << "violations: none\n";
    } else {
      std::vector<table_row> rows;
      for (const auto& v : report["violations"]) {
        rows.push_back({{text_of(v, "kind"), v.value("count", json(1)).dump(), text_of(v, "target")}, {}});
      }
      print_table({"VIOLATION", "COUNT", "TARGET"}, rows, out);
    }
  }
  if (report.contains("network")) {
    const json& n = report["network"];
    const int total = n.value("total", 0);
    out << "\nnetwork:    " << total << (total == 1 ? " connection: " : " connections: ") << n.value("allowed", 0) << " allowed, "
        << n.value("denied", 0) << " denied, " << n.value("failed", 0) << " failed, " << n.value("not_recorded", 0)
        << " not recorded\n";
    std::vector<table_row> rows;
    for (const auto& c : n.value("connections", json::array())) {
      rows.push_back({{text_of(c, "action"), text_of(c, "protocol"),
                       text_of(c, "host") + ":" + c.value("port", json(0)).dump(),
                       c.contains("rule") ? c["rule"].dump() : "", text_of(c, "reason")},
                      {}});
    }
    if (!rows.empty()) print_table({"ACTION", "PROTOCOL", "DESTINATION", "RULE", "REASON"}, rows, out);
  }
  if (report.contains("warnings") && !report["warnings"].empty()) {
    out << "\nwarnings:\n";
    for (const auto& w : report["warnings"]) out << "  " << (w.is_string() ? w.get<std::string>() : w.dump()) << "\n";
  }
  if (report.contains("mounts") && !report["mounts"].empty()) {
    out << "\nmounts, in order:\n";
    for (const auto& m : report["mounts"]) out << "  " << (m.is_string() ? m.get<std::string>() : m.dump()) << "\n";
  }
}

namespace {

// `cordon report show FILE`.
struct report_show_command final : command {
  std::string file;
  void add_options(CLI::App& app) override {
    app.add_option("file", file, "Report file (JSON, schema 1)")->required();
    app.footer("Exit status: 0 printed; 125 the file cannot be read, is not JSON, or is not a schema-1 report.");
  }
  int execute() override {
    std::ifstream in(file);
    if (!in) {
      std::cerr << "cordon: io_error: " << file << ": cannot open the report\n";
      return exit_cordon_failed;
    }
    const json report = json::parse(in, nullptr, false);
    if (report.is_discarded() || !report.is_object()) {
      std::cerr << "cordon: parse_error: " << file << ": not a JSON object\n";
      return exit_cordon_failed;
    }
    if (!report.contains("schema") || report["schema"] != 1) {
      std::cerr << "cordon: invalid_report: " << file << ": /schema: not a schema-1 run report (docs/report.md)\n";
      return exit_cordon_failed;
    }
    if (const std::string problem = report_shape_problem(report); !problem.empty()) {
      std::cerr << "cordon: invalid_report: " << file << ": " << problem << " (docs/report.md)\n";
      return exit_cordon_failed;
    }
    print_report_tables(report, std::cout);
    return 0;
  }
};

}  // namespace

std::unique_ptr<command> make_report_show_command() { return std::make_unique<report_show_command>(); }

}  // namespace cordon::cli
