// launcher.cpp — the steps of run_sidecar (launcher.h), in the order that
// keeps "the report comes before trust": every check and the compile happen
// before anything starts; the launch report is on disk before the first
// protocol byte is forwarded.
#include "sidecars/launcher.h"

#include <unistd.h>

#include <cerrno>

#include "cordon/backend.h"
#include "cordon/run.h"
#include "core/utc_time.h"

namespace cordon::sidecars {
namespace {

using ojson = nlohmann::ordered_json;

// Where the reports go: a file (atomic rewrites) and/or a descriptor (one line each).
class report_sink {
 public:
  report_sink(report_target file, int fd) : file_(std::move(file)), fd_(fd) {}
  // False (after saying why on `errors`) when a report could not be kept.
  bool write(const ojson& report, std::ostream& errors) const {
    const std::string text = report.dump(2, ' ', false, ojson::error_handler_t::replace) + "\n";
    if (file_.is_open()) {
      if (auto written = file_.write(text); !written) {
        errors << "cordon: " << to_string(written.error_value().code) << ": " << written.error_value().describe() << "\n";
        return false;
      }
    }
    if (fd_ >= 0) {
      std::string line = report.dump(-1, ' ', false, ojson::error_handler_t::replace) + "\n";
      std::string_view rest = line;
      while (!rest.empty()) {
        ssize_t n = ::write(fd_, rest.data(), rest.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
          errors << "cordon: io_error: the report descriptor " << fd_ << " cannot be written\n";
          return false;
        }
        rest.remove_prefix(static_cast<std::size_t>(n));
      }
    }
    return true;
  }

 private:
  report_target file_;
  int fd_;
};

struct checked_extension {
  extension_evidence evidence;
  std::optional<error> refusal;
};

// The extension's files and grants, before anything is compiled or started.
checked_extension check_extension(const sidecar_request& request) {
  checked_extension out;
  out.evidence.manifest = request.extension;
  const extension_manifest& m = *request.extension;
  out.evidence.file_problems = verify_extension_files(m);
  if (!out.evidence.file_problems.empty()) {
    std::string message = "extension files do not match the manifest's digests";
    for (const auto& p : out.evidence.file_problems) message += "\n" + p;
    out.refusal = make_error(error_code::usage_error, message, m.path);
    return out;
  }
  if (m.grants.empty()) return out;
  if (request.capability_rules.empty()) {
    out.refusal = make_error(error_code::usage_error,
                             "the extension asks for " + std::to_string(m.grants.size()) +
                                 " protocol grant(s): name the host's capability rules with --capability-rules",
                             m.path);
    return out;
  }
  auto rules = governance::capability_policy::load(request.capability_rules);
  if (!rules) {
    out.refusal = rules.error_value();
    return out;
  }
  out.evidence.rules_name = rules->name();
  out.evidence.rules_digest = rules->digest();
  out.evidence.grants = judge_grants(m, *rules);
  std::string denied;
  for (const auto& g : out.evidence.grants) {
    if (g.decision != governance::decision_kind::allow) {
      denied += "\n" + g.grant + ": " + std::string(governance::to_string(g.decision)) + ": " + g.reason;
    }
  }
  if (!denied.empty()) {
    out.refusal = make_error(error_code::usage_error, "the host's capability rules do not allow every grant" + denied,
                             m.path);
  }
  return out;
}

void print(std::ostream& errors, const error& err) {
  std::string message = err.message;
  std::size_t nl = message.find('\n');
  errors << "cordon: " << to_string(err.code) << ": " << (err.location.empty() ? "" : err.location + ": ")
         << message.substr(0, nl) << "\n";
  while (nl != std::string::npos) {
    std::size_t next = message.find('\n', nl + 1);
    errors << "cordon: " << to_string(err.code) << ": "
           << message.substr(nl + 1, next == std::string::npos ? std::string::npos : next - nl - 1) << "\n";
    nl = next;
  }
}

}  // namespace

int run_sidecar(const sidecar_request& request, std::ostream& errors) {
  launch_facts facts;
  facts.proto = request.session.proto;
  facts.argv = request.argv;
  facts.workspace = request.workspace;
  facts.handshake_timeout_ms = request.session.proto == protocol::raw
                                   ? 0
                                   : static_cast<std::uint64_t>(request.session.handshake_timeout.count());
  facts.requirements = request.requirements;

  // The report's directory is opened first: a sidecar whose evidence cannot be kept does not start.
  report_target file;
  if (!request.report_file.empty()) {
    auto opened = report_target::open(request.report_file);
    if (!opened) return print(errors, opened.error_value()), sidecar_exit_refused;
    file = std::move(*opened);
  }
  const report_sink sink(std::move(file), request.report_fd);
  auto refuse = [&](const error& why, const std::vector<blocker>& blockers, const std::vector<std::string>& unmet) {
    print(errors, why);
    for (const auto& b : blockers) {
      errors << "cordon: blocker: " << b.subject_name() << ": required " << b.required_name() << ", available "
             << b.available_name() << ": " << b.reason << "\n";
    }
    sink.write(refused_report(facts, why, blockers, unmet), errors);
    return sidecar_exit_refused;
  };

  checked_extension extension;
  if (request.extension != nullptr) {
    extension = check_extension(request);
    facts.extension = &extension.evidence;
    if (extension.refusal) return refuse(*extension.refusal, {}, {});
  }

  auto policy = request.extension != nullptr ? load_extension_policy(*request.extension) : load_policy_reference(request.policy_ref, request.policy_base);
  if (!policy) return refuse(policy.error_value(), {}, {});
  auto backend = make_host_backend();
  compile_options options;
  options.workspace = request.workspace;
  auto compiled = backend->compile(*policy, options);
  if (!compiled) {
    const compile_failure& f = compiled.failure();
    std::string message = f.message;
    for (const auto& e : f.errors) message += "\n" + (e.location.empty() ? "" : e.location + ": ") + e.reason;
    return refuse(make_error(f.code, message), f.blockers, {});
  }
  const sandbox_plan& plan = *compiled.plan();
  if (auto unmet = unmet_requirements(request.requirements, plan.contract()); !unmet.empty()) {
    std::string message = "the plan does not meet --require";
    for (const auto& u : unmet) message += "\n" + u;
    return refuse(make_error(error_code::enforcement_unavailable, message), {}, unmet);
  }

  run_request run;
  run.launch.argv = request.argv;
  run.launch.working_directory = request.working_directory;
  run.launch.host_environment = request.host_environment;
  run.stdin_spec = stdio_spec::pipe();
  run.stdout_spec = stdio_spec::pipe();
  run.supervisor_path = request.supervisor_path;
  const std::string started_at = detail::utc_timestamp_ms_now();
  auto started = start_run(plan, run);
  if (!started) return refuse(started.error_value(), {}, {});

  // Before trust: the launch report is kept before the session forwards a byte.
  ojson report = launch_report(facts, plan, started->pid(), started_at);
  if (!sink.write(report, errors)) {
    started->cancel();
    started->wait();
    return sidecar_exit_refused;
  }
  session_result ended = run_session(*started, request.session);
  int status = ended.reason == ending_reason::handshake_timeout ? sidecar_exit_handshake_timeout
                                                                 : exit_code_for(ended.run);
  if (ended.run.failure) print(errors, *ended.run.failure);
  if (ended.reason == ending_reason::handshake_timeout) errors << "cordon: handshake_timeout: " << ended.detail << "\n";
  if (ended.discarded_count > 0) {
    errors << "cordon: sidecar: " << ended.discarded_count << " stretch(es) of output that were not "
           << to_string(request.session.proto) << " frames were discarded (" << ended.discarded_bytes << " bytes)\n";
  }
  add_ending(report, ended, status, detail::utc_timestamp_ms_now());
  if (!sink.write(report, errors)) return sidecar_exit_refused;
  return status;
}

}  // namespace cordon::sidecars
