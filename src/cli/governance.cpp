// `cordon exec`, `cordon audit verify|show`, `cordon rules test`,
// `cordon session init|show|grow`: the governance layer on the command line
// (docs/governance.md).
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cstdlib>
#include <thread>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "cli/capped_run.h"
#include "cli/command.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/workspace.h"
#include "cordon/governance/runtime.h"
#include "cordon/governance/session_boundary.h"
#include "cordon/policy_json.h"
#include "cordon/profiles.h"
#include "cordon/report.h"
#include "posix/atomic_file.h"
#include "posix/directory_lock.h"

extern char** environ;

namespace cordon::cli {
namespace {

namespace gov = cordon::governance;

constexpr const char* kExecHelp = R"(Runs one capability request (JSON) through the governance runtime: the rules
decide allow / deny / require_approval; an approval request shows the compiled
sandbox plan; an allowed command runs under the session boundary's sandbox
policy (without --session: the workspace-write profile in --workspace or the
current directory). The decision and the run's report are printed on stderr;
the command's own output is its own. Every step is audited to --audit FILE
(tamper-evident JSON Lines; without it, events are kept in memory only).

--approver: deny (the default: require_approval is denied), tty (ask on the
terminal), or a command line split on spaces and run without a shell (the
approval request as JSON on its stdin, one JSON decision on its stdout;
--approver-timeout seconds, default 60, then denied).

Exit status:
  the command's own exit code, or 128+N when signal N killed it
  124  the sandbox's timeout fired
  125  cordon failed: usage, unreadable request, rules or session file, the
       sandbox cannot enforce the policy, audit log unusable at start
  126, 127  the command cannot be executed / was not found
  200  denied: by a rule, or by the approver
  201  rejected: approval needed without an approval service, manual review,
       a stale boundary revision, backend selection, an audit failure; or the
       run was cancelled (SIGINT, SIGTERM, SIGHUP))";

struct exec_options {
  std::string request, rules, approver = "deny", audit, audit_key_file, session, workspace, backend = "auto";
  double approver_timeout = 60;
  std::uint64_t max_output = 0;  // --max-output BYTES (cli/capped_run.h)
};

struct session_options {
  std::string file, workspace, profile, policy, id, kind, approver = "deny", audit;
  std::vector<std::string> values;
  std::uint64_t revision = 0;
  std::string reason;
};

result<std::string> read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(error_code::io_error, "cannot read " + path, {}, errno);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::unique_ptr<gov::approval_service> make_approver(const std::string& spec, double timeout_seconds) {
  if (spec == "deny") return std::make_unique<gov::deny_all_approval_service>();
  if (spec == "tty") return std::make_unique<gov::terminal_approval_service>();
  std::vector<std::string> argv;
  std::istringstream words(spec);
  for (std::string w; words >> w;) argv.push_back(w);
  return std::make_unique<gov::external_command_approval_service>(
      argv, std::chrono::milliseconds(static_cast<long long>(timeout_seconds * 1000)));
}

// A durable sink when asked for, else memory; `key_file` holds the key of a
// keyed head (docs/governance.md).
result<std::unique_ptr<gov::audit_sink>> make_sink(const std::string& path, const std::string& key_file = "") {
  if (path.empty()) return std::unique_ptr<gov::audit_sink>(std::make_unique<gov::in_memory_audit_sink>());
  gov::jsonl_sink_options options;
  if (!key_file.empty()) {
    auto key = read_text(key_file);
    if (!key) return std::move(key).error_value();
    options.head_key = std::move(*key);
  }
  auto sink = gov::jsonl_audit_sink::open(path, options);
  if (!sink) return std::move(sink).error_value();
  return std::unique_ptr<gov::audit_sink>(std::move(*sink));
}

int exit_for(const gov::execution_result& r) {
  switch (r.status) {
    case gov::execution_status::completed:
      return r.outcome && r.outcome->exited ? r.outcome->exit_code : 128 + (r.outcome ? r.outcome->signal : 0);
    case gov::execution_status::authorized: return 0;
    case gov::execution_status::denied: return exit_denied;
    case gov::execution_status::rejected: return exit_rejected;
    case gov::execution_status::refused: return exit_cordon_failed;
    case gov::execution_status::timed_out: return exit_timeout;
    case gov::execution_status::cancelled: return exit_rejected;
    case gov::execution_status::failed: {
      auto text = r.reason;
      if (text.rfind("command_not_found", 0) == 0) return exit_not_found;
      if (text.rfind("command_not_executable", 0) == 0) return exit_not_executable;
      return exit_cordon_failed;
    }
  }
  return exit_cordon_failed;
}

result<std::pair<gov::session_boundary, gov::approval_ledger>> load_session(const std::string& file) {
  auto text = read_text(file);
  if (!text) return std::move(text).error_value();
  return gov::session_boundary::from_json(*text);
}

// Writes the session file back after a run, under its directory's lock
// (session_grow takes it too): from the file as it is now, so a growth made
// while the command ran stays, plus the grants this run's ledger holds.
result<void> save_session_after_run(const std::string& file, const gov::approval_ledger& ledger) {
  directory_lock lock(file);
  if (auto held = lock.status(); !held) return held;
  auto current = load_session(file);
  if (!current) return std::move(current).error_value();
  current->second.merge(ledger);
  return write_file_atomically(file, current->first.to_json(current->second));
}

int exec_request(const exec_options& o) {
  auto text = read_text(o.request);
  if (!text) return print_error(text.error_value()), exit_cordon_failed;
  auto request = gov::capability_request_from_json(*text);
  if (!request) return print_error(request.error_value()), exit_cordon_failed;
  auto rules = gov::capability_policy::load(o.rules);
  if (!rules) return print_error(rules.error_value()), exit_cordon_failed;
  auto backend = gov::backend_preference_from_string(o.backend);
  if (!backend) {
    std::cerr << "cordon: usage_error: --backend auto, require or forbid\n";
    return exit_cordon_failed;
  }
  std::optional<gov::session_boundary> boundary;
  gov::approval_ledger ledger;
  if (!o.session.empty()) {
    auto session_text = read_text(o.session);
    if (!session_text) return print_error(session_text.error_value()), exit_cordon_failed;
    auto loaded = gov::session_boundary::from_json(*session_text);
    if (!loaded) return print_error(loaded.error_value()), exit_cordon_failed;
    boundary = std::move(loaded->first);
    ledger = std::move(loaded->second);
  } else {
    const char* home = std::getenv("HOME");
    auto ws = choose_workspace(o.workspace, current_directory(), home != nullptr ? home : "");
    if (!ws) return print_error(ws.error_value()), exit_cordon_failed;
    auto made = gov::session_boundary::create("cli-" + std::to_string(::getpid()), ws->workspace,
                                              *builtin_profile(default_profile_name));
    if (!made) return print_error(made.error_value()), exit_cordon_failed;
    boundary = std::move(*made);
    if (request->working_directory.empty()) request->working_directory = ws->working_directory;
  }
  auto sink = make_sink(o.audit, o.audit_key_file);
  if (!sink) return print_error(sink.error_value()), exit_cordon_failed;
  auto approver = make_approver(o.approver, o.approver_timeout);
  gov::execution_runtime runtime(*rules, sink->get(), approver.get(), &ledger);
  auto context = boundary->context(*backend);
  // The head exists by the time the plan is compiled: the decision is audited first.
  gov::deny_records_to_command(context, o.audit, o.session);
  gov::deny_records_to_command(context, "", o.audit_key_file);  // the head key, like a record
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) context.host_environment.emplace_back(*e);
  if (request->working_directory.empty()) request->working_directory = boundary->workspace();
  // SIGINT, SIGTERM and SIGHUP cancel the run (recorded as run.cancelled)
  // instead of killing cordon before the run's end is audited.
  sigset_t stop_signals, previous;
  ::sigemptyset(&stop_signals);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaddset(&stop_signals, sig);
  ::pthread_sigmask(SIG_BLOCK, &stop_signals, &previous);
  std::atomic<bool> finished{false};
  std::thread watcher([&] {
    timespec tick{0, 100'000'000};
    while (!finished.load()) {
      if (::sigtimedwait(&stop_signals, nullptr, &tick) > 0) runtime.cancel();
    }
  });
  auto r = o.max_output == 0 ? runtime.execute(*request, context) : execute_capped(runtime, *request, context, o.max_output);
  finished.store(true);
  watcher.join();
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);

  std::cerr << "cordon: decision: " << gov::to_string(r.decision.decision)
            << (r.decision.rule_id.empty() ? "" : " (rule " + r.decision.rule_id + ")") << ": " << r.decision.reason << "\n";
  if (r.approval) {
    std::cerr << "cordon: approval: " << gov::to_string(r.approval->kind) << " (" << gov::to_string(r.approval->scope)
              << ", " << r.approval->approver << "): " << r.approval->reason << "\n";
  }
  std::cerr << "cordon: " << gov::to_string(r.status) << ": " << r.reason << "\n";
  if (!r.report_json.empty()) std::cerr << r.report_json << "\n";
  if (!o.session.empty()) {
    if (auto saved = save_session_after_run(o.session, ledger); !saved) {
      print_error(saved.error_value());
      return exit_cordon_failed;
    }
  }
  if (auto flushed = (*sink)->flush(); !flushed) print_error(flushed.error_value());
  return exit_for(r);
}

std::string short_id(const std::string& id) { return id.size() > 8 ? id.substr(0, 8) : id; }

int audit_verify(const std::string& path, bool no_head, const std::string& key_file) {
  gov::audit_verify_options options;
  options.require_head = !no_head;
  if (!key_file.empty()) {
    auto key = read_text(key_file);
    if (!key) return print_error(key.error_value()), exit_cordon_failed;
    options.head_key = std::move(*key);
  }
  auto v = gov::verify_audit_log(path, options);
  if (!v) return print_error(v.error_value()), exit_cordon_failed;
  if (!v->ok) {
    std::cerr << "cordon: audit: " << path << ": line " << v->bad_line << ": " << v->problem << "\n";
    std::cout << "bad: " << v->events << " records verified before line " << v->bad_line << "\n";
    return exit_check_failed;
  }
  std::cout << "ok: " << v->events << " records, last hash " << v->last_hash
            << (!options.head_key.empty() ? " (keyed head verified)" : !v->head_present ? " (no head: chain only)" : "")
            << "\n";
  for (const auto& id : v->interrupted_runs) std::cout << "interrupted: run " << id << " started and never ended\n";
  return 0;
}

int audit_show(const std::string& path) {
  auto v = gov::verify_audit_log(path);
  if (!v) return print_error(v.error_value()), exit_cordon_failed;
  std::cout << std::left << std::setw(5) << "SEQ" << std::setw(25) << "TIME" << std::setw(10) << "MODULE"
            << std::setw(20) << "EVENT" << std::setw(18) << "OUTCOME" << std::setw(10) << "RUN"
            << "DETAIL\n";
  for (const auto& rec : v->records) {
    const auto& e = rec.event;
    auto run = e.ids.count("run_id") ? e.ids.at("run_id") : "";
    std::string detail = e.attributes.count("reason") ? e.attributes.at("reason") : "";
    if (e.event == "run.started" && std::find(v->interrupted_runs.begin(), v->interrupted_runs.end(), run) != v->interrupted_runs.end()) {
      detail = "INTERRUPTED: no end was recorded" + (detail.empty() ? "" : "; " + detail);
    }
    if (e.attributes.count("approval_for_tests_only")) detail += " [allow_all: tests only]";
    std::cout << std::setw(5) << rec.seq << std::setw(25) << e.timestamp << std::setw(10) << e.module << std::setw(20)
              << e.event << std::setw(18) << e.outcome << std::setw(10) << short_id(run) << detail << "\n";
  }
  if (!v->ok) {
    std::cout << "BAD at line " << v->bad_line << ": " << v->problem << "\n";
    return exit_check_failed;
  }
  std::cout << "verified: " << v->events << " records\n";
  return 0;
}

int rules_test(const std::string& path) {
  auto rules = gov::capability_policy::load(path);
  if (!rules) {
    print_error(rules.error_value());
    // docs/governance.md: 1 when the file is not good, 125 when it cannot be read.
    return rules.error_value().code == error_code::io_error ? exit_cordon_failed : exit_check_failed;
  }
  std::size_t examples = rules->examples().size();
  for (const auto& r : rules->rules()) examples += r.match_examples.size() + r.not_match_examples.size();
  std::cout << "ok: " << rules->rules().size() << " rules, " << examples << " examples pass (" << rules->digest() << ")\n";
  return 0;
}

int session_init(const session_options& o) {
  result<sandbox_policy> policy = !o.policy.empty() ? load_sandbox_policy(o.policy)
                                  : builtin_profile(o.profile.empty() ? default_profile_name : std::string_view(o.profile));
  if (!policy) return print_error(policy.error_value()), exit_cordon_failed;
  const char* home = std::getenv("HOME");
  auto ws = choose_workspace(o.workspace, current_directory(), home != nullptr ? home : "");
  if (!ws) return print_error(ws.error_value()), exit_cordon_failed;
  auto b = gov::session_boundary::create(o.id.empty() ? "session-" + std::to_string(::getpid()) : o.id, ws->workspace, *policy);
  if (!b) return print_error(b.error_value()), exit_cordon_failed;
  if (auto saved = write_file_atomically(o.file, b->to_json({})); !saved) return print_error(saved.error_value()), exit_cordon_failed;
  std::cout << "session " << b->session_id() << " at revision 1 in " << b->workspace() << "\n";
  return 0;
}


int session_show(const std::string& file) {
  auto s = load_session(file);
  if (!s) return print_error(s.error_value()), exit_cordon_failed;
  const auto& b = s->first;
  std::cout << "session " << b.session_id() << ", workspace " << b.workspace() << ", revision " << b.revision() << "\n";
  for (const auto& h : b.history()) {
    std::cout << "  r" << h.revision << "  " << h.timestamp << "  " << h.policy_digest << "  "
              << (h.growth.empty() ? h.reason : h.growth + " (approved by " + h.approver + ": " + h.reason + ")") << "\n";
  }
  std::cout << sandbox_policy_to_json(b.policy()) << "\n";
  return 0;
}

int session_grow(const session_options& o) {
  // Held from the read to the write: a second grow waits, then finds the
  // revision moved (stale), and an exec's write-back cannot fall between.
  directory_lock lock(o.file);
  if (auto held = lock.status(); !held) return print_error(held.error_value()), exit_cordon_failed;
  auto s = load_session(o.file);
  if (!s) return print_error(s.error_value()), exit_cordon_failed;
  auto kind = gov::growth_kind_from_string(o.kind);
  if (!kind) {
    std::cerr << "cordon: usage_error: --kind readable, writable, hosts or environment\n";
    return exit_cordon_failed;
  }
  auto sink = make_sink(o.audit);
  if (!sink) return print_error(sink.error_value()), exit_cordon_failed;
  auto approver = make_approver(o.approver, 60);
  auto r = s->first.grow({o.revision, *kind, o.values, o.reason, ""}, approver.get(), **sink);
  std::cerr << "cordon: " << gov::to_string(r.status) << ": " << r.reason << "\n";
  if (r.status != gov::growth_status::grown) return r.status == gov::growth_status::denied ? exit_denied : r.status == gov::growth_status::refused ? exit_cordon_failed : exit_rejected;
  if (auto saved = write_file_atomically(o.file, s->first.to_json(s->second)); !saved) {
    return print_error(saved.error_value()), exit_cordon_failed;
  }
  return 0;
}

// `cordon exec`.
struct exec_command final : command {
  exec_options exec;
  void add_options(CLI::App& app) override {
    app.footer(kExecHelp);
    app.add_option("--request", exec.request, "A file holding the capability request (JSON)")->required();
    app.add_option("--rules", exec.rules, "The capability rules (JSON)")->required();
    app.add_option("--approver", exec.approver, "deny, tty, or an approver command");
    app.add_option("--approver-timeout", exec.approver_timeout, "Seconds an approver command may take (default 60)");
    app.add_option("--audit", exec.audit, "Append the audit events to this tamper-evident log");
    app.add_option("--audit-key-file", exec.audit_key_file, "Key (16+ bytes) of the log's keyed head (HMAC-SHA256)");
    app.add_option("--session", exec.session, "The session file (cordon session init); its boundary and grants");
    app.add_option("--workspace", exec.workspace, "Without --session: the workspace directory");
    app.add_option("--backend", exec.backend, "auto, require or forbid (backend selection)");
    app.add_option("--max-output", exec.max_output,
                   "Relay at most BYTES of each of stdout and stderr: the first and the last half, and a note of what "
                   "was dropped (cordon run --help)")
        ->type_name("BYTES")
        ->check(CLI::PositiveNumber);
  }
  int execute() override { return exec_request(exec); }
};

// `cordon audit verify FILE`.
struct audit_verify_command final : command {
  std::string file, head_key_file;
  bool no_head = false;
  void add_options(CLI::App& app) override {
    app.footer("Exit status: 0 every record verifies; 1 a record is edited, removed, inserted, reordered or "
               "truncated (the line is named), or the log has records and no head file (unless --no-head), or "
               "the keyed head does not verify; 125 the log or key cannot be read, or bad usage.");
    app.add_option("file", file, "The log")->required();
    app.add_flag("--no-head", no_head, "No head file is kept: verify the chain alone (a cut end goes unseen)");
    app.add_option("--head-key-file", head_key_file, "The head must carry a MAC under this key, naming the last record");
  }
  int execute() override { return audit_verify(file, no_head, head_key_file); }
};

// `cordon audit show FILE`.
struct audit_show_command final : command {
  std::string file;
  void add_options(CLI::App& app) override {
    app.footer("Exit status: 0 shown and every record verifies; 1 shown up to a bad record; 125 the log cannot be "
               "read, or bad usage.");
    app.add_option("file", file, "The log")->required();
  }
  int execute() override { return audit_show(file); }
};

// `cordon rules test FILE`.
struct rules_test_command final : command {
  std::string file;
  void add_options(CLI::App& app) override {
    app.footer("Exit status: 0 the file is valid and every example passes; 1 it is invalid or an example fails "
               "(its location is named); 125 the file cannot be read, or bad usage.");
    app.add_option("file", file, "The rules file")->required();
  }
  int execute() override { return rules_test(file); }
};

// `cordon session init FILE`.
struct session_init_command final : command {
  session_options session;
  void add_options(CLI::App& app) override {
    app.add_option("file", session.file)->required();
    app.add_option("--workspace", session.workspace, "The workspace directory");
    app.add_option("--profile", session.profile, "Built-in profile (default workspace-write)");
    app.add_option("--policy", session.policy, "Policy file");
    app.add_option("--id", session.id, "Session id");
    app.footer("Exit status: 0 the session file was written; 125 the policy, profile or workspace is refused, the "
               "file cannot be written, or bad usage.");
  }
  int execute() override { return session_init(session); }
};

// `cordon session show FILE`.
struct session_show_command final : command {
  std::string file;
  void add_options(CLI::App& app) override {
    app.add_option("file", file)->required();
    app.footer("Exit status: 0 shown; 125 the session file cannot be read or is not one, or bad usage.");
  }
  int execute() override { return session_show(file); }
};

// `cordon session grow FILE`.
struct session_grow_command final : command {
  session_options session;
  void add_options(CLI::App& app) override {
    app.add_option("file", session.file)->required();
    app.add_option("--revision", session.revision, "The revision this growth is based on")->required();
    app.add_option("--kind", session.kind, "readable, writable, hosts or environment")->required();
    app.add_option("--value", session.values, "A path, HOST[:PORT] or variable name")->required();
    app.add_option("--reason", session.reason, "Why");
    app.add_option("--approver", session.approver, "deny, tty, or an approver command");
    app.add_option("--audit", session.audit, "Audit log");
    app.footer("Exit status: 0 the boundary grew (a new revision was written); 200 the approver denied it; 201 "
               "rejected (a stale --revision, a growth that is not valid, no approval to be had); 125 the session "
               "file or audit log cannot be used, the growth is refused, or bad usage (docs/governance.md).");
  }
  int execute() override { return session_grow(session); }
};

}  // namespace

std::unique_ptr<command> make_exec_command() { return std::make_unique<exec_command>(); }
std::unique_ptr<command> make_audit_verify_command() { return std::make_unique<audit_verify_command>(); }
std::unique_ptr<command> make_audit_show_command() { return std::make_unique<audit_show_command>(); }
std::unique_ptr<command> make_rules_test_command() { return std::make_unique<rules_test_command>(); }
std::unique_ptr<command> make_session_init_command() { return std::make_unique<session_init_command>(); }
std::unique_ptr<command> make_session_show_command() { return std::make_unique<session_show_command>(); }
std::unique_ptr<command> make_session_grow_command() { return std::make_unique<session_grow_command>(); }

}  // namespace cordon::cli
