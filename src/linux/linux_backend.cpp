// The Linux backend: its host facts, build() (the mechanisms for one policy
// and the level each gives) and launch. The gates are core's
// (src/core/compile.cpp).
#include "cordon/linux_backend.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <set>

#include "core/broker_endpoint.h"
#include "linux/contract.h"
#include "linux/git_worktrees.h"
#include "linux/host_facts.h"
#include "linux/linux_plan.h"
#include "linux/mount_table.h"
#include "linux/paths.h"
#include "linux/pool_watch.h"
#include "linux/post_run_watch.h"
#include "linux/private_tmp.h"
#include "linux/process_limits.h"
#include "linux/seccomp_filter.h"
#include "linux/supervisor.h"
#include "linux/view_diagnosis.h"
#include "posix/listing_store.h"
#include "core/environment.h"
#include "core/git_sources.h"

namespace cordon {
namespace {

using namespace linux_impl;

constexpr isolation_level kIsolation = isolation_level::container;

// The scan's listing store (posix/listing_store.h) is read only because no
// sandbox can write it: inside a writable root it is made now and bound
// read-only, whether or not this plan protects repository metadata (a run
// that could write it would choose what a later run does not read again).
// A store that cannot be made or is not this user's own is not used.
void choose_listing_store(const sandbox_policy& normalized, const std::string& home, mount_table_input& input,
                          linux_plan_payload& payload) {
  const std::string store = vcs::listing_store_dir(home);
  if (store.empty()) return;
  const std::string resolved_store = resolve_on_host(store).path;
  auto inside = [](const std::string& path, const std::string& root) {
    return root == "/" || path == root || path.rfind(root + "/", 0) == 0;
  };
  bool writable = false;
  for (const auto& root : normalized.filesystem.writable) {
    if (root != token_run_tmp && inside(resolved_store, resolve_on_host(root).path)) writable = true;
  }
  if (writable) {
    if (!vcs::prepare_listing_store(store)) return;
    input.vcs_protected.push_back(resolve_on_host(store).path);
  }
  payload.listing_store = store;
}

// Repository metadata inside the writable roots: what the mount table
// re-binds read-only, what it cannot cover (blockers and warnings), and what
// the launcher checks after the run (linux/post_run_watch.h): what mounts
// cannot prevent, the run report must show (docs/deferred-execution.md).
void scan_repositories(const sandbox_policy& normalized, const std::string& home, mount_table_input& input,
                       linux_plan_payload& payload, backend_build& out, worktree_roots& worktrees) {
  payload.home = home;
  std::vector<std::string> writable_roots, readable_roots;
  for (const auto& root : normalized.filesystem.writable) {
    if (root != token_run_tmp) writable_roots.push_back(resolve_on_host(root).path);
  }
  for (const auto& root : normalized.filesystem.readable) readable_roots.push_back(resolve_on_host(root).path);
  // The host's git configuration, as git reads it for the user running
  // cordon with this process's environment (core/git_sources.h).
  std::vector<std::string> environment;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) environment.emplace_back(*e);
  const core::git_config_tree host_git = core::read_host_git_config(home, environment);
  for (const auto& root : normalized.filesystem.writable) {
    if (root == token_run_tmp) continue;
    resolved_path r = resolve_on_host(root);
    if (!r.exists || !r.is_directory) continue;
    // The listings stay in the scan's child (read from and written back to
    // the store), or come from this process's watch set (linux/pool_watch.h).
    std::string how;
    vcs_scan scan = scan_writable_root(r.path, home, payload.listing_store, how);
    vcs::apply_host_config(r.path, host_git, home, scan);
    vcs::watch_agent_config(r.path, writable_roots, scan);
    // Host-created worktrees bring their repository; a missing hooks/ is made (linux/git_worktrees.h).
    add_worktree_repositories(writable_roots, readable_roots, home, scan, worktrees);
    create_missing_hooks(scan, out.warnings);
    // One order whatever was found or made: the run API's helper compiles again after hooks/ exists, and
    // its plan must have the same fingerprint.
    std::sort(scan.protect.begin(), scan.protect.end());
    scan.protect.erase(std::unique(scan.protect.begin(), scan.protect.end()), scan.protect.end());
    // No workspace is refused for its size; a config git would read and the
    // scan cannot refuses the run (linux/post_run_watch.h).
    report_scan_bounds(r.path, scan, out);
    for (const auto& missing : scan.missing) {
      out.blockers.push_back(blocker::for_control(
          control::filesystem_deny, enforcement_level::enforced, enforcement_level::not_enforced,
          "repository metadata " + missing + " does not exist and could be created by the command; create it first"));
    }
    input.vcs_protected.insert(input.vcs_protected.end(), scan.protect.begin(), scan.protect.end());
    watch_repository_scan(r.path, std::move(scan), payload);
  }
  watch_writable_home(home, writable_roots, payload);
}

void choose_network(const sandbox_policy& normalized, linux_plan_payload& payload) {
  payload.new_network_namespace = normalized.network.mode != network_mode::unrestricted;
  const bool filtered = normalized.network.mode == network_mode::filtered;
  payload.network_broker = filtered;
  // Denied: the namespace's own loopback is the command's (local servers,
  // test fixtures); filtered: the broker's listener is there.
  payload.loopback_up = payload.new_network_namespace;
}

// The last components of the read-only paths (binds or masks) the table puts
// inside a writable root, and of the pins above them, where a rename over one
// or its removal reaches the kernel's mount point check (EBUSY) instead of
// the read-only flag (EROFS). Non-empty: the supervisor answers those calls
// (mount_point_changes.h).
std::vector<std::string> protected_names_inside_writable(const mount_table& table) {
  std::set<std::string> names;
  for (const auto& op : table.ops) {
    const bool pin = op.kind == mount_kind::bind_writable && op.why == "pin";
    if (op.kind != mount_kind::bind_read_only && op.kind != mount_kind::mask && !pin) continue;
    const auto slash = op.path.rfind('/');
    if (slash == std::string::npos || slash + 1 >= op.path.size()) continue;
    const std::string parent = slash == 0 ? "/" : op.path.substr(0, slash);
    for (const auto& root : table.ops) {
      if (root.kind == mount_kind::bind_writable && &root != &op && path_is_within(parent, root.path)) {
        names.insert(op.path.substr(slash + 1));
        break;
      }
    }
  }
  return {names.begin(), names.end()};
}

// The read-only binds the table puts inside a writable root (protected
// .git/config, .git/hooks, a protected_read_only path in the workspace, ...):
// an open for writing or a truncate there is EROFS from the mount, and the
// supervisor records it (protected_writes.h). Masks (denied paths) are not
// listed: their mode-000 file or directory answers EACCES, as before.
std::vector<std::string> protected_write_paths(const mount_table& table) {
  std::vector<std::string> paths;
  for (const auto& op : table.ops) {
    if (op.kind != mount_kind::bind_read_only) continue;
    for (const auto& root : table.ops) {
      if (root.kind == mount_kind::bind_writable && root.why != "pin" && op.path != root.path &&
          path_is_within(op.path, root.path)) {
        paths.push_back(op.path);
        break;
      }
    }
  }
  return paths;
}

seccomp_options seccomp_for(const sandbox_policy& normalized, const host_facts& facts) {
  const bool filtered = normalized.network.mode == network_mode::filtered;
  const bool denied = normalized.network.mode == network_mode::denied;
  seccomp_options seccomp;
  seccomp.deny_non_unix_sockets =
      normalized.network.mode != network_mode::unrestricted && !normalized.network.allow_local_binding;
  // Denied: IPv4/IPv6 sockets live in the sandbox's network namespace, whose
  // only interface is its own loopback (no route out, nobody else in it), so
  // they expose nothing; connect(2) reaches that loopback only. Filtered: the
  // broker's listener, and what is routed to it.
  seccomp.allow_inet_sockets = filtered || denied;
  seccomp.notify_connect = filtered || denied;
  // A network namespace of its own: every connect(2) can be performed by the
  // supervisor (no IP connect leaves the namespace to wait on the world), so
  // named unix sockets are checked there (unix_connect.h).
  seccomp.notify_unix_connect = normalized.network.mode != network_mode::unrestricted;
  seccomp.broker_port = filtered ? broker_port : 0;
  // Filtered without local binding: a loopback destination is the host's, judged by the broker's rules.
  seccomp.allow_loopback_connect = denied || normalized.network.allow_local_binding;
  // Root is mapped to itself: a setuid file it creates would be setuid root on the host.
  seccomp.deny_setuid_bits = facts.uid == 0;
  seccomp.notify = true;  // blocked calls become violations in the report
  return seccomp;
}

void choose_landlock(const sandbox_policy& normalized, const linux_host_facts& facts, const seccomp_options& seccomp,
                     linux_plan_payload& payload) {
  payload.landlock.abi = facts.landlock_abi;
  payload.landlock.rules = landlock_rules_for(payload.mounts);
  // TCP through Landlock: in filtered mode, connect to the broker's port only.
  // In denied mode and with local binding the namespace is the layer: the
  // command binds and connects on its own loopback, and Landlock rules name
  // ports, not addresses (any port must stay open).
  payload.landlock.restrict_tcp =
      seccomp.deny_non_unix_sockets && normalized.network.mode == network_mode::filtered;
  if (normalized.network.mode == network_mode::filtered && payload.landlock.restrict_tcp) {
    payload.landlock.tcp_connect_ports = {broker_port};
  }
  payload.landlock.scope_signals_and_abstract_sockets = true;
}

// Limits (process_limits.h); a memory limit that only an rlimit holds also
// sizes the sandbox's tmpfs mounts, whose pages no rlimit counts.
void choose_limits(const process_policy& limits, const host_facts& facts, const linux_host_facts& linux_facts,
                   linux_plan_payload& payload) {
  process_limits_plan chosen = choose_process_limits(limits, facts, linux_facts);
  if (limits.memory_bytes && !chosen.tree_limits.memory_bytes) {
    // Files in the sandbox's tmpfs are memory no rlimit counts: each such
    // mount holds at most the limit (docs/doors.md, "Limits").
    payload.tmpfs_options += ",size=" + std::to_string(*limits.memory_bytes);
  }
  payload.rlimits = std::move(chosen.rlimits);
  payload.cgroups = std::move(chosen.cgroups);
  payload.tree_limits = chosen.tree_limits;
}

class linux_backend final : public sandbox_backend {
 public:
  linux_backend() { install_pool_scan_hooks(); }
  std::string_view name() const noexcept override { return linux_backend_name; }
  std::uint32_t plan_format_version() const noexcept override { return linux_plan_format_version; }

  std::string_view platform() const noexcept override { return "linux"; }
  isolation_level isolation() const noexcept override { return kIsolation; }

  host_facts read_host_facts(const compile_options& options, bool deep) const override {
    return read_linux_host_facts(options.cgroup_parent, deep);
  }

  result<host_facts> load_host_facts(std::string_view record, const compile_options&) const override {
    return load_linux_host_facts(record);
  }
  result<std::string> record_host_facts(const host_facts& facts) const override {
    return record_linux_host_facts(facts);
  }

  result<backend_build> build(const sandbox_policy& normalized, const host_facts& facts) const override {
    const linux_host_facts* linux_facts = linux_facts_of(facts);
    if (linux_facts == nullptr) return no_linux_facts();
    backend_build out;
    auto payload = std::make_shared<linux_plan_payload>();
    mount_table_input input;
    input.policy = &normalized;
    worktree_roots worktrees;
    choose_listing_store(normalized, facts.home, input, *payload);
    if (normalized.filesystem.protect_vcs_metadata) {
      scan_repositories(normalized, facts.home, input, *payload, out, worktrees);
    }
    // The repositories of host-created worktrees join the writable roots of the table (not of the policy).
    sandbox_policy with_worktrees;
    if (!worktrees.writable.empty()) {
      with_worktrees = normalized;
      auto& writable = with_worktrees.filesystem.writable;
      writable.insert(writable.end(), worktrees.writable.begin(), worktrees.writable.end());
      input.policy = &with_worktrees;
      out.warnings.insert(out.warnings.end(), worktrees.notes.begin(), worktrees.notes.end());
    }
    mount_table_result mounts = build_mount_table(input);
    out.blockers.insert(out.blockers.end(), mounts.blockers.begin(), mounts.blockers.end());
    payload->mounts = std::move(mounts.table);
    complete_private_tmp(payload->mounts, out.warnings);  // /var/tmp; writes beside a root under /tmp fail
    for (auto& note : mounts.notes) out.warnings.push_back(std::move(note));

    choose_network(normalized, *payload);
    seccomp_options seccomp = seccomp_for(normalized, facts);
    const auto read_only_names = protected_names_inside_writable(payload->mounts);
    seccomp.notify_mount_point_changes = !read_only_names.empty();
    auto write_paths = protected_write_paths(payload->mounts);
    seccomp.notify_protected_writes = !write_paths.empty();
    if (linux_facts->seccomp) {
      auto program = build_plan_seccomp(seccomp);
      if (!program) return std::move(program).error_value();
      payload->seccomp = std::move(*program);
      if (payload->seccomp.unix_connect_checked) {
        payload->seccomp.unix_sockets_allowed = normalized.filesystem.unix_sockets;
        if (payload->network_broker) payload->seccomp.unix_sockets_allowed.emplace_back(broker::broker_socket_path);
        payload->seccomp.unix_private_tmp = payload->mounts.private_tmp;
      }
      if (payload->seccomp.mount_point_changes_checked) payload->seccomp.mount_point_names = read_only_names;
      if (payload->seccomp.protected_writes_checked) payload->seccomp.protected_write_paths = std::move(write_paths);
    }
    choose_landlock(normalized, *linux_facts, seccomp, *payload);
    if (linux_facts->landlock_abi == 0) {
      out.warnings.push_back("landlock not used (" + linux_facts->landlock_blocker +
                             "): the mount namespace is the only filesystem layer");
    }
    choose_limits(normalized.process, facts, *linux_facts, *payload);
    out.contract = linux_contract(normalized, *payload, *linux_facts);
    out.payload = std::move(payload);
    return out;
  }

  result<run_outcome> launch(const sandbox_plan* plan, const launch_request& request) const override {
    if (auto checked = check_plan(plan, platform()); !checked) return std::move(checked).error_value();
    const auto* payload = dynamic_cast<const linux_plan_payload*>(plan->payload());
    if (payload == nullptr) return make_error(error_code::plan_foreign, "plan carries no Linux payload");
    // The command diagnosed below: a prepared sandbox's comes after the start.
    launch_request ran;
    const bool prepared = static_cast<bool>(request.next_command);
    // The plan's mount table, described before the run: after it, the
    // report waits for nothing that the plan alone decides.
    std::vector<std::string> mounts = describe_mounts(payload->mounts);
    auto outcome = supervise_launch(*plan, *payload, request, prepared ? &ran : nullptr);
    const launch_request& command = prepared ? ran : request;
    if (outcome) {
      outcome->mounts = std::move(mounts);
      check_repository_metadata(*payload, *outcome);
      // Paths named on the command line that the view hides (linux/view_diagnosis.h).
      for (auto& line : arguments_outside_view(payload->mounts, command.argv)) outcome->warnings.push_back(std::move(line));
    } else if (outcome.error_value().code == error_code::command_not_found && !command.argv.empty()) {
      std::string path_variable;
      for (const auto& entry : core::build_environment(plan->policy(), command.host_environment)) {
        if (entry.rfind("PATH=", 0) == 0) path_variable = entry.substr(5);
      }
      std::string why = explain_missing_command(payload->mounts, command.argv[0], path_variable,
                                                command.working_directory);
      if (!why.empty()) {
        error failure = std::move(outcome).error_value();
        failure.message += ": " + why;
        return failure;
      }
    }
    return outcome;
  }
};

}  // namespace

std::unique_ptr<sandbox_backend> make_linux_backend() { return std::make_unique<linux_backend>(); }

}  // namespace cordon
