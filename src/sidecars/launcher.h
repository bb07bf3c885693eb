// launcher.h — `cordon sidecar`: check, compile, launch a confined sidecar on
// the run API, report before trust, relay, report how it ended
// (docs/sidecars.md).
#pragma once

#include <chrono>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "sidecars/extension.h"
#include "sidecars/session.h"
#include "sidecars/sidecar_report.h"

namespace cordon::sidecars {

// Exit statuses of `cordon sidecar` beyond the sidecar's own (docs/sidecars.md).
inline constexpr int sidecar_exit_handshake_timeout = 124;
inline constexpr int sidecar_exit_refused = 125;

struct sidecar_request {
  std::vector<std::string> argv;
  std::string policy_ref;  // a built-in profile, or a policy file (a string with '/' or ".json")
  std::string policy_base;  // the directory a relative policy file is read from
  std::string workspace;          // absolute: {workspace}
  std::string working_directory;  // absolute, inside the workspace
  std::vector<std::string> host_environment;
  std::vector<requirement> requirements;
  std::string report_file;  // empty: none
  int report_fd = -1;       // >= 0: each report as one JSON line on this descriptor
  const extension_manifest* extension = nullptr;
  std::string capability_rules;  // a capability rules file (docs/governance.md); needed for grants
  std::string supervisor_path;   // empty: the run API's default
  session_settings session;      // protocol, timeouts; host_in/host_out
};

// Runs the whole of one sidecar and returns cordon's exit status: the
// sidecar's own code (or 128+N for signal N), 124 when the handshake timed
// out, 125 when it was refused (an extension file that does not match, a
// grant the host's rules do not allow, a policy this host cannot enforce, an
// unmet --require) or the report could not be written. A refusal writes a
// "refused" report and starts nothing. Messages go to `errors`, one line
// each, "cordon: CODE: ...".
int run_sidecar(const sidecar_request& request, std::ostream& errors);

}  // namespace cordon::sidecars
