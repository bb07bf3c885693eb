// sbpl_check.h — a structural checker for the Seatbelt profiles cordon writes.
//
// Apple publishes no SBPL grammar and Linux has no libsandbox, so this checks
// what can be checked without a Mac (docs/macos-backend.md, "The structural
// checker"): the text reads as balanced forms; it starts with (version 1) and
// has (deny default) and never (allow default ...); every rule is
// (allow|deny OPERATION... FILTER... [(with ...)]) with operation and filter
// names from the vocabulary that maintained projects use; path filters take
// absolute paths or supplied parameters; regexes are anchored at "^/";
// network-outbound is only ever allowed with `remote` filters whose host is
// "*" or "localhost" (a numeric host makes sandbox-exec reject the whole
// profile; a `local` filter on outbound allows all egress); mach-lookup is
// only allowed for exact service names; sysctl-write and network* are never
// allowed; an allow without filters only for process-fork and pseudo-tty.
//
// Passing this check does not mean libsandbox accepts the profile or
// enforces it: only `sandbox-exec` on a Mac can tell (scripts/macos-runner.sh).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace cordon::macos_impl {

struct sbpl_problem {
  int line = 0;    // 1-based; 0 when the problem is not at one place (a missing form)
  int column = 0;
  std::string message;
};

// Checks `profile` with the parameters `-D KEY=VALUE` would supply. Returns
// every problem found, in text order (the first parse error stops reading).
// An empty result means the profile passed.
std::vector<sbpl_problem> check_sbpl_profile(std::string_view profile,
                                             const std::map<std::string, std::string>& parameters);

// The vocabulary the checker accepts (from docs/macos-backend.md), for tests
// and the documentation.
bool is_known_sbpl_operation(std::string_view name);
bool is_known_sbpl_filter(std::string_view name);

}  // namespace cordon::macos_impl
