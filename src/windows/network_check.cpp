// src/windows/network_check.cpp — the decision of cordon/windows/network_check.h.
#include "cordon/windows/network_check.h"

namespace cordon::windows {

bool curl_connect_failed(std::uint32_t exit_code) noexcept { return exit_code == 7 || exit_code == 28; }

control_status network_deny_after_probe(const control_status& stated, const connect_probe_observation& observed) {
  if (stated.level == enforcement_level::not_enforced || stated.level == enforcement_level::not_applicable) {
    return stated;
  }
  control_status out = stated;
  if (observed.listener_saw_connection) {
    out.level = enforcement_level::not_enforced;
    out.detail = "a probe in the AppContainer reached " + observed.target + ": the network is not denied";
    return out;
  }
  if (!observed.ran || observed.timed_out || !observed.connect_failed) {
    out.level = enforcement_level::not_enforced;
    out.detail = "not checked: " + describe(observed);
    return out;
  }
  out.detail = (out.detail.empty() ? "" : out.detail + "; ") + "checked before the run: " + describe(observed);
  return out;
}

std::string describe(const connect_probe_observation& observed) {
  if (!observed.ran) return "no network probe ran (" + observed.reason + ")";
  if (observed.listener_saw_connection) return "a connect from the AppContainer to " + observed.target + " succeeded";
  if (observed.timed_out) return "the network probe to " + observed.target + " did not end in time";
  if (!observed.connect_failed) {
    return "the network probe to " + observed.target + " exited " + std::to_string(observed.exit_code) +
           ", not with a failed connect";
  }
  return "a connect from the AppContainer to " + observed.target + " failed (probe exit " +
         std::to_string(observed.exit_code) + ")";
}

}  // namespace cordon::windows
