// runner.h — `cordon gate run`: compile every gate's policy, then run the
// gates confined, in `needs` order, up to N at a time, keeping a run record
// that is valid at every instant (docs/gates.md).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "cordon/backend.h"
#include "gates/manifest.h"

namespace cordon::gates {

// What became of one gate. Only `passed` is a pass.
enum class gate_outcome {
  passed,          // the command exited 0, and its report has no violation or finding (or the gate accepts them)
  failed,          // it exited non-zero, was killed by a signal, or could not start
  timed_out,       // its timeout fired; the tree was killed
  refused,         // its policy cannot be enforced on this host (blockers recorded); nothing ran
  not_applicable,  // it is for another OS; nothing ran
  skipped,         // a gate it needs did not pass; nothing ran
  interrupted,     // the runner was stopped (or killed) before the gate finished
};
std::string_view to_string(gate_outcome outcome) noexcept;

// Where a gate is in its run. The record says `interrupted` for every gate
// that is not `finished`, so that a record left by a killed runner is true.
enum class gate_phase { pending, running, finished };

struct gate_state {
  const gate_spec* spec = nullptr;
  gate_phase phase = gate_phase::pending;
  bool launched = false;             // its command was started (it has output files and a report)
  bool reported = false;             // refused, with a refused report written (the Windows runner does)
  gate_outcome outcome = gate_outcome::interrupted;
  int exit_status = -1;              // the confined `cordon run`'s status; -1 when it did not exit
  int signal = 0;                    // the signal that ended it, else 0
  std::uint64_t started_ms = 0;      // since the run started
  std::uint64_t duration_ms = 0;
  std::string policy_name, policy_digest, report_digest;
  std::vector<std::string> below_enforced;  // "control=level" for each control under `enforced`
  // "kind target" of each violation and deferred-execution finding in its
  // report: a gate with any is failed unless its spec accepts findings.
  std::vector<std::string> findings;
  std::vector<blocker> blockers;            // refused: why
  std::string detail;                       // one line: why it ended so
  int pid = -1;
};

struct run_settings {
  std::string out_dir = "gate-run";
  unsigned jobs = 1;
  std::vector<std::string> only;  // empty: every gate; else these and what they need
  std::string junit_file;         // empty: none
  std::string workspace;          // absolute: {workspace} of every gate's policy
  std::string home;               // absolute, or empty for $HOME
  std::string cordon_exe = "/proc/self/exe";  // runs `cordon run` for each gate
  bool color = false;
  // A terminal: the live table (live_table.h) in place of one line per state
  // change, each line cut to table_width columns (0: no limit).
  bool live_table = false;
  std::size_t table_width = 0;
};

// Process exit statuses of `cordon gate run` (docs/gates.md).
inline constexpr int gate_exit_all_passed = 0;
inline constexpr int gate_exit_not_all_passed = 1;  // a selected gate did not pass
inline constexpr int gate_exit_runner_failed = 125;  // bad manifest or usage, record not writable
// Stopped by SIGINT/SIGTERM: 128 + the signal (130, 143).

// "control=level" for each control of `contract` below `enforced` (other
// than not_applicable), in the contract's order: gate_state::below_enforced.
std::vector<std::string> below_enforced(const enforcement_contract& contract);

// The gates of `only` and, transitively, the gates they need, in manifest
// order; every gate when `only` is empty. Errors: usage_error for a name that
// is no gate ("--only NAME: no such gate").
result<std::vector<const gate_spec*>> select_gates(const gate_manifest& manifest, const std::vector<std::string>& only);

// Runs the manifest's selected gates and writes the record to settings.out_dir
// (run.json, gate/<name>.{policy.json,sandbox.json,stdout,stderr}) and, when
// asked, a JUnit file. One line per gate state change goes to `lines`; errors
// to `errors`. Returns one of the exit statuses above. Blocks SIGINT, SIGTERM
// and SIGCHLD while it runs and restores the mask before returning.
int run_gates(const gate_manifest& manifest, const run_settings& settings, std::ostream& lines,
              std::ostream& errors);

}  // namespace cordon::gates
