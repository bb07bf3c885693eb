// report_view.h — a run report (docs/report.md) for a person to read: the
// short summary `cordon run --summary` prints at the end, the tables of
// `cordon report show FILE`, and the meanings of the isolation and
// enforcement levels wherever they are printed.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <string_view>

namespace cordon::cli {

// One line under every table of levels (explain, probe --human, report show).
inline constexpr const char* kLevelsNote =
    "levels: enforced = the mechanism stops it; partial = it stops some of it (see why); not_enforced = nothing\n"
    "stops it; not_applicable = the policy asks nothing of it; planned = a later version will enforce it;\n"
    "unverified = compiled for another platform, not proven on this host\n";

// What an isolation level (policy.h, isolation_level) means, in a few words;
// "" for a spelling that is not a level.
std::string_view isolation_meaning(std::string_view level);

// "isolation:  container (what that means)" and, when `required` is not
// empty, a second line saying the policy's minimum and that levels are ordered.
void print_isolation_lines(const std::string& provided, const std::string& required, std::ostream& out);

// The summary of a report written by run_report_json() (cordon/report.h):
// outcome and exit, which controls were enforced and which were not and why,
// violations, warnings, and where the whole report is (`report_path`, may be
// empty). Every line starts with "cordon: " so that it stands apart from the
// command's own stderr. Fields a report lacks are left out.
void print_run_summary(const nlohmann::ordered_json& report, const std::string& report_path, std::ostream& out);

// The first field of `report` that print_report_tables() reads and that has
// the wrong JSON type, as "POINTER: not WHAT" ("/environment/names/1: not a
// string"); "" when every such field has its type (docs/report.md, and
// schemas/report.v1.schema.json). `cordon report show` refuses a report with
// a problem (invalid_report) instead of printing it.
std::string report_shape_problem(const nlohmann::ordered_json& report);

// The whole report as labelled lines and tables (`cordon report show`):
// works for every outcome (completed, timed_out, interrupted, refused,
// launch_failed). `report` has no report_shape_problem().
void print_report_tables(const nlohmann::ordered_json& report, std::ostream& out);

}  // namespace cordon::cli
