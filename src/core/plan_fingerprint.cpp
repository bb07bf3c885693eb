// plan_fingerprint() (cordon/plan.h): apart from the plan binding rules in
// backend.cpp, since it needs SHA-256 (libmd), which the Windows cross build
// of the driver does not link.
#include "cordon/backend.h"
#include "cordon/policy_json.h"
#include "core/sha256.h"

namespace cordon {

std::string plan_fingerprint(const sandbox_plan& plan) {
  std::string text = sandbox_policy_to_json(plan.policy());
  text += "\nworkspace " + plan.workspace() + "\nbackend " + plan.backend_name() + " " +
          std::to_string(plan.format_version()) + " " + plan.platform() + "\n";
  for (const auto& [which, status] : plan.contract()) {
    text += std::string(to_string(which)) + " " + std::string(to_string(status.level)) + " " + status.mechanism +
            " | " + status.detail + "\n";
  }
  if (plan.payload() != nullptr) text += plan.payload()->describe();
  return "sha256:" + detail::sha256_hex(text);
}

}  // namespace cordon
