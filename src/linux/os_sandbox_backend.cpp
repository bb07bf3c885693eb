// The os_sandbox backend (linux-os-sandbox): Landlock and seccomp without
// namespaces, for hosts and containers where user namespaces are closed
// (docs/linux-backend.md, "Without namespaces"). Its facts, build() and
// launch; the gates are core's (src/core/compile.cpp).
#include <algorithm>
#include <set>

#include "cordon/linux_backend.h"
#include "core/broker_endpoint.h"
#include "linux/host_facts.h"
#include "linux/os_sandbox_contract.h"
#include "linux/os_sandbox_facts.h"
#include "linux/os_sandbox_landlock.h"
#include "linux/os_sandbox_launch.h"
#include "linux/paths.h"
#include "linux/pool_watch.h"
#include "linux/post_run_watch.h"
#include "posix/listing_store.h"
#include "posix/vcs_scan.h"

namespace cordon {
namespace {

using namespace linux_impl;

// Repository metadata under the writable roots, kept read-only by the same
// splitting as any protected path; a missing hooks/ or config is an
// exception too, so the directory that would hold it accepts no new entry.
// Each root's scan is kept for the check after the run, and a writable home
// is watched (linux/post_run_watch.h), as in the namespace backend.
std::vector<std::string> repository_metadata(const sandbox_policy& normalized, const host_facts& facts,
                                             backend_build& out, post_run_watch& watch) {
  std::vector<std::string> paths;
  std::vector<std::string> writable_roots;
  watch.home = facts.home;
  for (const auto& root : normalized.filesystem.writable) {
    if (root == token_run_tmp) continue;
    resolved_path r = resolve_on_host(root);
    writable_roots.push_back(r.path);
    if (!r.exists || !r.is_directory) continue;
    // The listings stay in the scan's child (read from and written back to
    // the store), or come from this process's watch set (linux/pool_watch.h).
    std::string how;
    vcs::vcs_scan scan = scan_writable_root(r.path, facts.home, watch.listing_store, how);
    report_scan_bounds(r.path, scan, out);
    paths.insert(paths.end(), scan.protect.begin(), scan.protect.end());
    paths.insert(paths.end(), scan.missing.begin(), scan.missing.end());
    watch_repository_scan(r.path, std::move(scan), watch);
  }
  watch_writable_home(facts.home, writable_roots, watch);
  std::sort(paths.begin(), paths.end());
  paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
  return paths;
}

// Does a writable root of the policy hold `store` (or is it the store)?
bool store_is_writable(const sandbox_policy& normalized, const std::string& store) {
  const resolved_path in = resolve_on_host(store);
  for (const auto& root : normalized.filesystem.writable) {
    if (root == token_run_tmp) continue;
    const resolved_path r = resolve_on_host(root);
    if (r.path.size() == 1 || in.path.rfind(r.path, 0) == 0) {
      if (r.path.size() == 1 || in.path.size() == r.path.size() || in.path[r.path.size()] == '/') return true;
    }
  }
  return false;
}

// The protected paths inside writable roots (repository metadata, the
// listing store, filesystem.protected_read_only), for the supervisor's
// answers: Landlock's split refuses a write, rename or removal there with
// EACCES, which says nothing a model can act on; the supervisor answers
// EROFS and records a protected_write violation, as on linux-namespaces
// (protected_writes.h, mount_point_changes.h). A rename or removal of a
// directory between such a path and its writable root is one too (the
// split refuses it: it would carry the protection away).
struct protected_answers {
  std::vector<std::string> write_paths;   // the protected paths
  std::vector<std::string> change_paths;  // and the directories above them, below their root
  std::vector<std::string> names;         // the last components of change_paths
};

protected_answers protected_answers_for(const sandbox_policy& normalized, const std::vector<std::string>& metadata) {
  std::vector<std::string> roots;
  for (const auto& root : normalized.filesystem.writable) {
    if (root != token_run_tmp) roots.push_back(resolve_on_host(root).path);
  }
  std::vector<std::string> candidates = metadata;
  for (const auto& p : normalized.filesystem.protected_read_only) candidates.push_back(resolve_on_host(p).path);
  protected_answers out;
  std::set<std::string> change, names;
  for (const auto& path : candidates) {
    for (const auto& root : roots) {
      if (path == root || !path_is_within(path, root)) continue;
      out.write_paths.push_back(path);
      for (std::string p = path; p.size() > root.size(); p = p.substr(0, p.rfind('/'))) {
        change.insert(p);
        names.insert(p.substr(p.rfind('/') + 1));
      }
      break;
    }
  }
  std::sort(out.write_paths.begin(), out.write_paths.end());
  out.write_paths.erase(std::unique(out.write_paths.begin(), out.write_paths.end()), out.write_paths.end());
  out.change_paths.assign(change.begin(), change.end());
  out.names.assign(names.begin(), names.end());
  return out;
}

seccomp_options seccomp_for(const sandbox_policy& normalized, const host_facts& facts) {
  seccomp_options seccomp;
  const bool filtered = normalized.network.mode == network_mode::filtered;
  // Denied: every IP socket is refused. Filtered: TCP streams only, whose
  // connect(2) the supervisor performs to the broker's port on 127.0.0.1
  // only, and no listen(2) on them (os_sandbox_network.h).
  seccomp.deny_non_unix_sockets = normalized.network.mode != network_mode::unrestricted;
  seccomp.allow_inet_sockets = seccomp.notify_connect = seccomp.inet_stream_only = filtered;
  seccomp.broker_port = filtered ? broker_port : 0;  // the launch's port replaces it
  seccomp.notify_unix_connect = seccomp.deny_non_unix_sockets;
  seccomp.deny_setuid_bits = facts.uid == 0;
  seccomp.notify = true;  // blocked calls become violations in the report
  return seccomp;
}

// Filtered networking needs Landlock's TCP rules (ABI 4): without them the
// command's TCP socket could bind a port on every host address. TLS
// termination needs the run's CA bundle at a fixed path of the sandbox's
// view, which only a mount namespace gives.
void check_filtered(const sandbox_policy& normalized, const linux_host_facts& facts, backend_build& out) {
  if (normalized.network.mode != network_mode::filtered) return;
  // Without a network namespace the broker's port is on the host's
  // loopback: the command reaches nothing else, but any local process can
  // use the broker under this policy's rules (docs/linux-backend.md).
  out.warnings.push_back(
      "network_filter: the broker listens on a port of the host's 127.0.0.1, which any local process (another "
      "user's too) can connect to: it gets this policy's allowed destinations, and its connections are counted "
      "in this report as the command's; use linux-namespaces to keep the broker to the sandbox");
  if (facts.landlock_abi < 4) {
    out.blockers.push_back(blocker::for_control(
        control::network_filter, enforcement_level::enforced, enforcement_level::not_enforced,
        "linux-os-sandbox runs the broker on a host loopback port, which needs Landlock ABI 4 (TCP bind and "
        "connect rules); this kernel offers ABI " + std::to_string(facts.landlock_abi) + ": use linux-namespaces"));
  }
  for (const auto& rule : normalized.network.rules) {
    if (rule.tls != tls_mode::terminate) continue;
    out.blockers.push_back(blocker::for_control(
        control::network_filter, enforcement_level::enforced, enforcement_level::not_enforced,
        "TLS termination (a rule with tls \"terminate\") needs the run's CA bundle at a fixed path in the "
        "sandbox's own view (a mount namespace): linux-os-sandbox has none; use linux-namespaces"));
    break;
  }
}

class os_sandbox_backend final : public sandbox_backend {
 public:
  os_sandbox_backend() { install_pool_scan_hooks(); }
  std::string_view name() const noexcept override { return linux_os_sandbox_backend_name; }
  std::uint32_t plan_format_version() const noexcept override { return os_sandbox_plan_format_version; }
  std::string_view platform() const noexcept override { return "linux"; }
  isolation_level isolation() const noexcept override { return isolation_level::os_sandbox; }

  host_facts read_host_facts(const compile_options& options, bool deep) const override {
    return os_sandbox_facts(read_linux_host_facts(options.cgroup_parent, deep));
  }
  result<host_facts> load_host_facts(std::string_view record, const compile_options&) const override {
    auto loaded = load_linux_host_facts(record);
    if (!loaded) return loaded;
    return os_sandbox_facts(std::move(*loaded));
  }
  result<std::string> record_host_facts(const host_facts& facts) const override {
    return record_linux_host_facts(facts);
  }

  result<backend_build> build(const sandbox_policy& normalized, const host_facts& facts) const override {
    const linux_host_facts* linux_facts = linux_facts_of(facts);
    if (linux_facts == nullptr) return no_linux_facts();
    backend_build out;
    auto payload = std::make_shared<os_sandbox_payload>();
    std::vector<std::string> metadata;
    // The repository scan's listing store is never writable by a sandbox
    // (posix/listing_store.h): a run here could choose what a later run does
    // not read again. Inside a writable root it is made now and kept read-only.
    const std::string store = vcs::listing_store_dir(facts.home);
    if (!store.empty()) {
      const bool writable = store_is_writable(normalized, store);
      if (!writable || vcs::prepare_listing_store(store)) payload->listing_store = store;
      if (writable && !payload->listing_store.empty()) metadata.push_back(resolve_on_host(store).path);
    }
    if (normalized.filesystem.protect_vcs_metadata) {
      auto found = repository_metadata(normalized, facts, out, *payload);
      metadata.insert(metadata.end(), found.begin(), found.end());
    }
    os_sandbox_fs_rules fs = build_os_sandbox_fs_rules(normalized, metadata);
    out.blockers.insert(out.blockers.end(), fs.blockers.begin(), fs.blockers.end());
    if (!normalized.network.publish.empty()) {
      // A published port is relayed into a network namespace of the sandbox's own; here there is none.
      out.blockers.push_back(blocker::for_backend(
          "network.publish needs a network namespace of the sandbox's own (linux-namespaces): linux-os-sandbox "
          "runs on the host's network"));
    }
    out.warnings.insert(out.warnings.end(), fs.notes.begin(), fs.notes.end());
    payload->split = std::move(fs.split);
    payload->run_tmp = std::find(normalized.filesystem.writable.begin(), normalized.filesystem.writable.end(),
                                 std::string(token_run_tmp)) != normalized.filesystem.writable.end();
    seccomp_options seccomp = seccomp_for(normalized, facts);
    protected_answers answers = protected_answers_for(normalized, metadata);
    seccomp.notify_protected_writes = seccomp.notify_mount_point_changes = !answers.write_paths.empty();
    if (linux_facts->seccomp) {
      auto program = build_plan_seccomp(seccomp);
      if (!program) return std::move(program).error_value();
      payload->seccomp = std::move(*program);
      if (payload->seccomp.unix_connect_checked) {
        payload->seccomp.unix_sockets_allowed = normalized.filesystem.unix_sockets;
        payload->seccomp.abstract_unix_refused = true;  // the host's names: the supervisor would connect past Landlock's scope
      }
      if (payload->seccomp.protected_writes_checked) {
        payload->seccomp.protected_by_landlock = true;
        payload->seccomp.protected_write_paths = std::move(answers.write_paths);
        payload->seccomp.protected_change_paths = std::move(answers.change_paths);
        payload->seccomp.mount_point_names = std::move(answers.names);
      }
    }
    payload->landlock.abi = linux_facts->landlock_abi;
    payload->landlock.rules = std::move(fs.rules);
    // No TCP bind or connect by the command itself, filtered mode included:
    // the supervisor performs its connects (os_sandbox_network.h).
    payload->landlock.restrict_tcp = seccomp.deny_non_unix_sockets;
    payload->network_broker = normalized.network.mode == network_mode::filtered;
    check_filtered(normalized, *linux_facts, out);
    payload->landlock.scope_signals_and_abstract_sockets = true;
    payload->limits = choose_process_limits(normalized.process, facts, *linux_facts);
    if (!facts.stronger_backend_blocker.empty()) out.warnings.push_back(facts.stronger_backend_blocker);
    out.contract = os_sandbox_contract(normalized, *payload, facts, *linux_facts);
    out.payload = std::move(payload);
    return out;
  }

  result<run_outcome> launch(const sandbox_plan* plan, const launch_request& request) const override {
    if (auto checked = check_plan(plan, platform()); !checked) return std::move(checked).error_value();
    const auto* payload = dynamic_cast<const os_sandbox_payload*>(plan->payload());
    if (payload == nullptr) return make_error(error_code::plan_foreign, "plan carries no os_sandbox payload");
    return supervise_os_sandbox(*plan, *payload, request);
  }
};

}  // namespace

std::unique_ptr<sandbox_backend> make_linux_os_sandbox_backend() { return std::make_unique<os_sandbox_backend>(); }

namespace linux_impl {

std::string os_sandbox_payload::describe() const {
  std::string out;
  auto line = [&](const std::string& text) { out += text + "\n"; };
  line(landlock.describe());
  for (const auto& rule : landlock.rules) line("landlock rule " + std::string(landlock_access_name(rule.access)) + " " + rule.path);
  for (const auto& dir : split) line("landlock split " + dir);
  line(std::string("run_tmp ") + (run_tmp ? "yes" : "no"));
  if (network_broker) line("network broker on 127.0.0.1 (port chosen at launch)");
  line("seccomp rules " + std::to_string(seccomp.blocked.size()) + (seccomp.notify ? " notify" : "") +
       (seccomp.unix_connect_checked ? " unix_connect_checked" : "") +
       (seccomp.abstract_unix_refused ? " abstract_refused" : "") +
       (seccomp.listen_checked ? " listen_checked" : "") + " bpf " + std::to_string(seccomp.bpf.size()));
  for (const auto& path : seccomp.unix_sockets_allowed) line("unix socket allowed " + path);
  for (const auto& limit : limits.rlimits) line(std::string("rlimit ") + rlimit_name(limit.resource) + " " + std::to_string(limit.value));
  auto tree = [&](const char* what, const std::optional<std::uint64_t>& value, const std::string& parent) {
    if (value) line(std::string("cgroup ") + (limits.cgroups.v2 ? "v2 " : "v1 ") + what + " " + std::to_string(*value) + " under " + parent);
  };
  tree("memory", limits.tree_limits.memory_bytes, limits.cgroups.memory_parent);
  tree("pids", limits.tree_limits.max_processes, limits.cgroups.pids_parent);
  tree("cpu_seconds", limits.tree_limits.cpu_seconds, limits.cgroups.cpu_parent);
  return out;
}

}  // namespace linux_impl
}  // namespace cordon
