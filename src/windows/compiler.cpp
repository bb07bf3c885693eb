// src/windows/compiler.cpp — the Windows backend's build step on core's
// driver (see cordon/windows/compile.h). Each mechanism states its level where
// it is chosen (contract()); the driver's proof rule keeps every level
// `unverified` at best until a Windows proof run has passed.
#include <algorithm>
#include <any>
#include <atomic>
#include <cstdio>
#include <limits>

#include "cordon/windows/compile.h"
#include "windows/acl_plan.h"
#include "windows/command_line.h"
#include "windows/environment.h"
#include "windows/linux_layout.h"
#include "windows/low_integrity.h"
#include "windows/paths.h"
#include "windows/vcs_protection.h"

namespace cordon::windows {

// Only the compiler makes plans.
struct plan_builder {
  std::shared_ptr<windows_plan> plan{new windows_plan()};
  void seal(std::uint64_t identity) {
    plan->format_version_ = plan_format_version;
    plan->identity_ = identity;
    plan->process_token_ = windows_process_token();
    plan->platform_defaults_ = std::string(platform_defaults_intrinsic);
  }
  void set(sandbox_policy policy, std::optional<command_spec> command, environment_spec environment,
           detail::acl_decision acl, job_limits limits, token_spec token, std::optional<std::string> run_tmp,
           std::vector<std::string> intrinsic, enforcement_contract contract, std::vector<std::string> warnings,
           bool reference, bool recorded) {
    plan->policy_ = std::move(policy);
    plan->command_ = std::move(command);
    plan->environment_ = std::move(environment);
    plan->acl_changes_ = std::move(acl.changes);
    plan->acl_notes_ = std::move(acl.notes);
    plan->limits_ = limits;
    plan->token_ = std::move(token);
    plan->run_tmp_ = std::move(run_tmp);
    plan->intrinsic_readable_ = std::move(intrinsic);
    plan->contract_ = std::move(contract);
    plan->warnings_ = std::move(warnings);
    plan->reference_shape_ = reference;
    plan->recorded_facts_ = recorded;
  }
  // The driver's copy of a built payload: its contract and warnings.
  static std::shared_ptr<const windows_plan> finish(const windows_plan& built, const sandbox_plan& driven) {
    plan_builder b;
    windows_plan& p = *b.plan;
    p.policy_ = built.policy_;
    p.command_ = built.command_;
    p.environment_ = built.environment_;
    p.acl_changes_ = built.acl_changes_;
    p.acl_notes_ = built.acl_notes_;
    p.limits_ = built.limits_;
    p.token_ = built.token_;
    p.run_tmp_ = built.run_tmp_;
    p.intrinsic_readable_ = built.intrinsic_readable_;
    p.reference_shape_ = built.reference_shape_;
    p.recorded_facts_ = built.recorded_facts_;
    p.contract_ = driven.contract();
    p.warnings_ = driven.warnings();
    b.seal(built.identity_);
    return b.plan;
  }
};

namespace {

using detail::acl_entry;

std::atomic<std::uint64_t> next_identity{1};

blocker rule(blocker_code code, std::optional<control> which, std::string subject, std::string reason) {
  return make_windows_blocker(code, which, std::move(subject), std::move(reason));
}

std::string hex(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

bool is_windows_absolute(const std::string& p) {
  return p.size() >= 3 && ((p[0] >= 'A' && p[0] <= 'Z') || (p[0] >= 'a' && p[0] <= 'z')) && p[1] == ':' &&
         p[2] == '\\';
}

// Gate 1, after validation: root tokens resolved and every entry mapped to a
// Windows path. An entry that names no Windows path is returned with an
// empty path (the caller decides by list what that means).
struct resolved_lists {
  std::vector<acl_entry> entries;
  std::vector<acl_note> notes;
  std::vector<blocker> blockers;
  std::vector<policy_error> errors;
  std::optional<std::string> run_tmp;
};

resolved_lists resolve_lists(const sandbox_policy& policy, const host_facts& facts, std::uint64_t identity) {
  resolved_lists out;
  const auto resolve = [&](const std::vector<std::string>& list, acl_role role, const std::string& pointer) {
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string at = pointer + "/" + std::to_string(i);
      const std::string& p = list[i];
      std::optional<std::string> mapped;
      bool created = false;
      // Core resolved "{workspace}" and "{home}" (in the policy's "/C:/..."
      // spelling); "{run_tmp}" is made at launch under the temp directory.
      if (p == token_run_tmp) {
        if (!is_windows_absolute(facts.temp_directory)) {
          out.errors.push_back({at, "{run_tmp} is used but the host has no temporary directory"});
          continue;
        }
        mapped = detail::join(facts.temp_directory, "cordon-run-" + hex(windows_process_token()) + "-" +
                                                        std::to_string(identity));
        created = true;
        out.run_tmp = mapped;
      } else {
        mapped = to_windows_path(p);
      }
      if (!mapped) {
        if (role == acl_role::readable || role == acl_role::writable) {
          out.blockers.push_back(rule(blocker_code::not_a_windows_path,
                                      role == acl_role::readable ? control::filesystem_read : control::filesystem_write,
                                      p, "names no drive; write Windows roots as /C:/... (" + at + ")"));
        } else {
          out.notes.push_back({p, at, "names no Windows path (no drive letter): nothing to protect"});
        }
        continue;
      }
      bool bad_component = false;
      for (const auto& step : detail::ancestors_and_self(*mapped)) {
        const auto slash = step.rfind('\\');
        if (step.size() <= 3 || slash == std::string::npos) continue;
        if (auto why = detail::component_problem(std::string_view(step).substr(slash + 1))) {
          out.errors.push_back({at, *why});
          bad_component = true;
          break;
        }
      }
      if (!bad_component) out.entries.push_back({*mapped, role, at, created});
    }
  };
  resolve(policy.filesystem.readable, acl_role::readable, "/filesystem/readable");
  resolve(policy.filesystem.writable, acl_role::writable, "/filesystem/writable");
  resolve(policy.filesystem.protected_read_only, acl_role::protected_read_only, "/filesystem/protected_read_only");
  resolve(policy.filesystem.denied, acl_role::denied, "/filesystem/denied");
  return out;
}

// The AppContainer launcher cannot keep these meanings; refused whatever the
// enforcement section accepts (docs/windows-backend.md).
void structural_rules(const sandbox_policy& p, std::vector<blocker>& out) {
  if (p.filesystem.read == read_mode::full) {
    out.push_back(rule(blocker_code::full_read_unsupported, control::filesystem_read, "/filesystem/read",
                       "full reads: an AppContainer reads only what it is granted, so \"full\" would silently "
                       "read less than the policy says; use \"read\": \"restricted\" with the roots the command "
                       "reads in /filesystem/readable (as the built-in workspace-write does)"));
  }
  if (!p.filesystem.include_platform_defaults) {
    out.push_back(rule(blocker_code::platform_defaults_required, control::filesystem_read,
                       "/filesystem/include_platform_defaults",
                       "Windows grants AppContainers and the package groups system resources this launcher "
                       "cannot subtract; the policy must accept them (true)"));
  }
  if (p.network.mode == network_mode::unrestricted) {
    out.push_back(rule(blocker_code::network_unrestricted_unsupported, control::network_deny, "/network/mode",
                       "unrestricted networking needs AppContainer network capabilities whose reach (LAN, "
                       "loopback exemptions) differs from the policy's meaning"));
  }
  if (p.network.mode == network_mode::filtered) {
    out.push_back(rule(blocker_code::network_filtered_unsupported, control::network_filter, "/network/mode",
                       "filtered networking needs a broker the AppContainer alone can reach; not built for "
                       "Windows yet"));
  }
  if (p.network.allow_local_binding) {
    out.push_back(rule(blocker_code::local_binding_unsupported, control::network_deny,
                       "/network/allow_local_binding",
                       "an AppContainer cannot listen on loopback without a host-wide loopback exemption"));
  }
  if (!p.network.publish.empty()) {
    out.push_back(rule(blocker_code::local_binding_unsupported, control::network_deny, "/network/publish",
                       "a published port needs a listener inside the AppContainer, which cannot listen on loopback "
                       "without a host-wide loopback exemption"));
  }
}

job_limits job_limits_of(const process_policy& p) {
  job_limits limits;
  limits.kill_on_close = true;  // also when tree_cleanup is false: a run never outlives cordon
  if (p.max_processes) {
    limits.active_processes =
        static_cast<std::uint32_t>(std::min<std::uint64_t>(*p.max_processes, std::numeric_limits<std::uint32_t>::max()));
  }
  limits.job_memory_bytes = p.memory_bytes;
  if (p.cpu_seconds) {
    limits.cpu_time_100ns = std::min<std::uint64_t>(*p.cpu_seconds, std::numeric_limits<std::uint64_t>::max() / 10'000'000) *
                            10'000'000;
  }
  limits.timeout_ms = p.timeout_ms;
  return limits;
}

std::string count(std::size_t n, const char* what) { return std::to_string(n) + " " + what; }

// The level of every control, stated where the mechanism is chosen. Nothing
// is `enforced`: only a Windows runner could prove it (docs/windows-backend.md, "Levels").
// filesystem_deny's detail for protect_vcs_metadata: what is protected, and
// the metadata files that do not exist (the command could create them, and
// git on the host would then read them): while there are any, the control is
// partial.
std::string vcs_detail(const detail::vcs_protection& vcs) {
  std::string out = "protect_vcs_metadata: deny-write ACEs on the metadata of " +
                    count(vcs.repositories, vcs.repositories == 1 ? "repository" : "repositories") +
                    " found below the writable roots";
  if (vcs.absent.empty()) return out;
  out += "; absent, so the command could create them: ";
  for (std::size_t i = 0; i < vcs.absent.size() && i < 3; ++i) out += (i == 0 ? "" : ", ") + vcs.absent[i];
  if (vcs.absent.size() > 3) out += " and " + std::to_string(vcs.absent.size() - 3) + " more";
  return out;
}

enforcement_contract contract(const sandbox_policy& p, bool appcontainer, const detail::acl_decision& acl,
                              const detail::vcs_protection& vcs) {
  const auto unverified = [](std::string mechanism, std::string detail = {}) {
    return control_status{enforcement_level::unverified, std::move(mechanism),
                          detail.empty() ? "no Windows runner has verified this mechanism here" : std::move(detail)};
  };
  const auto none = [](std::string detail) { return control_status{enforcement_level::not_enforced, "", std::move(detail)}; };
  const control_status n_a{enforcement_level::not_applicable, "", "the policy sets no such limit"};
  const std::string no_ac = "no AppContainer on this host: the low-integrity fallback does not confine this";
  std::size_t grants = 0, denies = 0;
  for (const auto& c : acl.changes) (c.role == acl_role::readable || c.role == acl_role::writable ? grants : denies)++;

  enforcement_contract k;
  k[control::filesystem_read] =
      appcontainer ? unverified("AppContainer + DACL lease (" + count(grants, "granted roots") + ")")
                   : none("no AppContainer on this host: low integrity does not stop reads up");
  k[control::filesystem_write] =
      appcontainer ? unverified("AppContainer + DACL lease: data write and self-delete only")
                   : unverified("low integrity (S-1-16-4096, no-write-up) + low mandatory label on " +
                                count(grants, "writable roots") + " (" + count(denies, "medium labels") + " inside them)");
  k[control::filesystem_deny] =
      appcontainer ? unverified("protected DACLs, deny ACEs for the AppContainer and both package groups (" +
                                count(denies, "paths") + ")")
                   : none("no AppContainer on this host: low integrity keeps writes out of denied paths but "
                          "does not stop reading them");
  // protect_vcs_metadata: the metadata that exists is protected like any
  // protected path; metadata that does not exist could be created, so the
  // control is partial while there is any (the driver's proof rule states it
  // unverified, "would be partial").
  if (appcontainer && p.filesystem.protect_vcs_metadata) {
    k[control::filesystem_deny].detail = vcs_detail(vcs);
    if (!vcs.absent.empty()) k[control::filesystem_deny].level = enforcement_level::partial;
  }
  k[control::network_deny] = appcontainer ? unverified("AppContainer without network capabilities") : none(no_ac);
  k[control::network_filter] = {enforcement_level::not_applicable, "", "the policy does not filter"};
  k[control::unix_sockets] = none("Windows AF_UNIX sockets are files; no control of its own here");
  k[control::environment] = unverified("block built from scratch (CREATE_UNICODE_ENVIRONMENT)");
  k[control::process_tree_cleanup] = unverified("Job Object: KILL_ON_JOB_CLOSE, joined while suspended");
  k[control::process_count] = p.process.max_processes ? unverified("Job Object: JOB_OBJECT_LIMIT_ACTIVE_PROCESS") : n_a;
  k[control::memory] = p.process.memory_bytes ? unverified("Job Object: JOB_OBJECT_LIMIT_JOB_MEMORY") : n_a;
  k[control::cpu] = p.process.cpu_seconds ? unverified("Job Object: JOB_OBJECT_LIMIT_JOB_TIME") : n_a;
  k[control::timeout] = p.process.timeout_ms ? unverified("launcher deadline, TerminateJobObject") : n_a;
  k[control::privilege] = unverified(std::string("restricted token: DISABLE_MAX_PRIVILEGE, Administrators deny-only") +
                                     (appcontainer ? ", AppContainer (low integrity)"
                                                   : ", restricting SIDs, low integrity (no AppContainer)"));
  k[control::descriptor_hygiene] = unverified("PROC_THREAD_ATTRIBUTE_HANDLE_LIST: the three standard handles only");
  k[control::syscall_filter] = none("Windows offers this launcher no system call filter");
  k[control::terminal] = unverified("CREATE_NO_WINDOW: no console shared with the caller; stdin is NUL");
  k[control::devices] = appcontainer ? unverified("AppContainer without device capabilities") : none(no_ac);
  return k;
}

// A control the policy requires that the low-integrity fallback cannot give,
// refused with the typed reason (core's driver adds no second blocker for it).
void fallback_blockers(const sandbox_policy& p, const enforcement_contract& k, std::vector<blocker>& out) {
  for (const auto& [which, required] : required_enforcement(p, "windows")) {
    const auto it = k.find(which);
    if (it == k.end() || level_satisfies(it->second.level, required)) continue;
    const bool fallback_gap = which == control::filesystem_read || which == control::filesystem_deny ||
                              which == control::network_deny || which == control::devices;
    if (!fallback_gap) continue;
    blocker b = rule(blocker_code::appcontainer_unavailable, which, "/enforcement/" + std::string(to_string(which)),
                     "the host has no AppContainer and the low-integrity fallback cannot give it: " + it->second.detail);
    b.required = required;
    b.available = it->second.level;
    out.push_back(std::move(b));
  }
}

std::vector<std::string> intrinsic_roots(const host_facts& facts) {
  std::vector<std::string> out;
  if (is_windows_absolute(facts.system_root)) {
    out.push_back(facts.system_root);
    const std::string drive = facts.system_root.substr(0, 3);
    out.push_back(drive + "Program Files");
    out.push_back(drive + "Program Files (x86)");
  }
  return out;
}

std::optional<command_spec> resolve_invocation(const windows_compile_options& options, const std::string& workspace,
                                               const environment_spec& env, const host_facts& facts,
                                               std::vector<blocker>& blockers) {
  command_spec spec;
  spec.argv = options.argv;
  spec.working_directory = options.working_directory.empty() ? workspace : options.working_directory;
  if (!is_windows_absolute(spec.working_directory)) {
    blockers.push_back(rule(blocker_code::command_not_found, std::nullopt, spec.working_directory,
                            "the working directory must be an absolute Windows path"));
    return std::nullopt;
  }
  std::string path_variable;
  for (const auto& [name, value] : env.entries) {
    if (detail::equals_ignoring_case(name, "PATH")) path_variable = value;
  }
  auto app = detail::resolve_command(options.argv[0], spec.working_directory, path_variable, facts, blockers);
  if (!app) return std::nullopt;
  spec.application = *app;
  if (const auto image = find_path(facts, *app)) {
    spec.volume_serial = image->volume_serial;
    spec.file_index = image->file_index;
  }
  spec.command_line = detail::build_command_line(options.argv);
  return spec;
}

// The command must be readable to the AppContainer: inside a granted root
// (and not decided by a denial) or inside an intrinsic platform directory.
void check_command_readable(const command_spec& command, const detail::acl_decision& acl,
                            const std::vector<std::string>& intrinsic, std::vector<blocker>& blockers) {
  const acl_change* decider = nullptr;
  for (const auto& c : acl.changes) {
    if (detail::is_within(command.application, c.path) && (decider == nullptr || detail::depth(c.path) > detail::depth(decider->path))) {
      decider = &c;
    }
  }
  if (decider != nullptr) {
    if (decider->role == acl_role::denied) {
      blockers.push_back(rule(blocker_code::command_not_readable, control::filesystem_read, command.application,
                              "lies inside denied " + decider->path));
    }
    return;
  }
  for (const auto& root : intrinsic) {
    if (detail::is_within(command.application, root)) return;
  }
  blockers.push_back(rule(blocker_code::command_not_readable, control::filesystem_read, command.application,
                          "is outside every readable root and every platform directory; add its folder to "
                          "/filesystem/readable"));
}

}  // namespace

std::string_view to_string(blocker_code code) noexcept {
  switch (code) {
    case blocker_code::backend_unavailable: return "backend_unavailable";
    case blocker_code::isolation_insufficient: return "isolation_insufficient";
    case blocker_code::full_read_unsupported: return "full_read_unsupported";
    case blocker_code::platform_defaults_required: return "platform_defaults_required";
    case blocker_code::network_unrestricted_unsupported: return "network_unrestricted_unsupported";
    case blocker_code::network_filtered_unsupported: return "network_filtered_unsupported";
    case blocker_code::local_binding_unsupported: return "local_binding_unsupported";
    case blocker_code::appcontainer_unavailable: return "appcontainer_unavailable";
    case blocker_code::not_a_windows_path: return "not_a_windows_path";
    case blocker_code::root_missing: return "root_missing";
    case blocker_code::root_reparse_point: return "root_reparse_point";
    case blocker_code::root_acls_not_persistent: return "root_acls_not_persistent";
    case blocker_code::root_volume_unknown: return "root_volume_unknown";
    case blocker_code::hard_links: return "hard_links";
    case blocker_code::scan_truncated: return "scan_truncated";
    case blocker_code::absent_inside_writable: return "absent_inside_writable";
    case blocker_code::environment_collision: return "environment_collision";
    case blocker_code::environment_not_utf8: return "environment_not_utf8";
    case blocker_code::environment_invalid_name: return "environment_invalid_name";
    case blocker_code::command_not_found: return "command_not_found";
    case blocker_code::command_not_executable: return "command_not_executable";
    case blocker_code::command_not_readable: return "command_not_readable";
    case blocker_code::requirement_not_met: return "requirement_not_met";
  }
  return "unknown";
}

blocker make_windows_blocker(blocker_code code, std::optional<control> which, std::string object, std::string reason) {
  blocker b = which ? blocker::for_control(*which, enforcement_level::enforced, enforcement_level::not_enforced,
                                           object + ": " + reason)
                    : blocker::for_backend(object + ": " + reason);
  b.cause = std::string(to_string(code));
  b.object = std::move(object);
  return b;
}

bool has_cause(const blocker& b, blocker_code code) { return b.cause == to_string(code); }

namespace {

std::string trimmed_workspace(std::string workspace) {
  while (workspace.size() > 3 && workspace.back() == '\\') workspace.pop_back();
  return workspace;
}

// The backend's step: the mechanisms for a policy the driver's gates 1-3
// accepted, and their levels.
result<backend_build> build_mechanisms(const sandbox_policy& normalized, const host_facts& facts,
                                       const windows_compile_options& options) {
  const std::string workspace = trimmed_workspace(options.workspace);
  const std::uint64_t identity = next_identity.fetch_add(1);
  resolved_lists lists = resolve_lists(normalized, facts, identity);
  if (!lists.errors.empty()) {
    error e = make_error(error_code::invalid_policy, "policy is invalid for Windows");
    e.errors = std::move(lists.errors);
    return e;
  }
  backend_build built;
  std::vector<blocker>& blockers = built.blockers;
  blockers = std::move(lists.blockers);
  structural_rules(normalized, blockers);
  // protect_vcs_metadata: the repositories' metadata as protected entries (vcs_protection.h).
  detail::vcs_protection vcs;
  if (normalized.filesystem.protect_vcs_metadata) {
    vcs = detail::vcs_entries(lists.entries, facts);
    lists.entries.insert(lists.entries.end(), vcs.entries.begin(), vcs.entries.end());
  }
  // The built-in profiles' POSIX PATH and /tmp, read as Windows can (warned).
  const environment_policy environment =
      detail::windows_reading_of(normalized.environment, lists.run_tmp, facts.system_root, built.warnings);
  environment_spec env = detail::build_environment(environment, facts.environment, blockers);
  // With an AppContainer: the DACL lease. Without one: the low-integrity
  // fallback's mandatory labels (low_integrity.h).
  detail::acl_decision acl = facts.appcontainer_available ? detail::decide_acl_changes(lists.entries, facts)
                                                          : detail::decide_label_changes(lists.entries, facts);
  blockers.insert(blockers.end(), acl.blockers.begin(), acl.blockers.end());
  acl.notes.insert(acl.notes.begin(), lists.notes.begin(), lists.notes.end());
  const std::vector<std::string> intrinsic = intrinsic_roots(facts);
  std::optional<command_spec> command;
  if (!options.argv.empty()) {
    command = resolve_invocation(options, workspace, env, facts, blockers);
    if (command && facts.appcontainer_available) check_command_readable(*command, acl, intrinsic, blockers);
  }

  token_spec token;
  token.appcontainer = facts.appcontainer_available;
  if (token.appcontainer) {
    token.appcontainer_name = "cordon." + hex(windows_process_token()) + "." + std::to_string(identity);
  } else {
    token.low_integrity = true;
    token.restricting_sids = detail::fallback_restricting_sids();
    built.warnings.push_back(detail::fallback_warning());
  }
  if (facts.wine) {
    built.warnings.push_back("wine host: job limits, token restrictions, AppContainer and DACLs are not what Windows "
                             "does; nothing here proves confinement");
  }
  built.contract = contract(normalized, facts.appcontainer_available, acl, vcs);
  if (!facts.appcontainer_available) fallback_blockers(normalized, built.contract, blockers);
  plan_builder builder;
  const job_limits limits = job_limits_of(normalized.process);
  builder.set(normalized, std::move(command), std::move(env), std::move(acl), limits, std::move(token), lists.run_tmp,
              intrinsic, built.contract, {}, facts.reference_shape, facts.recorded);
  builder.seal(identity);
  built.payload = builder.plan;
  return built;
}

compile_options driver_options(const host_facts& facts, const windows_compile_options& options) {
  compile_options o;
  o.workspace = trimmed_workspace(options.workspace);
  if (is_windows_absolute(facts.user_profile)) o.home = facts.user_profile;
  return o;
}

}  // namespace

cordon::host_facts to_driver_facts(const host_facts& facts, const windows_compile_options& options) {
  cordon::host_facts h;
  h.platform = "windows";
  h.home = is_windows_absolute(facts.user_profile) ? facts.user_profile : std::string();
  const bool reference_launch = facts.reference_shape && !options.argv.empty();
  h.backend_available = facts.job_objects && !reference_launch;
  h.backend_blocker = !facts.job_objects ? "host " + facts.windows_version + " has no nested Job Objects"
                      : reference_launch ? "the facts describe no real host: a reference shape cannot launch a command"
                                         : std::string();
  h.lines.push_back(std::string(facts.reference_shape ? "reference shape: Windows " : "Windows ") + facts.windows_version);
  h.lines.push_back(std::string("AppContainer: ") + (facts.appcontainer_available ? "yes" : "no"));
  if (facts.wine) h.lines.push_back("wine: yes");
  h.recorded = facts.recorded;
  h.backend_facts = windows_backend_facts{facts, options};
  return h;
}

std::uint32_t windows_backend::plan_format_version() const noexcept { return cordon::windows::plan_format_version; }

cordon::host_facts windows_backend::read_host_facts(const compile_options& options, bool) const {
  windows_compile_options o;
  o.workspace = options.workspace;
  const host_facts reference = reference_host_facts();
  cordon::host_facts h = to_driver_facts(reference, o);
  h.workspace = reference.user_profile + "\\work";
  return h;
}

result<backend_build> windows_backend::build(const sandbox_policy& normalized, const cordon::host_facts& facts) const {
  const auto* w = std::any_cast<windows_backend_facts>(&facts.backend_facts);
  if (w == nullptr) {
    error e = make_error(error_code::backend_unavailable, "the host facts carry no Windows record");
    e.blockers.push_back(blocker::for_backend("no Windows host facts"));
    return e;
  }
  return build_mechanisms(normalized, w->host, w->invocation);
}

result<run_outcome> windows_backend::launch(const sandbox_plan* plan, const launch_request&) const {
  if (auto checked = check_plan(plan, platform()); !checked) return std::move(checked).error_value();
  return make_error(error_code::unsupported_platform,
                    "Windows plans launch through launch_windows_plan() in cordon.exe (cordon/windows/launcher.h)");
}

const windows_backend& the_windows_backend() {
  static const windows_backend backend;
  return backend;
}

windows_compile_result compile_windows_plan(const sandbox_policy& policy, const host_facts& facts,
                                            const windows_compile_options& options) {
  const std::string workspace = trimmed_workspace(options.workspace);
  if (!workspace.empty() && !is_windows_absolute(workspace)) {
    error e = make_error(error_code::invalid_policy, "the workspace must be an absolute Windows path");
    e.errors.push_back({"", "workspace \"" + workspace + "\" is not of the form X:\\..."});
    return {nullptr, std::move(e)};
  }
  auto compiled = the_windows_backend().compile(policy, driver_options(facts, options), to_driver_facts(facts, options));
  if (!compiled) return {nullptr, compiled.failure()};
  const sandbox_plan& driven = *compiled.plan();
  return {plan_builder::finish(*static_cast<const windows_plan*>(driven.payload()), driven), std::nullopt};
}

std::vector<std::string> paths_to_probe(const sandbox_policy& policy, const host_facts& base,
                                        const windows_compile_options& options) {
  std::vector<std::string> out;
  auto resolved = the_windows_backend().resolve(policy, driver_options(base, options), to_driver_facts(base, options));
  if (!resolved) return out;
  resolved_lists lists = resolve_lists(*resolved, base, 0);
  for (const auto& e : lists.entries) out.push_back(e.created_at_launch ? base.temp_directory : e.path);
  if (!options.argv.empty()) {
    std::vector<blocker> ignored;
    std::vector<std::string> unused;
    const environment_spec env = detail::build_environment(
        detail::windows_reading_of(resolved->environment, lists.run_tmp, base.system_root, unused), base.environment,
        ignored);
    std::string path_variable;
    for (const auto& [name, value] : env.entries) {
      if (detail::equals_ignoring_case(name, "PATH")) path_variable = value;
    }
    const std::string cwd = options.working_directory.empty() ? options.workspace : options.working_directory;
    for (auto& c : detail::command_candidates(options.argv[0], cwd, path_variable)) out.push_back(std::move(c));
  }
  return out;
}

}  // namespace cordon::windows
