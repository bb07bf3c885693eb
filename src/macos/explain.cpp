// explain.cpp — a macOS plan as a person reads it (macos_plan::explain and
// profile_text, cordon/plan.h): the launcher, the profile's shape, the
// platform defaults and the -D parameters, for `cordon policy explain`.
#include <algorithm>

#include "macos/macos_plan.h"

namespace cordon::macos_impl {

std::vector<plan_section> macos_plan::explain() const {
  std::vector<plan_section> sections;
  std::string launcher = facts.sandbox_exec + " -p PROFILE -DKEY=VALUE... -- COMMAND; new session (setsid), "
                         "descriptors above 2 closed, environment from the policy";
  if (rlimit_cpu_seconds) launcher += ", RLIMIT_CPU " + std::to_string(*rlimit_cpu_seconds) + " s";
  if (timeout_ms) launcher += ", timeout " + std::to_string(*timeout_ms) + " ms";
  sections.push_back(
      {"launcher",
       {"macOS " + facts.os_version + (facts.native ? "" : " (assumed facts: this host is not a Mac)"), launcher,
        "profile: deny-default SBPL, " + std::to_string(std::count(profile.begin(), profile.end(), '\n')) +
            " lines, " + std::to_string(parameters.size()) + " parameters (--show-profile prints it)"}});
  if (!platform_defaults.empty()) sections.push_back({"platform defaults (denied paths still win over them)", platform_defaults});
  plan_section params{"parameters", {}};
  for (const auto& p : parameters) {
    params.lines.push_back(p.key + "=" + p.value + (p.at_launch ? " (chosen at launch)" : "") + "  — " + p.meaning);
  }
  sections.push_back(std::move(params));
  return sections;
}

std::string macos_plan::profile_text() const {
  std::string text;
  for (const auto& p : parameters) {
    text += ";; -D" + p.key + "=" + p.value + (p.at_launch ? "   (chosen at launch)" : "") + "\n";
  }
  return text + profile;
}

}  // namespace cordon::macos_impl
