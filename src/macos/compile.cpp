// compile.cpp — compile_macos_plan(): validate, resolve, write the profile,
// check it, state the levels (macos_plan.h).
#include <algorithm>
#include <set>

#include "cordon/validation.h"
#include "macos/contract.h"
#include "macos/macos_plan.h"
#include "macos/sbpl_check.h"

namespace cordon::macos_impl {
namespace {

// Replaces a leading root token; "{run_tmp}" is reported through `run_tmp`
// and yields no path (it is a launch-time parameter).
std::optional<std::string> resolve_root(const std::string& path, const macos_host_facts& facts, bool& run_tmp,
                                        const std::string& location, std::vector<policy_error>& errors) {
  const auto replace = [&](std::string_view token, const std::string& root, const char* what) -> std::optional<std::string> {
    if (root.empty()) {
      errors.push_back({location, std::string(token) + " is used but the " + what + " is unknown"});
      return std::nullopt;
    }
    return root + path.substr(token.size());
  };
  std::optional<std::string> out;
  if (path == token_run_tmp) {
    run_tmp = true;
    return std::nullopt;
  }
  if (path.rfind(token_workspace, 0) == 0) {
    out = replace(token_workspace, facts.workspace, "workspace");
  } else if (path.rfind(token_home, 0) == 0) {
    out = replace(token_home, facts.home, "home directory");
  } else {
    out = path;
  }
  if (!out) return out;
  return normalize_path_lexically(canonical_macos_path(normalize_path_lexically(*out), facts.aliases));
}

void resolve_list(std::vector<std::string>& list, const std::string& pointer, const macos_host_facts& facts,
                  bool& run_tmp, std::vector<policy_error>& errors) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < list.size(); ++i) {
    auto r = resolve_root(list[i], facts, run_tmp, pointer + "/" + std::to_string(i), errors);
    if (r && seen.insert(*r).second) out.push_back(*r);
  }
  list = std::move(out);
}

bool names_run_tmp(const std::string& value) { return value == "/tmp" || value.rfind("/tmp/", 0) == 0; }

// The launcher's environment: the policy's variables, and in filtered mode
// the proxy variables naming the broker (both cases; an explicit value of one
// case is given to both, as on Linux, docs/network.md).
environment_spec environment_for(const sandbox_policy& p, std::uint16_t broker_port, bool run_tmp) {
  environment_spec env;
  env.inherit = p.environment.inherit;
  env.allow = p.environment.allow;
  const auto lower = [](std::string s) {
    for (auto& c : s) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    return s;
  };
  const std::vector<std::string> proxies = {"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"};
  if (p.network.mode == network_mode::filtered) {
    const std::string http = "http://127.0.0.1:" + std::to_string(broker_port);
    const std::string socks = "socks5h://127.0.0.1:" + std::to_string(broker_port);
    for (const auto& name : proxies) {
      const std::string value = name == "ALL_PROXY" ? socks : name == "NO_PROXY" ? "" : http;
      env.set.emplace_back(name, value);
      env.set.emplace_back(lower(name), value);
    }
  }
  for (const auto& entry : p.environment.set) env.set.push_back(entry);
  if (p.network.mode == network_mode::filtered) {
    const auto explicit_value = [&](const std::string& name) -> const std::string* {
      for (const auto& [n, v] : p.environment.set) {
        if (n == name) return &v;
      }
      return nullptr;
    };
    for (const auto& upper : proxies) {
      const std::string* u = explicit_value(upper);
      const std::string* l = explicit_value(lower(upper));
      if (u && !l) env.set.emplace_back(lower(upper), *u);
      if (l && !u) env.set.emplace_back(upper, *l);
    }
  }
  if (run_tmp) {
    for (const auto& [name, value] : p.environment.set) {
      if (names_run_tmp(value) && std::find(env.rerooted.begin(), env.rerooted.end(), name) == env.rerooted.end()) {
        env.rerooted.push_back(name);
      }
    }
  }
  return env;
}

std::vector<std::string> default_lines(network_mode mode) {
  std::vector<std::string> out;
  for (const auto& d : platform_read_defaults()) {
    out.push_back("read " + d.path + (d.subtree ? "/**" : "") + " — " + d.why);
  }
  for (const auto& d : platform_write_defaults()) {
    out.push_back("write " + d.path + (d.subtree ? "/**" : "") + " — " + d.why);
  }
  std::string meta;
  for (const auto& m : platform_metadata_literals()) meta += (meta.empty() ? "" : " ") + m;
  out.push_back("stat " + meta + " and the parents of every root — path walks (metadata only)");
  std::string services;
  for (const auto& s : mach_services_for(mode)) services += (services.empty() ? "" : " ") + s;
  out.push_back("mach-lookup " + services);
  out.push_back("sysctl-read " + std::to_string(sysctl_read_names().size()) + " names and " +
                std::to_string(sysctl_read_prefixes().size()) + " prefixes (hw.*, kern.os*, ...)");
  return out;
}

std::vector<blocker> blockers_for(const sandbox_policy& p, const enforcement_contract& design,
                                  const macos_host_facts& facts) {
  std::vector<blocker> out;
  if (facts.native && !facts.sandbox_exec_present) {
    out.push_back(blocker::for_backend(facts.sandbox_exec + " is missing"));
  }
  if (p.isolation > isolation_level::os_sandbox) {
    out.push_back(blocker::for_isolation(p.isolation, isolation_level::os_sandbox, "Seatbelt is an OS sandbox"));
  }
  if (p.network.allow_local_binding) {
    out.push_back(blocker::for_control(control::network_deny, enforcement_level::enforced,
                                       enforcement_level::not_enforced,
                                       "allow_local_binding: macOS has no private network namespace, a listener "
                                       "would be on the host's loopback"));
  }
  for (const auto& [which, required] : required_enforcement(p)) {
    auto it = design.find(which);
    const enforcement_level available = it == design.end() ? enforcement_level::not_enforced : it->second.level;
    if (level_satisfies(available, required)) continue;
    const std::string why = it == design.end() ? "no mechanism"
                            : !it->second.detail.empty() ? it->second.detail
                                                         : it->second.mechanism;
    out.push_back(blocker::for_control(which, required, available, why));
  }
  return out;
}

compile_failure invalid(std::vector<policy_error> errors, std::string message) {
  compile_failure f;
  f.code = error_code::invalid_policy;
  f.message = std::move(message);
  f.errors = std::move(errors);
  return f;
}

// Filtered networking this backend cannot deliver: enforced is required,
// nothing is available, and `why` says which piece is missing.
compile_failure network_filter_unavailable(std::string message, std::string why) {
  compile_failure f;
  f.code = error_code::enforcement_unavailable;
  f.message = std::move(message);
  f.blockers.push_back(blocker::for_control(control::network_filter, enforcement_level::enforced,
                                            enforcement_level::not_enforced, std::move(why)));
  return f;
}

}  // namespace

compile_result<std::shared_ptr<const macos_plan>> compile_macos_plan(const sandbox_policy& policy,
                                                                      const macos_host_facts& facts) {
  validation_result validated = validate_sandbox_policy(policy);
  if (!validated.ok()) return invalid(std::move(validated.errors), "the policy is not valid");
  auto plan = std::make_shared<macos_plan>();
  plan->facts = facts;
  plan->policy = std::move(validated.policy);
  sandbox_policy& p = plan->policy;

  std::vector<policy_error> errors;
  bool run_tmp = false;
  resolve_list(p.filesystem.readable, "/filesystem/readable", facts, run_tmp, errors);
  resolve_list(p.filesystem.writable, "/filesystem/writable", facts, run_tmp, errors);
  resolve_list(p.filesystem.protected_read_only, "/filesystem/protected_read_only", facts, run_tmp, errors);
  resolve_list(p.filesystem.denied, "/filesystem/denied", facts, run_tmp, errors);
  if (!errors.empty()) return invalid(std::move(errors), "root tokens cannot be resolved for this Mac");

  const bool filtered = p.network.mode == network_mode::filtered;
  if (filtered && facts.broker_port == 0) {
    return network_filter_unavailable("filtered network: the broker must listen before the plan is compiled",
                                      "the broker's loopback port is not chosen");
  }

  // TLS termination (docs/tls.md) lives in the Linux supervisor only: a
  // rule that asks for it is refused here, not tunnelled unchecked.
  if (std::any_of(p.network.rules.begin(), p.network.rules.end(),
                  [](const network_rule& r) { return r.tls == tls_mode::terminate; })) {
    return network_filter_unavailable("tls \"terminate\" rules are not supported by the macOS backend",
                                      "the broker here cannot terminate TLS (docs/tls.md)");
  }

  profile_input in;
  in.policy_name = p.name;
  in.read = p.filesystem.read;
  in.platform_defaults = p.filesystem.include_platform_defaults;
  in.readable = p.filesystem.readable;
  in.writable = p.filesystem.writable;
  in.protected_paths = p.filesystem.protected_read_only;
  in.denied = p.filesystem.denied;
  in.run_tmp = run_tmp;
  in.run_tmp_example = facts.user_temp_dir + "/cordon-run-XXXXXX";
  in.protect_vcs_metadata = p.filesystem.protect_vcs_metadata;
  in.network = p.network.mode;
  in.broker_port = filtered ? facts.broker_port : 0;
  in.aliases = facts.aliases;
  auto generated = generate_seatbelt_profile(in);
  if (!generated) return invalid({{"/filesystem", generated.error_value().message}}, generated.error_value().message);
  plan->profile = std::move(generated->text);
  plan->parameters = std::move(generated->parameters);

  // Fail closed on our own output: a profile the structural checker rejects
  // is never handed to a launcher.
  std::map<std::string, std::string> values;
  for (const auto& param : plan->parameters) values[param.key] = param.value;
  if (auto problems = check_sbpl_profile(plan->profile, values); !problems.empty()) {
    compile_failure f;
    f.code = error_code::enforcement_unavailable;
    f.message = "the generated profile failed the structural check at line " + std::to_string(problems[0].line) +
                ": " + problems[0].message;
    return f;
  }

  plan->on_a_mac = macos_design_contract(p, in.broker_port);
  plan->contract = reported_contract(plan->on_a_mac, facts);
  plan->blockers = blockers_for(p, plan->on_a_mac, facts);
  plan->warnings = relaxation_warnings(p);
  plan->environment = environment_for(p, in.broker_port, run_tmp);
  for (const auto& name : plan->environment.rerooted) {
    plan->warnings.push_back("environment: " + name +
                             " names /tmp, the private /tmp of Linux; on macOS it is set to the per-run directory");
  }
  if (!facts.native) plan->warnings.push_back("compiled for macOS on another host: levels are unverified, the plan cannot launch here");
  plan->platform_defaults = p.filesystem.include_platform_defaults ? default_lines(p.network.mode) : std::vector<std::string>{};
  plan->rlimit_cpu_seconds = p.process.cpu_seconds;
  plan->timeout_ms = p.process.timeout_ms;
  plan->process_group = true;
  return std::shared_ptr<const macos_plan>(std::move(plan));
}

host_capabilities probe_macos(const macos_host_facts& facts) {
  // The most a Mac can give: every limit it can apply set, and the broker's levels.
  sandbox_policy strict;
  strict.network.mode = network_mode::filtered;
  strict.process = {.tree_cleanup = true, .max_processes = {}, .memory_bytes = {}, .cpu_seconds = 1, .timeout_ms = 1};
  host_capabilities caps;
  caps.platform = "macos";
  caps.backend = macos_backend_name;
  caps.available = facts.native && facts.sandbox_exec_present;
  caps.isolation = isolation_level::os_sandbox;
  auto design = macos_design_contract(strict, facts.broker_port == 0 ? 3128 : facts.broker_port);
  // Limits a Mac refuses are stated as such, whatever the strict policy sets.
  design[control::memory] = {enforcement_level::not_enforced, "", "XNU does not enforce RLIMIT_AS as a virtual-memory ceiling and nothing bounds a tree"};
  design[control::process_count] = {enforcement_level::not_enforced, "", "RLIMIT_NPROC counts every process of the user, not the tree"};
  caps.best = reported_contract(design, facts);
  if (!facts.native) {
    caps.blockers.push_back(
        blocker::for_backend("not a Mac: macOS plans can be compiled and inspected here, not launched"));
  } else if (!facts.sandbox_exec_present) {
    caps.blockers.push_back(blocker::for_backend(facts.sandbox_exec + " is missing"));
  }
  for (const auto& [which, s] : design) {
    if (s.level == enforcement_level::enforced || s.level == enforcement_level::not_applicable) continue;
    caps.blockers.push_back(blocker::for_control(which, enforcement_level::enforced, s.level,
                                                 s.detail.empty() ? s.mechanism : s.detail));
  }
  caps.facts.push_back(std::string(facts.native ? "macOS " : "assumed macOS ") + facts.os_version);
  caps.facts.push_back("sandbox-exec: " + facts.sandbox_exec + (facts.sandbox_exec_present ? "" : " (missing)"));
  caps.facts.push_back("user temp dir: " + facts.user_temp_dir);
  std::string aliases;
  for (const auto& a : facts.aliases) aliases += (aliases.empty() ? "" : ", ") + a.link + " -> " + a.target;
  caps.facts.push_back("aliases: " + aliases);
  return caps;
}

std::vector<std::string> sandbox_exec_argv(const macos_plan& plan, const std::string& run_tmp,
                                           const std::vector<std::string>& command) {
  std::vector<std::string> argv = {plan.facts.sandbox_exec, "-p", plan.profile};
  for (const auto& param : plan.parameters) {
    argv.push_back("-D" + param.key + "=" + (param.at_launch ? run_tmp : param.value));
  }
  argv.push_back("--");
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

}  // namespace cordon::macos_impl
