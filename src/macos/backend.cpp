// backend.cpp — macos_backend (backend.h): the driver's hooks for macOS.
#include "macos/backend.h"

#include <any>
#include <cstdlib>

#include "macos/macos_plan.h"

namespace cordon::macos_impl {

std::string_view macos_backend::name() const noexcept { return macos_backend_name; }

std::uint32_t macos_backend::plan_format_version() const noexcept { return macos_plan_format; }

host_facts macos_backend::read_host_facts(const compile_options& options, bool) const {
  // Off a Mac: the documented imaginary Mac (native = false), so that plans
  // can be explained here. The launcher of a Mac reads the real one.
  const char* home = std::getenv("HOME");
  std::string h = !options.home.empty() ? options.home
                  : home != nullptr && home[0] == '/' ? std::string(home)
                                                      : std::string("/var/empty");
  return to_host_facts(example_macos_host_facts(h, options.workspace));
}

result<backend_build> macos_backend::build(const sandbox_policy& normalized, const host_facts& facts) const {
  const auto* mac = std::any_cast<macos_host_facts>(&facts.backend_facts);
  if (mac == nullptr) {
    error e = make_error(error_code::backend_unavailable, "the host facts carry no macOS record");
    e.blockers.push_back(blocker::for_backend("no macOS host facts"));
    return e;
  }
  return build_macos_plan(normalized, *mac);
}

result<run_outcome> macos_backend::launch(const sandbox_plan* plan, const launch_request&) const {
  if (auto checked = check_plan(plan, platform()); !checked) return std::move(checked).error_value();
  // Launching goes through launch_macos_plan() (launcher.h) on a Mac.
  return make_error(error_code::unsupported_platform, "macOS plans launch only on a Mac (cordon built for macOS)");
}

const macos_backend& the_macos_backend() {
  static const macos_backend backend;
  return backend;
}

host_facts to_host_facts(const macos_host_facts& facts) {
  host_facts h;
  h.platform = "macos";
  h.home = facts.home;
  h.workspace = facts.workspace;
  h.backend_available = facts.sandbox_exec_present;
  h.backend_blocker = facts.sandbox_exec_present ? std::string() : facts.sandbox_exec + " is missing";
  h.lines.push_back(std::string(facts.native ? "macOS " : "assumed macOS ") + facts.os_version);
  h.lines.push_back("sandbox-exec: " + facts.sandbox_exec + (facts.sandbox_exec_present ? "" : " (missing)"));
  h.lines.push_back("user temp dir: " + facts.user_temp_dir);
  std::string aliases;
  for (const auto& a : facts.aliases) aliases += (aliases.empty() ? "" : ", ") + a.link + " -> " + a.target;
  h.lines.push_back("aliases: " + aliases);
  if (!facts.native) h.lines.push_back("not a Mac: macOS plans can be compiled and inspected here, not launched");
  h.backend_facts = facts;
  return h;
}

}  // namespace cordon::macos_impl
