// cordon/windows/network_check.h — network_deny is claimed only after a
// behavioural check (docs/windows-backend.md, "The network check").
//
// An AppContainer without network capabilities is designed to have no
// network, but that is a property of the host's firewall (WFP) state, not
// of anything the launcher can read back. So before the command runs, the
// launcher opens a TCP listener on 127.0.0.1, starts a probe child in the
// same AppContainer under the same token (%SystemRoot%\System32\curl.exe -q
// --noproxy 127.0.0.1 --connect-timeout 5 http://127.0.0.1:PORT/: no .curlrc, no
// proxy from the environment) and looks at both sides: the
// probe's exit status and whether the listener saw a connection. This header
// is the decision, portable so that it is tested on every host with recorded
// observations; the probe itself is src/windows/launcher/network_probe.cpp.
#pragma once

#include <cstdint>
#include <string>

#include "cordon/enforcement.h"

namespace cordon::windows {

// What the probe showed. `ran` is false when no probe could be started (no
// curl.exe, a failed CreateProcess, no listener); `reason` then says why.
struct connect_probe_observation {
  bool ran = false;
  std::string reason;            // why the probe did not run, when !ran
  std::string target;            // "127.0.0.1:PORT"
  std::uint32_t exit_code = 0;   // the probe's exit status
  bool connect_failed = false;   // the probe reports that its connect failed (curl: 7 or 28)
  bool listener_saw_connection = false;  // a connection reached the launcher's listener
  bool timed_out = false;        // the probe did not end in time and was terminated
};

// curl's exit status for "failed to connect" (7) and "operation timed out"
// (28): the only ones that say the connect did not succeed.
bool curl_connect_failed(std::uint32_t exit_code) noexcept;

// network_deny after the check. A status that claims nothing
// (not_enforced, not_applicable) is returned as it is. Otherwise:
//   - a connection reached the listener: not_enforced ("the AppContainer
//     reached ...") whatever the probe said;
//   - the probe did not run, timed out, or exited with any status but a
//     failed connect: not_enforced ("not checked: ..."), fail closed;
//   - the connect failed and nothing reached the listener: the stated level,
//     its detail extended with what was checked.
// The launcher then holds the policy's requirement against the result: a
// policy requiring network_deny refuses the run (enforcement_unavailable).
control_status network_deny_after_probe(const control_status& stated, const connect_probe_observation& observed);

// One line for the report's read-back list: what the check found.
std::string describe(const connect_probe_observation& observed);

}  // namespace cordon::windows
