// The Linux backend: probe, the four compile gates, and launch.
#include "cordon/linux_backend.h"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "cordon/validation.h"
#include "linux/contract.h"
#include "linux/host_facts.h"
#include "linux/linux_plan.h"
#include "linux/mount_table.h"
#include "linux/paths.h"
#include "linux/seccomp_filter.h"
#include "linux/supervisor.h"

namespace cordon {
namespace {

using namespace linux_impl;

constexpr std::string_view kPlatform = "linux";
constexpr isolation_level kIsolation = isolation_level::container;
constexpr std::uint64_t kMaxScanEntries = 200000;  // directories per writable root

std::string invoking_home() {
  if (const char* home = std::getenv("HOME"); home != nullptr && home[0] == '/') return home;
  if (passwd* pw = ::getpwuid(::getuid()); pw != nullptr && pw->pw_dir != nullptr) return pw->pw_dir;
  return {};
}

compile_failure invalid(std::vector<policy_error> errors) {
  compile_failure f;
  f.code = error_code::invalid_policy;
  f.message = errors.size() == 1 ? "policy is invalid: 1 error" : "policy is invalid: " + std::to_string(errors.size()) + " errors";
  f.errors = std::move(errors);
  return f;
}

// Resolves "{workspace}" and "{home}" in every path list (gate 1: a policy
// whose tokens cannot be resolved is invalid for this invocation).
std::vector<policy_error> resolve_tokens(sandbox_policy& policy, const token_roots& roots) {
  std::vector<policy_error> errors;
  auto resolve_list = [&](std::vector<std::string>& list, const std::string& pointer) {
    for (std::size_t i = 0; i < list.size(); ++i) {
      auto resolved = resolve_token(list[i], roots, pointer + "/" + std::to_string(i));
      if (!resolved) {
        errors.push_back({resolved.error_value().location, resolved.error_value().message});
      } else {
        list[i] = normalize_path_lexically(*resolved);
      }
    }
  };
  resolve_list(policy.filesystem.readable, "/filesystem/readable");
  resolve_list(policy.filesystem.writable, "/filesystem/writable");
  resolve_list(policy.filesystem.protected_read_only, "/filesystem/protected_read_only");
  resolve_list(policy.filesystem.denied, "/filesystem/denied");
  return errors;
}

// What mounts cannot prevent, the run report must show: a git redirect file
// or a whole new repository created inside a writable root would make git,
// run later by the host, read config and hooks the command wrote.
void check_repository_metadata(const linux_plan_payload& payload, run_outcome& outcome) {
  for (const auto& path : payload.watch_absent) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0) {
      outcome.violations.push_back({"repository_redirect_created", path, 1});
      outcome.warnings.push_back("created during the run: " + path +
                                 " (it redirects git's config and hooks); inspect it before running git there");
    }
  }
  for (const auto& path : payload.watch_gitmodules) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0) {
      outcome.warnings.push_back("created during the run: " + path +
                                 " (submodule URLs and paths the command chose); inspect it before running "
                                 "git submodule there");
    }
  }
  for (const auto& before : payload.repository_scans) {
    for (const auto& repo : repositories_created_since(before, kMaxScanEntries)) {
      outcome.violations.push_back({"repository_created", repo, 1});
      outcome.warnings.push_back("created during the run: " + repo +
                                 " (a repository whose config and hooks the command chose); inspect it before "
                                 "running git there");
    }
  }
}

class linux_backend final : public sandbox_backend {
 public:
  std::string_view name() const noexcept override { return linux_backend_name; }
  std::uint32_t plan_format_version() const noexcept override { return linux_plan_format_version; }

  host_capabilities probe() const override {
    const host_facts& facts = current_host_facts();
    host_capabilities caps;
    caps.platform = std::string(kPlatform);
    caps.backend = std::string(name());
    std::string failure;
    caps.available = facts.user_namespaces && try_namespaces(failure);
    if (!facts.user_namespaces) failure = facts.user_namespace_blocker;
    caps.isolation = caps.available ? kIsolation : isolation_level::none;
    caps.best = linux_best_contract(facts);
    if (!caps.available) caps.blockers.push_back({"backend", "available", "unavailable", failure});
    for (const auto& [which, status] : caps.best) {
      if (status.level == enforcement_level::enforced || status.level == enforcement_level::not_applicable) continue;
      caps.blockers.push_back({std::string(to_string(which)), "enforced", std::string(to_string(status.level)),
                               status.detail});
    }
    caps.facts.push_back("uid " + std::to_string(facts.uid) + (facts.uid == 0 ? " (root)" : " (unprivileged)"));
    caps.facts.push_back(facts.user_namespaces ? "user namespaces: yes" : "user namespaces: no");
    caps.facts.push_back(facts.landlock_abi > 0 ? "landlock abi " + std::to_string(facts.landlock_abi)
                                                : facts.landlock_blocker);
    caps.facts.push_back(facts.seccomp ? "seccomp: yes" : "seccomp: no");
    if (facts.nested_user_namespace) caps.facts.push_back("nested: started in a user namespace other than the initial one");
    if (facts.seccomp_filtered) caps.facts.push_back("nested: cordon itself already runs under a seccomp filter");
    return caps;
  }

  compile_result<std::shared_ptr<const sandbox_plan>> compile(const sandbox_policy& policy,
                                                              const compile_options& options) const override {
    // Gate 1: validate and normalize, then resolve root tokens.
    validation_result validated = validate_sandbox_policy(policy);
    if (!validated.ok()) return invalid(std::move(validated.errors));
    sandbox_policy normalized = std::move(validated.policy);
    token_roots roots;
    if (!options.workspace.empty()) roots.workspace = resolve_on_host(options.workspace).path;
    roots.home = options.home.empty() ? invoking_home() : options.home;
    if (auto errors = resolve_tokens(normalized, roots); !errors.empty()) return invalid(std::move(errors));

    // Gate 2: the backend runs here.
    const host_facts& facts = current_host_facts();
    if (!facts.user_namespaces) {
      compile_failure f;
      f.code = error_code::backend_unavailable;
      f.message = "the Linux backend cannot run on this host";
      f.blockers.push_back({"backend", "available", "unavailable", facts.user_namespace_blocker});
      return f;
    }
    // Gate 3: isolation.
    if (static_cast<int>(kIsolation) < static_cast<int>(normalized.isolation)) {
      compile_failure f;
      f.code = error_code::isolation_insufficient;
      f.message = "the policy requires isolation '" + std::string(to_string(normalized.isolation)) +
                  "' but this backend provides '" + std::string(to_string(kIsolation)) + "'";
      f.blockers.push_back({"isolation", std::string(to_string(normalized.isolation)),
                            std::string(to_string(kIsolation)), "namespaces, not a virtual machine"});
      return f;
    }
    // Gate 4: build the plan's mechanisms, then hold every requirement against them.
    auto payload = std::make_shared<linux_plan_payload>();
    std::vector<std::string> warnings = relaxation_warnings(normalized);
    std::vector<blocker> blockers;

    mount_table_input input;
    input.policy = &normalized;
    if (normalized.filesystem.protect_vcs_metadata) {
      for (const auto& root : normalized.filesystem.writable) {
        if (root == token_run_tmp) continue;
        resolved_path r = resolve_on_host(root);
        if (!r.exists || !r.is_directory) continue;
        vcs_scan scan = scan_vcs_metadata(r.path, kMaxScanEntries);
        if (scan.truncated) {
          blockers.push_back({"filesystem_deny", "enforced", "not_enforced",
                              "writable root " + r.path + " has more than " + std::to_string(kMaxScanEntries) +
                                  " directories to scan for repositories; list protected paths explicitly"});
        }
        for (const auto& missing : scan.missing) {
          blockers.push_back({"filesystem_deny", "enforced", "not_enforced",
                              "repository metadata " + missing +
                                  " does not exist and could be created by the command; create it first"});
        }
        // An absent .gitmodules cannot be bound read-only; warning about it
        // in every repository without submodules would teach people to skip
        // warnings, so the run says so only if the command created one.
        payload->watch_gitmodules.insert(payload->watch_gitmodules.end(), scan.absent_gitmodules.begin(),
                                         scan.absent_gitmodules.end());
        input.vcs_protected.insert(input.vcs_protected.end(), scan.protect.begin(), scan.protect.end());
        payload->watch_absent.insert(payload->watch_absent.end(), scan.absent_redirects.begin(),
                                     scan.absent_redirects.end());
        payload->repository_scans.push_back(std::move(scan));
      }
    }
    mount_table_result mounts = build_mount_table(input);
    blockers.insert(blockers.end(), mounts.blockers.begin(), mounts.blockers.end());
    payload->mounts = std::move(mounts.table);
    payload->workspace = roots.workspace;
    payload->new_network_namespace = normalized.network.mode != network_mode::unrestricted;
    const bool filtered = normalized.network.mode == network_mode::filtered;
    payload->network_broker = filtered;
    payload->loopback_up = payload->new_network_namespace && (normalized.network.allow_local_binding || filtered);

    seccomp_options seccomp;
    seccomp.deny_non_unix_sockets =
        normalized.network.mode != network_mode::unrestricted && !normalized.network.allow_local_binding;
    seccomp.allow_inet_sockets = filtered;
    seccomp.notify_connect = filtered;
    seccomp.broker_port = filtered ? broker_port : 0;
    seccomp.allow_loopback_connect = normalized.network.allow_local_binding;
    // Root is mapped to itself: a setuid file it creates would be setuid root on the host.
    seccomp.deny_setuid_bits = facts.uid == 0;
    seccomp.notify = true;  // blocked calls become violations in the report
    if (facts.seccomp) {
      auto program = build_seccomp_program(seccomp);
      if (!program) {
        compile_failure f;
        f.code = error_code::enforcement_unavailable;
        f.message = "could not build the seccomp filter: " + program.error_value().message;
        f.blockers.push_back({"syscall_filter", "enforced", "not_enforced", program.error_value().message});
        return f;
      }
      payload->seccomp = std::move(*program);
    }

    payload->landlock.abi = facts.landlock_abi;
    payload->landlock.rules = landlock_rules_for(payload->mounts);
    // TCP through Landlock: none in denied mode; in filtered mode, connect to
    // the broker's port only. With local binding the namespace is the layer
    // (Landlock rules name ports, not addresses: any port must stay open).
    payload->landlock.restrict_tcp = seccomp.deny_non_unix_sockets;
    if (filtered && payload->landlock.restrict_tcp) payload->landlock.tcp_connect_ports = {broker_port};
    payload->landlock.scope_signals_and_abstract_sockets = true;

    // Limits: a cgroup for the whole tree where this user may create one,
    // else a per-process rlimit (partial).
    const process_policy& limits = normalized.process;
    if (limits.memory_bytes || limits.max_processes || limits.cpu_seconds) {
      payload->cgroups = find_cgroup_site(options.cgroup_parent);
    }
    if (limits.memory_bytes) {
      if (!payload->cgroups.memory_parent.empty()) {
        payload->tree_limits.memory_bytes = limits.memory_bytes;
      } else {
        payload->rlimits.push_back({RLIMIT_AS, *limits.memory_bytes, "RLIMIT_AS"});
      }
    }
    if (limits.cpu_seconds) {
      if (!payload->cgroups.cpu_parent.empty()) {
        payload->tree_limits.cpu_seconds = limits.cpu_seconds;
      } else {
        payload->rlimits.push_back({RLIMIT_CPU, *limits.cpu_seconds, "RLIMIT_CPU"});
      }
    }
    if (limits.max_processes) {
      if (!payload->cgroups.pids_parent.empty()) {
        payload->tree_limits.max_processes = limits.max_processes;
      } else if (facts.uid != 0) {
        // The kernel never applies RLIMIT_NPROC to the host's root user (fork.c), so it is no limit there.
        payload->rlimits.push_back({RLIMIT_NPROC, *limits.max_processes, "RLIMIT_NPROC"});
      }
    }

    enforcement_contract contract = linux_contract(normalized, *payload, facts);
    for (const auto& [which, required] : required_enforcement(normalized)) {
      const control_status& have = contract[which];
      if (!level_satisfies(have.level, required)) {
        blockers.push_back({std::string(to_string(which)), std::string(to_string(required)),
                            std::string(to_string(have.level)),
                            have.detail.empty() ? "no mechanism on this host" : have.detail});
      }
    }
    if (!blockers.empty()) {
      compile_failure f;
      f.code = error_code::enforcement_unavailable;
      f.message = std::to_string(blockers.size()) + (blockers.size() == 1 ? " required control" : " required controls") +
                  " cannot be enforced on this host";
      f.blockers = std::move(blockers);
      return f;
    }
    for (const auto& note : mounts.notes) warnings.push_back(note);
    if (facts.landlock_abi == 0) {
      warnings.push_back("landlock not used (" + facts.landlock_blocker +
                         "): the mount namespace is the only filesystem layer");
    }
    for (const auto& [which, status] : contract) {
      if (status.level == enforcement_level::partial || status.level == enforcement_level::not_enforced ||
          status.level == enforcement_level::planned) {
        warnings.push_back(std::string(to_string(which)) + " is " + std::string(to_string(status.level)) +
                           (status.detail.empty() ? "" : ": " + status.detail));
      }
    }
    payload->landlock.abi = facts.landlock_abi;
    return make_plan(std::move(normalized), std::string(kPlatform), kIsolation, std::move(contract), std::move(warnings),
                     std::move(payload));
  }

  result<run_outcome> launch(const sandbox_plan* plan, const launch_request& request) const override {
    if (auto checked = check_plan(plan, kPlatform); !checked) return std::move(checked).error_value();
    const auto* payload = dynamic_cast<const linux_plan_payload*>(plan->payload());
    if (payload == nullptr) return make_error(error_code::plan_foreign, "plan carries no Linux payload");
    auto outcome = supervise_launch(*plan, *payload, request);
    if (outcome) {
      outcome->mounts = describe_mounts(payload->mounts);
      check_repository_metadata(*payload, *outcome);
    }
    return outcome;
  }
};

}  // namespace

std::unique_ptr<sandbox_backend> make_linux_backend() { return std::make_unique<linux_backend>(); }

}  // namespace cordon
