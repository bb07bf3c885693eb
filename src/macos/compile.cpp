// compile.cpp — the macOS backend's build step (build_macos_plan): map the
// resolved roots to the spelling Seatbelt sees, write the profile, check it,
// state the levels; and the entry points that run the one driver
// (macos_plan.h).
#include <algorithm>
#include <set>

#include "cordon/validation.h"
#include "macos/backend.h"
#include "macos/contract.h"
#include "macos/macos_plan.h"
#include "macos/sbpl_check.h"

namespace cordon::macos_impl {
namespace {

// Core resolved "{workspace}" and "{home}"; here each path takes the
// spelling Seatbelt sees (the /private targets), duplicates go, and
// "{run_tmp}" (a launch-time parameter) is reported through `run_tmp`.
void canonical_list(std::vector<std::string>& list, const macos_host_facts& facts, bool& run_tmp) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& path : list) {
    if (path == token_run_tmp) {
      run_tmp = true;
      continue;
    }
    std::string c = normalize_path_lexically(canonical_macos_path(normalize_path_lexically(path), facts.aliases));
    if (seen.insert(c).second) out.push_back(std::move(c));
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

// Homebrew's program directories present on the Mac go first on a PATH the
// policy sets, when the platform defaults (which make them readable) are on.
// Returns the warning that says so, or empty.
std::string add_homebrew_path(environment_spec& env, const sandbox_policy& p, const macos_host_facts& facts) {
  if (!p.filesystem.include_platform_defaults || facts.homebrew_bin.empty()) return {};
  for (auto& [name, value] : env.set) {
    if (name != "PATH") continue;
    std::string added;
    for (const auto& dir : facts.homebrew_bin) {
      if ((":" + value + ":").find(":" + dir + ":") != std::string::npos) continue;
      added += (added.empty() ? "" : ":") + dir;
    }
    if (added.empty()) return {};
    value = added + (value.empty() ? "" : ":" + value);
    return "environment: PATH starts with Homebrew's " + added + " (present on this Mac, readable as a platform default)";
  }
  return {};
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

// What the mechanisms cannot hold whatever the policy requires.
std::vector<blocker> mechanism_blockers(const sandbox_policy& p) {
  std::vector<blocker> out;
  if (p.network.allow_local_binding) {
    out.push_back(blocker::for_control(control::network_deny, enforcement_level::enforced,
                                       enforcement_level::not_enforced,
                                       "allow_local_binding: macOS has no private network namespace, a listener "
                                       "would be on the host's loopback"));
  }
  if (!p.network.publish.empty()) {
    out.push_back(blocker::for_backend("network.publish: macOS has no private network namespace to relay into"));
  }
  return out;
}

blocker network_filter_blocker(std::string why) {
  return blocker::for_control(control::network_filter, enforcement_level::enforced, enforcement_level::not_enforced,
                              std::move(why));
}

}  // namespace

result<backend_build> build_macos_plan(const sandbox_policy& normalized, const macos_host_facts& facts) {
  auto plan = std::make_shared<macos_plan>();
  plan->facts = facts;
  plan->policy = normalized;
  sandbox_policy& p = plan->policy;
  bool run_tmp = false;
  canonical_list(p.filesystem.readable, facts, run_tmp);
  canonical_list(p.filesystem.writable, facts, run_tmp);
  canonical_list(p.filesystem.protected_read_only, facts, run_tmp);
  canonical_list(p.filesystem.denied, facts, run_tmp);
  // A listed socket under "{run_tmp}" is reachable through that writable
  // root; any other one must be an absolute path (the checker holds to it).
  bool socket_in_run_tmp = false;
  std::erase_if(p.filesystem.unix_sockets, [&](const std::string& s) {
    return run_tmp && s.rfind(std::string(token_run_tmp) + "/", 0) == 0;
  });
  canonical_list(p.filesystem.unix_sockets, facts, socket_in_run_tmp);

  backend_build built;
  built.blockers = mechanism_blockers(p);
  const bool filtered = p.network.mode == network_mode::filtered;
  if (filtered && facts.broker_port == 0) {
    built.blockers.push_back(network_filter_blocker("the broker's loopback port is not chosen: it must listen "
                                                    "before the plan is compiled"));
  }
  // TLS termination (docs/tls.md) lives in the Linux supervisor only: a
  // rule that asks for it is refused here, not tunnelled unchecked.
  if (std::any_of(p.network.rules.begin(), p.network.rules.end(),
                  [](const network_rule& r) { return r.tls == tls_mode::terminate; })) {
    built.blockers.push_back(network_filter_blocker("tls \"terminate\" rules: the broker here cannot terminate "
                                                    "TLS (docs/tls.md)"));
  }
  if (!built.blockers.empty()) {
    // Refused at gate 4 whatever the levels: no profile is written.
    built.contract = macos_design_contract(p, facts.broker_port);
    return built;
  }

  profile_input in;
  in.policy_name = p.name;
  in.read = p.filesystem.read;
  in.platform_defaults = p.filesystem.include_platform_defaults;
  in.readable = p.filesystem.readable;
  in.writable = p.filesystem.writable;
  in.protected_paths = p.filesystem.protected_read_only;
  in.denied = p.filesystem.denied;
  in.unix_sockets = p.filesystem.unix_sockets;
  in.run_tmp = run_tmp;
  in.run_tmp_example = facts.user_temp_dir + "/cordon-run-XXXXXX";
  in.protect_vcs_metadata = p.filesystem.protect_vcs_metadata;
  in.network = p.network.mode;
  in.broker_port = filtered ? facts.broker_port : 0;
  in.aliases = facts.aliases;
  auto generated = generate_seatbelt_profile(in);
  if (!generated) {
    error e = make_error(error_code::invalid_policy, generated.error_value().message);
    e.errors.push_back({"/filesystem", generated.error_value().message});
    return e;
  }
  plan->profile = std::move(generated->text);
  plan->parameters = std::move(generated->parameters);

  // Fail closed on our own output: a profile the structural checker rejects
  // is never handed to a launcher.
  std::map<std::string, std::string> values;
  for (const auto& param : plan->parameters) values[param.key] = param.value;
  if (auto problems = check_sbpl_profile(plan->profile, values); !problems.empty()) {
    return make_error(error_code::enforcement_unavailable,
                      "the generated profile failed the structural check at line " +
                          std::to_string(problems[0].line) + ": " + problems[0].message);
  }

  plan->on_a_mac = macos_design_contract(p, in.broker_port);
  plan->environment = environment_for(p, in.broker_port, run_tmp);
  if (std::string brew = add_homebrew_path(plan->environment, p, facts); !brew.empty()) built.warnings.push_back(brew);
  for (const auto& name : plan->environment.rerooted) {
    built.warnings.push_back("environment: " + name +
                             " names /tmp, the private /tmp of Linux; on macOS it is set to the per-run directory");
  }
  if (!facts.native) built.warnings.push_back("compiled for macOS on another host: the plan cannot launch here");
  plan->platform_defaults = p.filesystem.include_platform_defaults ? default_lines(p.network.mode) : std::vector<std::string>{};
  plan->rlimit_cpu_seconds = p.process.cpu_seconds;
  plan->timeout_ms = p.process.timeout_ms;
  plan->process_group = true;
  built.contract = plan->on_a_mac;
  built.payload = std::move(plan);
  return built;
}

compile_result<std::shared_ptr<const macos_plan>> compile_macos_plan(const sandbox_policy& policy,
                                                                      const macos_host_facts& facts) {
  compile_options options;
  options.workspace = facts.workspace;
  options.home = facts.home;
  auto compiled = the_macos_backend().compile(policy, options, to_host_facts(facts));
  if (!compiled) return compiled.failure();
  const auto& driven = *compiled.plan();
  auto plan = std::make_shared<macos_plan>(*static_cast<const macos_plan*>(driven.payload()));
  plan->contract = driven.contract();
  plan->warnings = driven.warnings();
  return std::shared_ptr<const macos_plan>(std::move(plan));
}

host_capabilities probe_macos(const macos_host_facts& facts) {
  host_capabilities caps = the_macos_backend().probe(to_host_facts(facts));
  if (!facts.native) {
    // The imaginary Mac of explain: its plans compile, nothing runs here.
    caps.available = false;
    caps.blockers.insert(caps.blockers.begin(),
                         blocker::for_backend("not a Mac: macOS plans can be compiled and inspected here, not launched"));
  }
  return caps;
}

std::string macos_plan::describe() const {
  std::string text = "profile\n" + profile;
  for (const auto& param : parameters) {
    text += "param " + param.key + "=" + (param.at_launch ? "(at launch)" : param.value) + "\n";
  }
  for (const auto& [name, value] : environment.set) text += "setenv " + name + "=" + value + "\n";
  text += "rlimit_cpu " + (rlimit_cpu_seconds ? std::to_string(*rlimit_cpu_seconds) : std::string("-")) + "\n";
  text += "timeout_ms " + (timeout_ms ? std::to_string(*timeout_ms) : std::string("-")) + "\n";
  return text;
}

std::vector<std::string> sandbox_exec_argv(const macos_plan& plan, const std::string& run_tmp,
                                           const std::vector<std::string>& command, const std::string& terminal) {
  std::vector<std::string> argv = {plan.facts.sandbox_exec, "-p", plan.profile};
  for (const auto& param : plan.parameters) {
    const std::string& launch_value = param.key == terminal_parameter ? terminal : run_tmp;
    argv.push_back("-D" + param.key + "=" + (param.at_launch ? launch_value : param.value));
  }
  argv.push_back("--");
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

}  // namespace cordon::macos_impl
