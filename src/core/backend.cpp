// Plans are made and checked only here, so the binding rules live in one place.
#include "cordon/backend.h"

#include <atomic>
#include <chrono>
#include <random>


namespace cordon {
namespace {

// Portable (the Windows cross build compiles this file too): the kernel's
// random source through std::random_device (getrandom on Linux, rand_s with
// mingw), the clock when it has none.
std::uint64_t random_u64() noexcept {
  std::uint64_t value = 0;
  try {
    std::random_device device;
    value = (static_cast<std::uint64_t>(device()) << 32) ^ device();
  } catch (...) {
    value = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  }
  return value | 1;  // never 0: 0 marks "no process"
}

std::atomic<std::uint64_t> next_plan_identity{1};

}  // namespace

result<host_facts> sandbox_backend::load_host_facts(std::string_view, const compile_options&) const {
  return make_error(error_code::usage_error, "the " + std::string(name()) + " backend reads no recorded host facts");
}

result<std::string> sandbox_backend::record_host_facts(const host_facts&) const {
  return make_error(error_code::usage_error, "the " + std::string(name()) + " backend records no host facts");
}

std::uint64_t current_process_token() noexcept {
  static const std::uint64_t token = random_u64();
  return token;
}

std::shared_ptr<const sandbox_plan> sandbox_backend::make_plan(sandbox_policy normalized, std::string workspace,
                                                               std::string cgroup_parent,
                                                               enforcement_contract contract,
                                                               std::vector<std::string> warnings,
                                                               std::shared_ptr<const plan_payload> payload,
                                                               bool recorded_facts) const {
  std::shared_ptr<sandbox_plan> plan(new sandbox_plan());
  plan->policy_ = std::move(normalized);
  plan->workspace_ = std::move(workspace);
  plan->cgroup_parent_ = std::move(cgroup_parent);
  plan->backend_name_ = std::string(name());
  plan->format_version_ = plan_format_version();
  plan->platform_ = std::string(platform());
  plan->isolation_ = isolation();
  plan->contract_ = std::move(contract);
  plan->warnings_ = std::move(warnings);
  plan->identity_ = next_plan_identity.fetch_add(1);
  plan->process_token_ = current_process_token();
  plan->backend_ = this;
  plan->payload_ = std::move(payload);
  plan->recorded_facts_ = recorded_facts;
  return plan;
}

result<void> sandbox_backend::check_plan(const sandbox_plan* plan, std::string_view platform) const {
  if (plan == nullptr) return make_error(error_code::plan_null, "no plan was given to the launcher");
  if (plan->backend_name() != name() || plan->backend() != this) {
    return make_error(error_code::plan_foreign, "plan was compiled by backend '" + plan->backend_name() +
                                                    "', not by this '" + std::string(name()) + "' instance");
  }
  if (plan->platform() != platform) {
    return make_error(error_code::plan_other_platform,
                      "plan targets platform '" + plan->platform() + "', this host is '" +
                          std::string(platform) + "'");
  }
  if (plan->format_version() != plan_format_version() || plan->process_token() != current_process_token()) {
    return make_error(error_code::plan_stale,
                      "plan has format version " + std::to_string(plan->format_version()) +
                          " from another process or build; recompile the policy");
  }
  if (plan->from_recorded_facts()) {
    return make_error(error_code::plan_recorded_facts,
                      "plan was compiled on recorded host facts, which describe a host and never prove this one; "
                      "compile on this host's facts (read_host_facts) to launch");
  }
  return ok;
}

}  // namespace cordon
