// The compile driver: the gates, in order, for every backend
// (docs/architecture.md, "The pipeline"). A backend's build() only chooses
// mechanisms and states their levels; everything a policy is held against
// happens here.
#include <algorithm>
#include <string>

#include "cordon/backend.h"
#include "cordon/validation.h"
#include "core/tokens.h"

namespace cordon {
namespace {

error invalid(std::vector<policy_error> errors) {
  error f = make_error(error_code::invalid_policy,
                       errors.size() == 1 ? "policy is invalid: 1 error"
                                          : "policy is invalid: " + std::to_string(errors.size()) + " errors");
  f.errors = std::move(errors);
  return f;
}

error refused(error_code code, std::string message, std::vector<blocker> blockers) {
  error f = make_error(code, std::move(message));
  f.blockers = std::move(blockers);
  return f;
}

// Gate 1, second half: the root tokens, then the rule that keeps a
// workspace-writable policy from making "/", a system directory or the home
// directory writable as a whole.
// Roots are in the policy's spelling (a Windows "C:\\w" becomes "/C:/w"); the
// workspace's symlinks are resolved only when the plan is for this host's
// platform (another platform's paths mean nothing in this filesystem), and
// never on Windows: std::filesystem reads "/C:/w" as a path on the current
// drive ("C:\\C:\\w"), and the Windows launcher refuses a reparse point on a
// root or any ancestor itself (docs/windows-backend.md, "Path boundary").
result<sandbox_policy> resolve_roots(std::string_view platform, sandbox_policy normalized,
                                     const compile_options& options, const host_facts& facts,
                                     core::token_roots& roots) {
  if (!options.workspace.empty()) {
    roots.workspace = core::policy_spelling(options.workspace);
    if (platform == running_platform() && platform != "windows") roots.workspace = core::resolve_symlinks(roots.workspace);
    roots.workspace = normalize_path_lexically(roots.workspace);
  }
  roots.home = core::policy_spelling(options.home.empty() ? facts.home : options.home);
  if (core::policy_uses_workspace(normalized) && !roots.workspace.empty()) {
    if (std::string why = core::workspace_refusal(platform, roots.workspace, roots.home); !why.empty()) {
      std::string reason = "the workspace " + roots.workspace + " is " + why +
                           ", which the policy would make writable as a whole";
      return invalid({{"", reason}});
    }
  }
  if (auto errors = core::resolve_policy_tokens(normalized, roots); !errors.empty()) return invalid(std::move(errors));
  return normalized;
}

result<sandbox_policy> gate_one(std::string_view platform, const sandbox_policy& policy,
                                const compile_options& options, const host_facts& facts, core::token_roots& roots) {
  validation_result validated = validate_sandbox_policy(policy);
  if (!validated.ok()) return invalid(std::move(validated.errors));
  return resolve_roots(platform, std::move(validated.policy), options, facts, roots);
}

// The plan's warnings: the policy's own relaxations, what build() found, then
// one line for every control below enforced.
std::vector<std::string> plan_warnings(std::string_view platform, const sandbox_policy& normalized,
                                       const backend_build& built) {
  std::vector<std::string> warnings = relaxation_warnings(normalized, platform);
  warnings.insert(warnings.end(), built.warnings.begin(), built.warnings.end());
  for (const auto& [which, status] : built.contract) {
    if (status.level == enforcement_level::partial || status.level == enforcement_level::not_enforced ||
        status.level == enforcement_level::planned || status.level == enforcement_level::unverified) {
      warnings.push_back(std::string(to_string(which)) + " is " + std::string(to_string(status.level)) +
                         (status.detail.empty() ? "" : ": " + status.detail));
    }
  }
  return warnings;
}

}  // namespace

std::vector<blocker> unmet_policy_requirements(const sandbox_policy& normalized, std::string_view platform,
                                               const enforcement_contract& contract) {
  std::vector<blocker> blockers;
  for (const auto& [which, required] : required_enforcement(normalized, platform)) {
    auto it = contract.find(which);
    const control_status have = it != contract.end() ? it->second : control_status{};
    if (!level_satisfies(have.level, required)) {
      blockers.push_back(blocker::for_control(which, required, have.level,
                                              have.detail.empty() ? "no mechanism on this host" : have.detail));
    }
  }
  return blockers;
}

bool platform_proven(std::string_view platform) noexcept {
  // Add a platform here only in the change that records its passing proof
  // job (docs/architecture.md, "Proof runs").
  return platform == "linux";
}

enforcement_contract apply_proof_rule(std::string_view platform, enforcement_contract contract) {
  if (platform_proven(platform)) return contract;
  for (auto& [which, s] : contract) {
    if (s.level != enforcement_level::enforced && s.level != enforcement_level::partial) continue;
    s.detail = "no proof run on " + std::string(platform) + " has passed yet (would be " +
               std::string(to_string(s.level)) + (s.detail.empty() ? ")" : "; " + s.detail + ")");
    s.level = enforcement_level::unverified;
  }
  return contract;
}

std::string_view running_platform() noexcept {
#if defined(__APPLE__)
  return "macos";
#elif defined(_WIN32)
  return "windows";
#else
  return "linux";
#endif
}

compile_result<std::shared_ptr<const sandbox_plan>> sandbox_backend::compile(const sandbox_policy& policy,
                                                                             const compile_options& options) const {
  return compile(policy, options, read_host_facts(options));
}

compile_result<std::shared_ptr<const sandbox_plan>> sandbox_backend::compile(const sandbox_policy& policy,
                                                                             const compile_options& options,
                                                                             const host_facts& facts) const {
  // Gate 1: validate and normalize, then resolve the root tokens.
  core::token_roots roots;
  auto resolved = gate_one(platform(), policy, options, facts, roots);
  if (!resolved) return std::move(resolved).error_value();
  sandbox_policy normalized = std::move(*resolved);

  // Gate 2: the backend runs on this host.
  if (facts.platform != platform()) {
    return refused(error_code::unsupported_platform,
                   "the " + std::string(name()) + " backend is for " + std::string(platform()) + ", this host is " +
                       (facts.platform.empty() ? std::string("unknown") : facts.platform),
                   {blocker::for_backend("host platform " + facts.platform)});
  }
  if (!facts.backend_available) {
    return refused(error_code::backend_unavailable,
                   "the " + std::string(name()) + " backend cannot run on this host",
                   {blocker::for_backend(facts.backend_blocker)});
  }
  // Gate 3: isolation.
  if (static_cast<int>(isolation()) < static_cast<int>(normalized.isolation)) {
    return refused(error_code::isolation_insufficient,
                   "the policy requires isolation '" + std::string(to_string(normalized.isolation)) +
                       "' but this backend provides '" + std::string(to_string(isolation())) + "'",
                   {blocker::for_isolation(normalized.isolation, isolation(),
                                           std::string(name()) + " does not provide it" +
                                               (facts.stronger_backend_blocker.empty()
                                                    ? ""
                                                    : "; " + facts.stronger_backend_blocker))});
  }
  // Gate 4: the backend's mechanisms, then every requirement against their levels.
  auto built = build(normalized, facts);
  if (!built) return std::move(built).error_value();
  built->contract = apply_proof_rule(platform(), std::move(built->contract));
  std::vector<blocker> blockers = built->blockers;
  // One blocker per control: a control build() already refused with its own
  // (typed) reason is not refused a second time for its level.
  for (auto& b : unmet_policy_requirements(normalized, platform(), built->contract)) {
    const bool named = std::any_of(blockers.begin(), blockers.end(), [&](const blocker& own) {
      return own.subject == blocker_subject::control && own.control == b.control;
    });
    if (!named) blockers.push_back(std::move(b));
  }
  if (!blockers.empty()) {
    std::string message = std::to_string(blockers.size()) +
                          (blockers.size() == 1 ? " required control" : " required controls") +
                          " cannot be enforced on this host";
    return refused(error_code::enforcement_unavailable, std::move(message), std::move(blockers));
  }
  std::vector<std::string> warnings = plan_warnings(platform(), normalized, *built);
  return make_plan(std::move(normalized), roots.workspace, options.cgroup_parent, std::move(built->contract), std::move(warnings), std::move(built->payload), facts.recorded);
}

result<sandbox_policy> sandbox_backend::resolve(const sandbox_policy& policy, const compile_options& options,
                                                const host_facts& facts) const {
  core::token_roots roots;
  return gate_one(platform(), policy, options, facts, roots);
}

host_capabilities sandbox_backend::probe() const { return probe(read_host_facts({}, true)); }

host_capabilities sandbox_backend::probe(const host_facts& facts) const {
  host_capabilities caps;
  caps.platform = std::string(platform());
  caps.backend = std::string(name());
  caps.available = facts.platform == platform() && facts.backend_available;
  caps.isolation = caps.available ? isolation() : isolation_level::none;
  caps.facts = facts.lines;
  if (!caps.available) caps.blockers.push_back(blocker::for_backend(facts.backend_blocker));
  // The strictest policy: every control has something to act on.
  sandbox_policy strict;
  strict.filesystem.read = read_mode::restricted;
  strict.network.mode = network_mode::denied;
  strict.process.max_processes = 1;
  strict.process.memory_bytes = 1;
  strict.process.cpu_seconds = 1;
  strict.process.timeout_ms = 1;
  if (auto built = build(strict, facts)) caps.best = apply_proof_rule(platform(), std::move(built->contract));
  // Filtering is judged on a policy that asks for it.
  sandbox_policy filtered = strict;
  filtered.network.mode = network_mode::filtered;
  if (auto built = build(filtered, facts)) {
    caps.best[control::network_filter] =
        apply_proof_rule(platform(), std::move(built->contract))[control::network_filter];
  }
  for (const auto& [which, status] : caps.best) {
    if (status.level == enforcement_level::enforced || status.level == enforcement_level::not_applicable) continue;
    caps.blockers.push_back(blocker::for_control(which, enforcement_level::enforced, status.level, status.detail));
  }
  return caps;
}

}  // namespace cordon
