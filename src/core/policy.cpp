// src/core/policy.cpp — isolation spellings and the enforcement a policy's
// content implies (docs/policy.md, "Enforcement requirements").
#include "cordon/policy.h"

#include <utility>

namespace cordon {
namespace {

constexpr std::pair<isolation_level, std::string_view> isolation_names[] = {
    {isolation_level::none, "none"},
    {isolation_level::process, "process"},
    {isolation_level::os_sandbox, "os_sandbox"},
    {isolation_level::container, "container"},
    {isolation_level::vm, "vm"},
};

// What the policy's own content asks for, before explicit entries. Every
// implied control is required at `enforced`: anything less must be stated.
std::map<control, enforcement_level> implied_enforcement(const sandbox_policy& p) {
  std::map<control, enforcement_level> req;
  const auto need = [&req](control c) { req[c] = enforcement_level::enforced; };

  need(control::filesystem_write);  // writes are always confined to `writable`
  if (p.filesystem.read == read_mode::restricted) need(control::filesystem_read);
  if (!p.filesystem.denied.empty() || !p.filesystem.protected_read_only.empty() ||
      p.filesystem.protect_vcs_metadata) {
    need(control::filesystem_deny);
  }
  if (p.network.mode == network_mode::denied || p.network.mode == network_mode::filtered) {
    need(control::network_deny);
  }
  if (p.network.mode == network_mode::filtered) need(control::network_filter);
  // A policy that lists the sockets it may reach means every other to be unreachable.
  if (!p.filesystem.unix_sockets.empty()) need(control::unix_sockets);
  need(control::environment);
  if (p.process.tree_cleanup) need(control::process_tree_cleanup);
  if (p.process.max_processes) need(control::process_count);
  if (p.process.memory_bytes) need(control::memory);
  if (p.process.cpu_seconds) need(control::cpu);
  if (p.process.timeout_ms) need(control::timeout);
  need(control::privilege);
  need(control::descriptor_hygiene);
  need(control::terminal);
  return req;
}

// How much a requirement asks for. Unlike level_satisfies(), which treats
// `not_applicable` as meeting everything (right for an available level), a
// requirement of `not_applicable` asks for nothing.
int requirement_strength(enforcement_level level) noexcept {
  switch (level) {
    case enforcement_level::enforced: return 2;
    case enforcement_level::partial: return 1;
    default: return 0;
  }
}

}  // namespace

std::string_view to_string(isolation_level level) noexcept {
  for (const auto& [value, name] : isolation_names) {
    if (value == level) return name;
  }
  return "unknown";
}

std::optional<isolation_level> isolation_level_from_string(std::string_view name) noexcept {
  for (const auto& [value, spelling] : isolation_names) {
    if (spelling == name) return value;
  }
  return std::nullopt;
}

std::map<control, enforcement_level> required_enforcement(const sandbox_policy& policy) {
  auto req = implied_enforcement(policy);
  // Explicit entries replace the implied value, in both directions.
  for (const auto& [c, level] : policy.enforcement) req[c] = level;
  return req;
}

std::map<control, enforcement_level> required_enforcement(const sandbox_policy& policy, std::string_view platform) {
  auto req = implied_enforcement(policy);
  // The platform's entries first; `enforcement` holds everywhere and wins.
  if (auto it = policy.platform_enforcement.find(std::string(platform)); it != policy.platform_enforcement.end()) {
    for (const auto& [c, level] : it->second) req[c] = level;
  }
  for (const auto& [c, level] : policy.enforcement) req[c] = level;
  return req;
}

std::vector<std::string> relaxation_warnings(const sandbox_policy& policy, std::string_view platform) {
  const auto implied = implied_enforcement(policy);
  const auto required = platform.empty() ? required_enforcement(policy) : required_enforcement(policy, platform);
  std::vector<std::string> out;
  for (const auto& [c, level] : required) {
    const auto it = implied.find(c);
    if (it == implied.end()) continue;
    if (requirement_strength(level) >= requirement_strength(it->second)) continue;
    std::string line(to_string(c));
    line += ": policy accepts ";
    line += to_string(level);
    if (!policy.enforcement.contains(c)) {
      line += " on ";
      line += platform;
    }
    line += " (its content implies ";
    line += to_string(it->second);
    line += ')';
    out.push_back(std::move(line));
  }
  // `cordon run --cache NAME` (docs/workloads.md): a writable root that outlives the run.
  for (const auto& [key, dir] : policy.metadata) {
    if (key.rfind("persistent_cache.", 0) != 0) continue;
    out.push_back("persistent cache " + key.substr(17) + " at " + dir +
                  " is writable: what the command leaves there, later runs and the host's own tool read and trust "
                  "(a planted package or object file runs outside the sandbox)");
  }
  return out;
}

}  // namespace cordon
