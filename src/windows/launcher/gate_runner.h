// src/windows/launcher/gate_runner.h — `cordon.exe gate run`: the gates of a
// manifest (src/gates/manifest.h, docs/gates.md) run through the Windows
// backend, one at a time, in `needs` order, with the same run record
// (src/gates/record.h) and per-gate reports in the shared format
// (schemas/report.v1.schema.json, src/windows/report.h).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "gates/manifest.h"

namespace cordon::windows {

struct windows_gate_settings {
  std::string out_dir;          // absolute Windows path: run.json and gate\NAME.*
  std::vector<std::string> only;  // empty: every gate; else these and what they need
  std::string junit_file;       // absolute, or empty: none
  std::string workspace;        // absolute Windows path: {workspace} of every gate's policy
  std::string lease_directory;  // empty: %LOCALAPPDATA%\cordon\leases
};

// Runs the manifest's selected gates (`manifest.directory` with '/' or '\')
// and writes OUT\run.json (rewritten at every state change; a gate not
// finished is `interrupted`), OUT\gate\NAME.policy.json, and per gate that
// was compiled NAME.sandbox.json: the run's report, or for a gate whose
// policy this host cannot enforce a `refused` report (and outcome
// `refused`, nothing ran); NAME.stdout and NAME.stderr for a gate that ran.
// A gate for another OS is `not_applicable`; a gate whose need did not pass
// is `skipped`. Each gate's policy is compiled before any runs and again, on
// the facts of that moment, right before it runs. One line per gate goes to
// `lines`; errors to `errors`. Returns gates::gate_exit_all_passed (0),
// gate_exit_not_all_passed (1) or gate_exit_runner_failed (125: a usage
// error, an unreadable gate policy, a workdir outside the workspace, a
// record that cannot be written).
int run_windows_gates(const gates::gate_manifest& manifest, const windows_gate_settings& settings, std::ostream& lines,
                      std::ostream& errors);

}  // namespace cordon::windows
