// runner.cpp — prepare (select, compile), then schedule and supervise the gates.
#include "gates/runner.h"

#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <fstream>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "cordon/policy_json.h"
#include "cordon/report.h"
#include "posix/atomic_file.h"
#include "gates/confined_launch.h"
#include "manifest/digest.h"
#include "gates/live_table.h"
#include "gates/record.h"

namespace cordon::gates {

using manifest::sha256_digest;

namespace {

using clock_type = std::chrono::steady_clock;

// After the gate's own timeout, cordon run kills the tree itself; the runner
// kills cordon run only if it is still there this much later.
constexpr std::uint64_t backstop_grace_ms = 10'000;
// How long gates get after SIGTERM when the runner is stopped.
constexpr std::uint64_t stop_grace_ms = 3'000;
// How often the live table redraws the elapsed time of running gates.
constexpr std::int64_t live_table_refresh_ms = 500;

std::string read_file(const std::string& path, bool& found) {
  std::ifstream in(path, std::ios::binary);
  found = static_cast<bool>(in);
  std::ostringstream text;
  if (found) text << in.rdbuf();
  return text.str();
}

std::string real_path(const std::string& path) {
  char buffer[PATH_MAX];
  return ::realpath(path.c_str(), buffer) != nullptr ? std::string(buffer) : std::string();
}

bool inside(const std::string& path, const std::string& root) {
  return path == root || (path.size() > root.size() && path.compare(0, root.size(), root) == 0 &&
                          (root == "/" || path[root.size()] == '/'));
}

// A string member of a report object, or "" (absent or of another type: the
// report is a file, read as input).
std::string string_in(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return {};
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// "kind target" of each violation and each deferred-execution finding of a
// report (a finding is also a violation: each is listed once), in order.
std::vector<std::string> findings_in(const nlohmann::json& report) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  auto add = [&](std::string line) {
    if (seen.insert(line).second) out.push_back(std::move(line));
  };
  if (!report.is_object()) return out;
  if (auto v = report.find("violations"); v != report.end() && v->is_array()) {
    for (const auto& e : *v) add(string_in(e, "kind") + " " + string_in(e, "target"));
  }
  if (auto d = report.find("deferred_execution"); d != report.end() && d->is_object()) {
    if (auto f = d->find("findings"); f != d->end() && f->is_array()) {
      for (const auto& e : *f) {
        const std::string key = string_in(e, "key");
        add(string_in(e, "kind") + " " + string_in(e, "path") + (key.empty() ? "" : " " + key));
      }
    }
  }
  return out;
}


class runner {
 public:
  runner(const gate_manifest& manifest, const run_settings& settings, std::ostream& lines, std::ostream& errors)
      : manifest_(manifest), settings_(settings), lines_(lines), errors_(errors), backend_(make_host_backend()) {
    if (settings.live_table) table_.emplace(lines, settings.color, settings.table_width);
  }

  int run() {
    auto selected = select_gates(manifest_, settings_.only);
    if (!selected) return fail(selected.error_value().message);
    for (const gate_spec* g : *selected) {
      gate_state state;
      state.spec = g;
      gates_.push_back(std::move(state));
    }
    if (!make_directories()) return gate_exit_runner_failed;
    header_.manifest = &manifest_;
    header_.workspace = settings_.workspace;
    header_.backend = std::string(backend_->name());
    header_.started_at = utc_now();
    header_.state = "running";
    header_.jobs = std::max(1u, settings_.jobs);
    // Every policy is compiled before any gate runs: a manifest with a gate
    // that cannot be confined as written is known to be so at the start.
    for (auto& g : gates_) {
      if (!prepare(g)) return gate_exit_runner_failed;
    }
    if (!write_record()) return gate_exit_runner_failed;
    for (const auto& g : gates_) {
      if (g.phase == gate_phase::finished) announce(g);
    }
    int stopped_by = schedule();
    header_.state = stopped_by != 0 ? "interrupted" : "finished";
    bool written = write_record(true);
    if (!settings_.junit_file.empty()) {
      auto junit = write_file_atomically(settings_.junit_file, junit_xml(header_, gates_));
      if (!junit) {
        errors_ << "cordon: " << junit.error_value().describe() << "\n";
        written = false;
      }
    }
    if (!written) return gate_exit_runner_failed;
    if (stopped_by != 0) return 128 + stopped_by;
    bool all = std::all_of(gates_.begin(), gates_.end(),
                           [](const gate_state& g) { return g.outcome == gate_outcome::passed; });
    return all ? gate_exit_all_passed : gate_exit_not_all_passed;
  }

 private:
  int fail(const std::string& message) {
    errors_ << "cordon: usage_error: " << message << "\n";
    return gate_exit_runner_failed;
  }

  bool make_directories() {
    for (const std::string& dir : {settings_.out_dir, settings_.out_dir + "/gate"}) {
      if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
        errors_ << "cordon: io_error: " << dir << ": " << std::error_code(errno, std::generic_category()).message()
                << "\n";
        return false;
      }
    }
    return true;
  }

  std::string gate_file(const gate_state& g, std::string_view suffix) const {
    return settings_.out_dir + "/gate/" + g.spec->name + std::string(suffix);
  }

  // Selects the outcome that needs no run (not_applicable, refused), or
  // compiles the policy and writes it for the launcher. False on a manifest
  // error (a policy that cannot be read): nothing runs then.
  bool prepare(gate_state& g) {
    const gate_spec& spec = *g.spec;
    if (spec.os != target_os::any && spec.os != host_os()) {
      finish_without_run(g, gate_outcome::not_applicable,
                         "for " + std::string(to_string(spec.os)) + "; this host is " +
                             std::string(to_string(host_os())));
      return true;
    }
    auto policy = load_gate_policy(spec, manifest_.directory);
    if (!policy) {
      errors_ << "cordon: " << manifest_.path << ":" << spec.line << ": gate '" << spec.name
              << "': sandbox_policy: " << policy.error_value().describe() << "\n";
      return false;
    }
    // The gate's timeout and variables become part of the policy, so that the
    // plan and the report state them like any other control.
    if (spec.timeout_ms) {
      auto& t = policy->process.timeout_ms;
      t = t ? std::min(*t, *spec.timeout_ms) : *spec.timeout_ms;
    }
    for (const auto& kv : spec.setenv) policy->environment.set.push_back(kv);
    // A gate may write its workspace; the record must stay the runner's: a
    // gate that could edit the next gate's policy file would choose its
    // confinement. So the record directory is denied to every gate.
    std::string out_dir = real_path(settings_.out_dir);
    if (inside(out_dir, real_path(settings_.workspace))) policy->filesystem.denied.push_back(out_dir);
    g.policy_name = policy->name;
    workdir_[spec.name] = real_path(manifest_.directory + "/" + spec.workdir);
    const std::string& workdir = workdir_[spec.name];
    if (workdir.empty() || !inside(workdir, real_path(settings_.workspace))) {
      errors_ << "cordon: " << manifest_.path << ":" << spec.line << ": gate '" << spec.name << "': workdir "
              << spec.workdir << " does not exist or is outside the workspace " << settings_.workspace << "\n";
      return false;
    }
    compile_options options;
    options.workspace = settings_.workspace;
    options.home = settings_.home;
    auto compiled = backend_->compile(*policy, options);
    if (!compiled) {
      g.blockers = compiled.failure().blockers;
      std::string detail = std::string(to_string(compiled.failure().code)) + ": " + compiled.failure().message;
      for (const auto& e : compiled.failure().errors) detail += "; " + e.location + ": " + e.reason;
      finish_without_run(g, gate_outcome::refused, detail);
      return true;
    }
    const sandbox_plan& plan = *compiled.plan();
    g.policy_digest = policy_digest(plan.policy());
    g.below_enforced = below_enforced(plan.contract());
    // The launcher compiles this same policy again (it resolves the tokens
    // for its own run, {run_tmp} included); its report carries the digest.
    auto written = replace_file(gate_file(g, ".policy.json"), sandbox_policy_to_json(*policy));
    if (!written) {
      errors_ << "cordon: " << written.error_value().describe() << "\n";
      return false;
    }
    return true;
  }

  void finish_without_run(gate_state& g, gate_outcome outcome, std::string detail) {
    g.phase = gate_phase::finished;
    g.outcome = outcome;
    g.detail = std::move(detail);
  }

  std::uint64_t now_ms() const {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now() - start_).count());
  }

  // `durable`: fsync too (the final record); else a rename suffices for a
  // runner that is killed (record.h, replace_file).
  bool write_record(bool durable = false) {
    header_.elapsed_ms = now_ms();
    std::string path = settings_.out_dir + "/run.json", text = run_record_json(header_, gates_);
    auto written = durable ? write_file_atomically(path, text) : replace_file(path, text);
    if (!written) errors_ << "cordon: " << written.error_value().describe() << "\n";
    return static_cast<bool>(written);
  }

  void announce(const gate_state& g) {
    if (table_) return table_->draw(gates_, now_ms());  // the whole table, in place of one line
    const char* color = "";
    if (settings_.color) {
      switch (g.phase != gate_phase::finished ? gate_outcome::interrupted : g.outcome) {
        case gate_outcome::passed: color = "\033[32m"; break;
        case gate_outcome::failed:
        case gate_outcome::timed_out:
        case gate_outcome::refused: color = "\033[31m"; break;
        default: color = "\033[33m"; break;
      }
    }
    const char* reset = settings_.color ? "\033[0m" : "";
    std::string state = g.phase == gate_phase::running ? "running" : std::string(to_string(g.outcome));
    char elapsed[32];
    std::snprintf(elapsed, sizeof elapsed, "%.2fs", static_cast<double>(g.duration_ms) / 1000.0);
    lines_ << "gate " << g.spec->name << " " << color << state << reset << " " << elapsed;
    if (g.phase == gate_phase::finished && g.exit_status >= 0) lines_ << " exit=" << g.exit_status;
    if (g.launched) {  // what a gate that never ran would have had is beside the point
      lines_ << " below-enforced=" << (g.below_enforced.empty() ? "none" : "");
      for (std::size_t i = 0; i < g.below_enforced.size(); ++i) lines_ << (i ? "," : "") << g.below_enforced[i];
    }
    if (!g.detail.empty() && (g.outcome != gate_outcome::passed || !g.findings.empty())) {
      lines_ << " (" << g.detail << ")";
    }
    lines_ << std::endl;
    if (g.phase == gate_phase::finished) {
      for (const auto& f : g.findings) lines_ << "gate " << g.spec->name << " finding " << f << std::endl;
    }
  }

  bool needs_passed(const gate_state& g, bool& blocked) const {
    blocked = false;
    bool all = true;
    for (const auto& n : g.spec->needs) {
      const gate_state& dep = by_name(n);
      if (dep.phase != gate_phase::finished) all = false;
      else if (dep.outcome != gate_outcome::passed) blocked = true;
    }
    return all && !blocked;
  }

  const gate_state& by_name(const std::string& name) const {
    return *std::find_if(gates_.begin(), gates_.end(), [&](const gate_state& g) { return g.spec->name == name; });
  }

  // Pending gates whose needs failed become skipped, transitively.
  void propagate_skips() {
    for (bool changed = true; changed;) {
      changed = false;
      for (auto& g : gates_) {
        bool blocked = false;
        if (g.phase != gate_phase::pending) continue;
        needs_passed(g, blocked);
        if (blocked) {
          finish_without_run(g, gate_outcome::skipped, "a gate it needs did not pass");
          write_record();
          announce(g);
          changed = true;
        }
      }
    }
  }

  void start(gate_state& g) {
    gate_launch launch;
    launch.cordon_exe = settings_.cordon_exe;
    launch.workspace = settings_.workspace;
    launch.policy_file = gate_file(g, ".policy.json");
    launch.report_file = gate_file(g, ".sandbox.json");
    launch.stdout_file = gate_file(g, ".stdout.part");
    launch.stderr_file = gate_file(g, ".stderr.part");
    launch.working_directory = workdir_[g.spec->name];
    launch.argv = g.spec->argv;
    ::unlink(launch.report_file.c_str());  // a report left by an earlier run must not be read as this one's
    g.started_ms = now_ms();
    g.phase = gate_phase::running;
    g.launched = true;
    auto pid = start_confined_gate(launch, original_mask_);
    if (!pid) {
      g.phase = gate_phase::finished;
      g.outcome = gate_outcome::failed;
      g.detail = pid.error_value().describe();
    } else {
      g.pid = *pid;
    }
    write_record();
    announce(g);
  }

  // Reads the launcher's report and maps its status to the gate's outcome.
  void finish(gate_state& g, int status) {
    g.duration_ms = now_ms() - g.started_ms;
    g.phase = gate_phase::finished;
    g.pid = -1;
    for (std::string_view s : {".stdout", ".stderr"}) {
      std::string part = gate_file(g, std::string(s) + ".part");
      ::rename(part.c_str(), gate_file(g, s).c_str());
    }
    bool found = false;
    std::string report_text = read_file(gate_file(g, ".sandbox.json"), found);
    nlohmann::json report = found ? nlohmann::json::parse(report_text, nullptr, false) : nlohmann::json();
    if (found) g.report_digest = sha256_digest(report_text);
    std::string report_outcome = string_in(report, "outcome");
    if (report.is_object() && report.contains("controls") && report["controls"].is_object()) {
      g.below_enforced.clear();
      for (const auto& [name, c] : report["controls"].items()) {
        std::string level = string_in(c, "level");
        if (level != "enforced" && level != "not_applicable") g.below_enforced.push_back(name + "=" + level);
      }
    }
    g.findings = findings_in(report);
    // The launcher must have run the policy compiled here; a report that says
    // otherwise cannot vouch for the gate, whatever its exit status.
    std::string ran_digest;
    if (report.is_object() && report.contains("policy")) ran_digest = string_in(report["policy"], "digest");
    if (WIFSIGNALED(status)) {
      g.signal = WTERMSIG(status);
      if (stopping_) g.outcome = gate_outcome::interrupted, g.detail = "stopped with the run";
      else if (backstop_fired_.contains(g.spec->name)) g.outcome = gate_outcome::timed_out, g.detail = "killed by the runner's backstop";
      else g.outcome = gate_outcome::failed, g.detail = "cordon run was killed by signal " + std::to_string(g.signal);
      return;
    }
    g.exit_status = WEXITSTATUS(status);
    if (report_outcome == "interrupted" || stopping_) {
      g.outcome = gate_outcome::interrupted;
      g.detail = "stopped with the run";
    } else if (g.exit_status == 0 && report_outcome == "completed" && ran_digest != g.policy_digest) {
      g.outcome = gate_outcome::failed;
      g.detail = "the report's policy digest " + ran_digest + " is not the compiled policy's";
    } else if (g.exit_status == 0 && report_outcome == "completed" && !g.findings.empty() &&
               !g.spec->accept_findings) {
      g.outcome = gate_outcome::failed;
      g.detail = std::to_string(g.findings.size()) + " violation(s) or deferred-execution finding(s) in the report: " +
                 g.findings.front() + (g.findings.size() > 1 ? ", ..." : "") + " (accept_findings = true to pass)";
    } else if (g.exit_status == 0 && report_outcome == "completed") {
      g.outcome = gate_outcome::passed;
      if (!g.findings.empty()) g.detail = std::to_string(g.findings.size()) + " accepted finding(s)";
    } else if (g.exit_status == 124 && report_outcome == "timed_out") {
      g.outcome = gate_outcome::timed_out;
      g.detail = "the timeout fired; the tree was killed";
    } else if (report_outcome == "refused") {
      // Compiled here a moment ago, refused by the launcher: the host changed.
      g.outcome = gate_outcome::refused;
      g.detail = "the launcher refused the policy (see the report)";
    } else {
      g.outcome = gate_outcome::failed;
      if (!found || !report.is_object()) g.detail = "no report was written (see the .stderr file)";
      else if (report_outcome == "launch_failed") g.detail = "the command did not start (see the report)";
      else g.detail = "exit status " + std::to_string(g.exit_status);
    }
  }

  void reap() {
    for (;;) {
      int status = 0;
      pid_t pid = ::waitpid(-1, &status, WNOHANG);
      if (pid <= 0) return;
      auto it = std::find_if(gates_.begin(), gates_.end(), [&](const gate_state& g) { return g.pid == pid; });
      if (it == gates_.end()) continue;
      finish(*it, status);
      write_record();
      announce(*it);
    }
  }

  std::size_t running() const {
    return static_cast<std::size_t>(std::count_if(
        gates_.begin(), gates_.end(), [](const gate_state& g) { return g.phase == gate_phase::running; }));
  }

  // Kills what outlived its timeout by far; returns ms until the next such deadline.
  std::int64_t backstops() {
    std::int64_t next = 3'600'000;
    for (auto& g : gates_) {
      if (g.phase != gate_phase::running || !g.spec->timeout_ms) continue;
      std::uint64_t deadline = g.started_ms + *g.spec->timeout_ms + backstop_grace_ms;
      std::uint64_t now = now_ms();
      if (now >= deadline) {
        if (backstop_fired_.insert(g.spec->name).second) ::kill(-g.pid, SIGKILL);
      } else {
        next = std::min(next, static_cast<std::int64_t>(deadline - now));
      }
    }
    return next;
  }

  // SIGTERM to every running gate (cordon run forwards it to the tree and
  // reports `interrupted`), SIGKILL after the grace period.
  void stop_all(const sigset_t& waited) {
    stopping_ = true;
    for (auto& g : gates_) {
      if (g.phase == gate_phase::running) ::kill(-g.pid, SIGTERM);
    }
    std::uint64_t until = now_ms() + stop_grace_ms;
    while (running() > 0 && now_ms() < until) {
      std::uint64_t left = until - now_ms();
      timespec ts{static_cast<time_t>(left / 1000), static_cast<long>((left % 1000) * 1'000'000)};
      ::sigtimedwait(&waited, nullptr, &ts);
      reap();
    }
    for (auto& g : gates_) {
      if (g.phase == gate_phase::running) ::kill(-g.pid, SIGKILL);
    }
    while (running() > 0) {
      int status = 0;
      pid_t pid = ::waitpid(-1, &status, 0);
      if (pid < 0 && errno != EINTR) break;
      for (auto& g : gates_) {
        if (g.pid == pid && pid > 0) finish(g, status), write_record(), announce(g);
      }
    }
    for (auto& g : gates_) {
      if (g.phase == gate_phase::pending) {
        finish_without_run(g, gate_outcome::interrupted, "not started: the run was stopped");
        announce(g);
      }
    }
  }

  // Returns 0 when every gate finished, else the signal that stopped the run.
  int schedule() {
    sigset_t waited;
    sigemptyset(&waited);
    for (int sig : {SIGCHLD, SIGINT, SIGTERM}) sigaddset(&waited, sig);
    ::sigprocmask(SIG_BLOCK, &waited, &original_mask_);
    int stopped_by = 0;
    for (;;) {
      propagate_skips();
      for (auto& g : gates_) {
        bool blocked = false;
        if (running() >= header_.jobs) break;
        if (g.phase == gate_phase::pending && needs_passed(g, blocked)) start(g);
      }
      if (running() == 0) {
        propagate_skips();
        if (std::none_of(gates_.begin(), gates_.end(),
                         [](const gate_state& g) { return g.phase == gate_phase::pending; })) {
          break;
        }
        continue;  // a start failed at once; its dependants are skipped on the next turn
      }
      std::int64_t wait = backstops();
      if (table_) wait = std::min<std::int64_t>(wait, live_table_refresh_ms), table_->draw(gates_, now_ms());
      timespec ts{static_cast<time_t>(wait / 1000), static_cast<long>((wait % 1000) * 1'000'000)};
      siginfo_t info{};
      int sig = ::sigtimedwait(&waited, &info, &ts);
      if (sig == SIGINT || sig == SIGTERM) {
        stopped_by = sig;
        errors_ << "cordon: gate run: " << (sig == SIGINT ? "SIGINT" : "SIGTERM") << ": stopping the gates\n";
        stop_all(waited);
        break;
      }
      reap();
    }
    ::sigprocmask(SIG_SETMASK, &original_mask_, nullptr);
    return stopped_by;
  }

  const gate_manifest& manifest_;
  const run_settings& settings_;
  std::ostream& lines_;
  std::ostream& errors_;
  std::unique_ptr<sandbox_backend> backend_;
  std::vector<gate_state> gates_;
  std::map<std::string, std::string> workdir_;
  std::set<std::string> backstop_fired_;
  run_header header_;
  clock_type::time_point start_ = clock_type::now();
  sigset_t original_mask_{};
  std::optional<live_table> table_;
  bool stopping_ = false;
};

}  // namespace

int run_gates(const gate_manifest& manifest, const run_settings& settings, std::ostream& lines,
              std::ostream& errors) {
  runner r(manifest, settings, lines, errors);
  return r.run();
}

}  // namespace cordon::gates
