// The Linux payload as stable text: what golden plan tests compare
// (tests/unit/linux/golden_plan_test.cpp) and the run API's helper checks its
// re-derived plan against (plan_fingerprint).
#include <string>

#include "core/sha256.h"
#include "linux/linux_plan.h"

namespace cordon::linux_impl {
std::string linux_plan_payload::describe() const {
  std::string out;
  auto line = [&](const std::string& text) { out += text + "\n"; };
  for (const auto& mount : describe_mounts(mounts)) line("mount " + mount);
  // The objects the binds must be at launch (linux/mount_by_fd.h), so that a
  // plan compiled again after a swap has another fingerprint. One digest: the
  // numbers differ from host to host (golden plans leave this line out).
  std::string identities;
  for (const auto& op : mounts.ops) {
    if (!op.source_identity.known) continue;
    identities += op.path + " " + std::to_string(op.source_identity.dev) + ":" + std::to_string(op.source_identity.ino) + "\n";
  }
  line(std::string(mount_identities_prefix) + detail::sha256_hex(identities));
  line(landlock.describe());
  for (const auto& rule : landlock.rules) line("landlock rule " + std::string(landlock_access_name(rule.access)) + " " + rule.path);
  line(std::string("landlock tcp ") + (landlock.restrict_tcp ? "restricted" : "open") +
       (landlock.tcp_connect_ports.empty() ? "" : " connect " + std::to_string(landlock.tcp_connect_ports.front())));
  line("seccomp rules " + std::to_string(seccomp.blocked.size()) + (seccomp.notify ? " notify" : "") +
       (seccomp.connect_notified ? " connect_notified" : "") +
       (seccomp.allow_loopback_connect ? " loopback_connect" : "") + " bpf " + std::to_string(seccomp.bpf.size()));
  for (const auto& rule : seccomp.blocked) line("seccomp " + rule);
  if (seccomp.unix_connect_checked) {
    line(std::string("unix sockets checked") + (seccomp.unix_private_tmp ? " private_tmp" : ""));
    for (const auto& path : seccomp.unix_sockets_allowed) line("unix socket allowed " + path);
  }
  line(std::string("network namespace ") + (new_network_namespace ? "new" : "host") +
       (loopback_up ? " loopback_up" : "") + (network_broker ? " broker" : ""));
  for (const auto& limit : rlimits) line(std::string("rlimit ") + rlimit_name(limit.resource) + " " + std::to_string(limit.value));
  if (tmpfs_options != "mode=1777") line("tmpfs " + tmpfs_options + " (/dev/shm, private /tmp)");
  auto tree = [&](const char* name, const std::optional<std::uint64_t>& value, const std::string& parent) {
    if (value) line(std::string("cgroup ") + (cgroups.v2 ? "v2 " : "v1 ") + name + " " + std::to_string(*value) + " under " + parent);
  };
  tree("memory", tree_limits.memory_bytes, cgroups.memory_parent);
  tree("pids", tree_limits.max_processes, cgroups.pids_parent);
  tree("cpu_seconds", tree_limits.cpu_seconds, cgroups.cpu_parent);
  for (const auto& path : watch_absent) line("watch absent " + path);
  for (const auto& scan : repository_scans) {
    for (const auto& repo : scan.before.repositories) line("repository " + repo);
  }
  return out;
}

}  // namespace cordon::linux_impl
