// src/windows/launcher/gate_runner.cpp — see gate_runner.h.
#include "windows/launcher/gate_runner.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "cordon/policy_json.h"
#include "cordon/windows/compile.h"
#include "cordon/windows/launcher.h"
#include "gates/record.h"
#include "gates/runner.h"
#include "manifest/digest.h"
#include "windows/launcher/dacl_lease.h"
#include "windows/launcher/win32.h"
#include "windows/paths.h"
#include "windows/report.h"

namespace cordon::windows {
namespace {

using gates::gate_outcome;
using gates::gate_phase;
using gates::gate_state;

// "C:/a/b" or "C:\a\b" -> "C:\a\b", lexically normal.
std::string windows_path(std::string path) {
  std::replace(path.begin(), path.end(), '/', '\\');
  return detail::normalize(path);
}

// "C:\a\b" -> "/C:/a/b", the policy spelling of a Windows path (docs/windows-backend.md, "Paths").
std::string policy_spelling(const std::string& path) {
  std::string out = "/" + path;
  std::replace(out.begin(), out.end(), '\\', '/');
  while (out.size() > 4 && out.back() == '/') out.pop_back();
  return out;
}

bool is_directory(const std::string& path) {
  const DWORD a = GetFileAttributesW(win32::widen(path).c_str());
  return a != INVALID_FILE_ATTRIBUTES && (a & FILE_ATTRIBUTE_DIRECTORY) != 0;
}


// "kind target" of each violation in a report (none are observed on Windows
// yet, docs/windows-backend.md "Reports"; read so that the rule is Linux's).
std::vector<std::string> findings_in(const std::string& report_text) {
  std::vector<std::string> out;
  const auto j = nlohmann::json::parse(report_text, nullptr, false);
  if (!j.is_object() || !j.contains("violations") || !j["violations"].is_array()) return out;
  for (const auto& v : j["violations"]) {
    if (v.is_object()) out.push_back(v.value("kind", std::string()) + " " + v.value("target", std::string()));
  }
  return out;
}

class runner {
 public:
  runner(const gates::gate_manifest& manifest, const windows_gate_settings& settings, std::ostream& lines,
         std::ostream& errors)
      : manifest_(manifest), settings_(settings), lines_(lines), errors_(errors) {}

  int run() {
    auto selected = gates::select_gates(manifest_, settings_.only);
    if (!selected) return fail("usage_error: " + selected.error_value().message);
    for (const gates::gate_spec* g : *selected) {
      gate_state state;
      state.spec = g;
      gates_.push_back(std::move(state));
    }
    for (const std::string& dir : {settings_.out_dir, gate_directory()}) {
      if (!CreateDirectoryW(win32::widen(dir).c_str(), nullptr) && GetLastError() != ERROR_ALREADY_EXISTS) {
        return fail(win32::last_error("create " + dir).describe());
      }
    }
    header_.manifest = &manifest_;
    header_.workspace = settings_.workspace;
    header_.backend = "windows-appcontainer";
    header_.started_at = gates::utc_now();
    header_.state = "running";
    header_.jobs = 1;
    // Every policy is compiled before any gate runs (as on Linux, docs/gates.md).
    for (auto& g : gates_) {
      if (!prepare(g)) return gates::gate_exit_runner_failed;
    }
    if (!write_record()) return gates::gate_exit_runner_failed;
    for (const auto& g : gates_) {
      if (g.phase == gate_phase::finished) announce(g);
    }
    schedule();
    header_.state = "finished";
    bool written = write_record();
    if (!settings_.junit_file.empty()) {
      if (auto j = launcher::write_durably(settings_.junit_file, gates::junit_xml(header_, gates_)); !j) {
        errors_ << "cordon: " << j.error_value().describe() << "\n";
        written = false;
      }
    }
    if (!written) return gates::gate_exit_runner_failed;
    const bool all = std::all_of(gates_.begin(), gates_.end(),
                                 [](const gate_state& g) { return g.outcome == gate_outcome::passed; });
    return all ? gates::gate_exit_all_passed : gates::gate_exit_not_all_passed;
  }

 private:
  int fail(const std::string& message) {
    errors_ << "cordon: " << message << "\n";
    return gates::gate_exit_runner_failed;
  }

  std::string gate_directory() const { return settings_.out_dir + "\\gate"; }
  std::string gate_file(const gate_state& g, std::string_view suffix) const {
    return gate_directory() + "\\" + g.spec->name + std::string(suffix);
  }

  // The gate's policy as the manifest states it, with the gate's timeout,
  // variables and the denied record directory; nullopt after saying why.
  std::optional<sandbox_policy> gate_policy(const gates::gate_spec& spec) {
    auto policy = gates::load_gate_policy(spec, manifest_.directory);
    if (!policy) {
      errors_ << "cordon: " << manifest_.path << ":" << spec.line << ": gate '" << spec.name
              << "': sandbox_policy: " << policy.error_value().describe() << "\n";
      return std::nullopt;
    }
    if (spec.timeout_ms) {
      auto& t = policy->process.timeout_ms;
      t = t ? std::min(*t, *spec.timeout_ms) : *spec.timeout_ms;
    }
    for (const auto& kv : spec.setenv) policy->environment.set.push_back(kv);
    // The record must stay the runner's: a gate that could edit the next
    // gate's policy file would choose its confinement.
    if (detail::is_within(settings_.out_dir, settings_.workspace)) {
      policy->filesystem.denied.push_back(policy_spelling(settings_.out_dir));
    }
    return std::move(*policy);
  }

  windows_compile_result compile(const sandbox_policy& policy, const gate_state& g) {
    windows_compile_options options;
    options.workspace = settings_.workspace;
    options.argv = g.spec->argv;
    options.working_directory = workdir_[g.spec->name];
    const host_facts facts = gather_host_facts(paths_to_probe(policy, gather_host_facts({}), options));
    return compile_windows_plan(policy, facts, options);
  }

  bool prepare(gate_state& g) {
    const gates::gate_spec& spec = *g.spec;
    if (spec.os != gates::target_os::any && spec.os != gates::target_os::windows) {
      finish(g, gate_outcome::not_applicable, "for " + std::string(gates::to_string(spec.os)) + "; this host is windows");
      return true;
    }
    auto policy = gate_policy(spec);
    if (!policy) return false;
    const std::string workdir = windows_path(detail::join(windows_path(manifest_.directory), spec.workdir));
    if (!is_directory(workdir) || !detail::is_within(workdir, settings_.workspace)) {
      errors_ << "cordon: " << manifest_.path << ":" << spec.line << ": gate '" << spec.name << "': workdir "
              << spec.workdir << " does not exist or is outside the workspace " << settings_.workspace << "\n";
      return false;
    }
    workdir_[spec.name] = workdir;
    g.policy_name = policy->name;
    if (auto w = launcher::write_durably(gate_file(g, ".policy.json"), sandbox_policy_to_json(*policy)); !w) {
      errors_ << "cordon: " << w.error_value().describe() << "\n";
      return false;
    }
    auto compiled = compile(*policy, g);
    if (!compiled) return refuse(g, *compiled.failure);
    g.policy_digest = windows_policy_digest(*compiled.plan);
    g.below_enforced = gates::below_enforced(compiled.plan->contract());
    policies_[spec.name] = std::move(*policy);
    return true;
  }

  // Refused: nothing runs; the refused report is the gate's report.
  bool refuse(gate_state& g, const error& failure) {
    g.blockers = failure.blockers;
    std::string detail = std::string(to_string(failure.code)) + ": " + failure.message;
    for (const auto& e : failure.errors) detail += "; " + e.location + ": " + e.reason;
    finish(g, gate_outcome::refused, detail);
    return write_report(g, windows_refused_report_json(g.policy_name, g.spec->argv, failure));
  }

  bool write_report(gate_state& g, const std::string& text) {
    g.reported = true;
    g.report_digest = manifest::sha256_digest(text);
    auto w = launcher::write_durably(gate_file(g, ".sandbox.json"), text);
    if (!w) errors_ << "cordon: " << w.error_value().describe() << "\n";
    return static_cast<bool>(w);
  }

  void finish(gate_state& g, gate_outcome outcome, std::string detail) {
    g.phase = gate_phase::finished;
    g.outcome = outcome;
    g.detail = std::move(detail);
  }

  std::uint64_t now_ms() const {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start_).count());
  }

  bool write_record() {
    header_.elapsed_ms = now_ms();
    auto w = launcher::write_durably(settings_.out_dir + "\\run.json", gates::run_record_json(header_, gates_));
    if (!w) errors_ << "cordon: " << w.error_value().describe() << "\n";
    return static_cast<bool>(w);
  }

  // In manifest order, each gate whose needs have finished: skipped when one
  // did not pass, else run. The graph has no cycle (parse_manifest), and
  // select_gates includes every need, so each round finishes at least one.
  void schedule() {
    for (;;) {
      gate_state* next = nullptr;
      std::string blocked_by;
      for (auto& g : gates_) {
        if (g.phase == gate_phase::finished) continue;
        bool ready = true;
        blocked_by.clear();
        for (const auto& n : g.spec->needs) {
          const gate_state& dep = by_name(n);
          if (dep.phase != gate_phase::finished) ready = false;
          else if (dep.outcome != gate_outcome::passed && blocked_by.empty()) blocked_by = n;
        }
        if (ready) {
          next = &g;
          break;
        }
      }
      if (next == nullptr) return;
      if (!blocked_by.empty()) {
        finish(*next, gate_outcome::skipped, "needs " + blocked_by + ", which did not pass");
      } else {
        run_one(*next);
      }
      write_record();
      announce(*next);
    }
  }

  const gate_state& by_name(const std::string& name) const {
    return *std::find_if(gates_.begin(), gates_.end(), [&](const gate_state& g) { return g.spec->name == name; });
  }

  void run_one(gate_state& g) {
    g.phase = gate_phase::running;
    g.started_ms = now_ms();
    write_record();
    // Compiled again on the facts of this moment: what earlier gates changed counts.
    auto compiled = compile(policies_.at(g.spec->name), g);
    if (!compiled) {
      refuse(g, *compiled.failure);
      g.duration_ms = now_ms() - g.started_ms;
      return;
    }
    const windows_plan& plan = *compiled.plan;
    windows_launch_options options;
    options.lease_directory = settings_.lease_directory;
    auto ran = launch_windows_plan(plan, options);
    g.launched = true;
    g.duration_ms = now_ms() - g.started_ms;
    if (!ran) {
      const bool missing = ran.error_value().code == error_code::command_not_found;
      g.exit_status = missing ? 127 : 125;
      finish(g, gate_outcome::failed, std::string(to_string(ran.error_value().code)) + ": " + ran.error_value().message);
      write_output(g, {}, ran.error_value().describe() + "\n");
      write_report(g, windows_launch_failed_report_json(plan, ran.error_value(), {}));
      return;
    }
    write_output(g, ran->stdout_text, ran->stderr_text);
    const std::string report = windows_run_report_json(plan, *ran);
    write_report(g, report);
    g.below_enforced = gates::below_enforced(ran->observed);
    g.findings = findings_in(report);
    if (ran->timed_out) {
      g.exit_status = 124;
      return finish(g, gate_outcome::timed_out, "the timeout fired; the job was terminated");
    }
    if (ran->exit_code > 255) {
      char status[32];
      std::snprintf(status, sizeof status, "NTSTATUS 0x%08lX", static_cast<unsigned long>(ran->exit_code));
      return finish(g, gate_outcome::failed, std::string("ended with ") + status);
    }
    g.exit_status = static_cast<int>(ran->exit_code);
    if (g.exit_status != 0) return finish(g, gate_outcome::failed, "exit status " + std::to_string(g.exit_status));
    if (!g.findings.empty() && !g.spec->accept_findings) {
      return finish(g, gate_outcome::failed, "its report has findings the gate does not accept");
    }
    finish(g, gate_outcome::passed, g.findings.empty() ? "" : "findings accepted");
  }

  void write_output(const gate_state& g, const std::string& out, const std::string& err) {
    for (const auto& [suffix, text] : {std::pair{".stdout", &out}, std::pair{".stderr", &err}}) {
      if (auto w = launcher::write_durably(gate_file(g, suffix), *text); !w) {
        errors_ << "cordon: " << w.error_value().describe() << "\n";
      }
    }
  }

  void announce(const gate_state& g) {
    char elapsed[32];
    std::snprintf(elapsed, sizeof elapsed, "%.2fs", static_cast<double>(g.duration_ms) / 1000.0);
    lines_ << "gate " << g.spec->name << " " << gates::to_string(g.outcome) << " " << elapsed;
    if (g.exit_status >= 0) lines_ << " exit=" << g.exit_status;
    if (g.launched) {
      lines_ << " below-enforced=" << (g.below_enforced.empty() ? "none" : "");
      for (std::size_t i = 0; i < g.below_enforced.size(); ++i) lines_ << (i ? "," : "") << g.below_enforced[i];
    }
    if (!g.detail.empty() && g.outcome != gate_outcome::passed) lines_ << " (" << g.detail << ")";
    lines_ << std::endl;
  }

  const gates::gate_manifest& manifest_;
  const windows_gate_settings& settings_;
  std::ostream& lines_;
  std::ostream& errors_;
  std::vector<gate_state> gates_;
  std::map<std::string, sandbox_policy> policies_;
  std::map<std::string, std::string> workdir_;
  gates::run_header header_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace

int run_windows_gates(const gates::gate_manifest& manifest, const windows_gate_settings& settings, std::ostream& lines,
                      std::ostream& errors) {
  runner r(manifest, settings, lines, errors);
  return r.run();
}

}  // namespace cordon::windows
