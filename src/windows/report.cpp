// report.cpp — the Windows backend's reports in the shared format (report.h).
#include "windows/report.h"

#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/controls_json.h"
#include "core/refusal_json.h"
#include "core/sha256.h"
#include "cordon/policy_json.h"
#include "cordon/version.h"

namespace cordon::windows {
namespace {

using json = nlohmann::ordered_json;

constexpr const char* backend_name = "windows-appcontainer";

// "YYYY-MM-DDTHH:MM:SSZ", the form every report uses, without gmtime_r
// (absent from the Windows C runtime).
std::string utc_time(std::chrono::system_clock::time_point when) {
  using namespace std::chrono;
  const auto seconds = floor<std::chrono::seconds>(when);
  const auto day = floor<days>(seconds);
  const year_month_day date{day};
  const hh_mm_ss time{seconds - day};
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%04d-%02u-%02uT%02d:%02d:%02dZ", static_cast<int>(date.year()),
                static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()),
                static_cast<int>(time.hours().count()), static_cast<int>(time.minutes().count()),
                static_cast<int>(time.seconds().count()));
  return buffer;
}

json header(const std::string& outcome, const std::vector<std::string>& argv) {
  json j;
  j["schema"] = 1;
  j["cordon_version"] = std::string(library_version());
  j["outcome"] = outcome;
  j["finished_at"] = utc_time(std::chrono::system_clock::now());
  j["backend"] = {{"name", backend_name}};
  j["command"] = {{"argv", argv}};
  return j;
}

json plan_part(json j, const windows_plan& plan, const enforcement_contract& controls) {
  j["backend"]["plan_format_version"] = plan.format_version();
  j["backend"]["platform"] = "windows";
  j["backend"]["isolation"] = std::string(to_string(isolation_level::os_sandbox));
  j["policy"] = {{"name", plan.policy().name},
                 {"digest", windows_policy_digest(plan)},
                 {"isolation", std::string(to_string(plan.policy().isolation))}};
  if (plan.command()) j["command"]["working_directory"] = plan.command()->working_directory;
  json names = json::array();
  for (const auto& [name, value] : plan.environment().entries) names.push_back(name);
  j["environment"] = {{"names", names}};
  j["controls"] = core::controls_json(controls);
  const process_policy& p = plan.policy().process;
  json limits = json::object();
  if (p.timeout_ms) limits["timeout_ms"] = *p.timeout_ms;
  if (p.memory_bytes) limits["memory_bytes"] = *p.memory_bytes;
  if (p.cpu_seconds) limits["cpu_seconds"] = *p.cpu_seconds;
  if (p.max_processes) limits["max_processes"] = *p.max_processes;
  j["limits"] = limits;
  return j;
}

std::string dump(const json& j) { return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n"; }

std::vector<std::string> argv_of(const windows_plan& plan) {
  return plan.command() ? plan.command()->argv : std::vector<std::string>{};
}

}  // namespace

std::string windows_policy_digest(const windows_plan& plan) {
  return "sha256:" + cordon::detail::sha256_hex(sandbox_policy_to_json(plan.policy()));
}

std::string windows_run_report_json(const windows_plan& plan, const windows_run_result& ran) {
  json j = plan_part(header(ran.timed_out ? "timed_out" : "completed", argv_of(plan)), plan, ran.observed);
  j["started_at"] = utc_time(std::chrono::system_clock::now() - std::chrono::milliseconds(ran.wall_ms));
  j["timeout_fired"] = ran.timed_out;
  if (ran.exit_code <= 255) {
    j["exit"] = {{"code", ran.exit_code}};
  } else {
    char name[32];
    std::snprintf(name, sizeof name, "NTSTATUS_0x%08X", static_cast<unsigned>(ran.exit_code));
    j["exit"] = {{"signal", ran.exit_code}, {"signal_name", name}};
  }
  j["timing"] = {{"wall_ms", ran.wall_ms < 0 ? 0 : ran.wall_ms}, {"user_cpu_ms", 0}, {"system_cpu_ms", 0}};
  j["violations"] = json::array();
  std::vector<std::string> warnings = plan.warnings();
  warnings.insert(warnings.end(), ran.warnings.begin(), ran.warnings.end());
  j["warnings"] = warnings;
  j["cleanup"] = ran.cleanup;
  return dump(j);
}

std::string windows_refused_report_json(const std::string& policy_name, const std::vector<std::string>& argv,
                                        const error& failure) {
  json j = header("refused", argv);
  j["policy"] = {{"name", policy_name}};
  core::add_refusal(j, failure);
  return dump(j);
}

std::string windows_launch_failed_report_json(const windows_plan& plan, const error& failure,
                                              const std::vector<std::string>& cleanup) {
  json j = plan_part(header("launch_failed", argv_of(plan)), plan, plan.contract());
  j["error"] = {{"code", std::string(to_string(failure.code))}, {"message", failure.describe()}};
  j["warnings"] = plan.warnings();
  j["cleanup"] = cleanup;
  return dump(j);
}

}  // namespace cordon::windows
