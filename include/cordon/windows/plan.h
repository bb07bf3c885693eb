// cordon/windows/plan.h — the Windows restricted-process plan: what the
// launcher will do, decided entirely by the compiler.
//
// A windows_plan is made only by compile_windows_plan() (private constructor),
// carries the private plan format version and a process-local identity, and
// is accepted only by the launcher of the process that compiled it
// (docs/windows-backend.md, "The plan"). It is not serializable.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cordon/enforcement.h"
#include "cordon/plan.h"
#include "cordon/policy.h"

namespace cordon::windows {

inline constexpr std::string_view plan_type = "windows_restricted_process";
inline constexpr std::uint32_t plan_format_version = 1;
// Recorded in every plan: the resources Windows grants to AppContainers and
// to the application-package groups (System32, Program Files, the
// AppContainer's own profile folder, ...) are intrinsic to the platform and
// cannot be subtracted by this launcher.
inline constexpr std::string_view platform_defaults_intrinsic = "windows_appcontainer_intrinsic";

// Whom an ACE names. The AppContainer SID is derived at launch from the
// profile name the plan carries.
enum class trustee { appcontainer, all_application_packages, all_restricted_application_packages };
std::string_view to_string(trustee t) noexcept;
// The well-known SID text of a package group (S-1-15-2-1, S-1-15-2-2); empty
// for `appcontainer`.
std::string_view well_known_sid(trustee t) noexcept;

// Access masks (winnt.h values, spelled here so that the plan is portable).
namespace access {
inline constexpr std::uint32_t read_data = 0x0001;         // FILE_READ_DATA / FILE_LIST_DIRECTORY
inline constexpr std::uint32_t write_data = 0x0002;        // FILE_WRITE_DATA / FILE_ADD_FILE
inline constexpr std::uint32_t append_data = 0x0004;       // FILE_APPEND_DATA / FILE_ADD_SUBDIRECTORY
inline constexpr std::uint32_t read_ea = 0x0008;
inline constexpr std::uint32_t write_ea = 0x0010;
inline constexpr std::uint32_t execute = 0x0020;           // FILE_EXECUTE / FILE_TRAVERSE
inline constexpr std::uint32_t delete_child = 0x0040;      // FILE_DELETE_CHILD
inline constexpr std::uint32_t read_attributes = 0x0080;
inline constexpr std::uint32_t write_attributes = 0x0100;
inline constexpr std::uint32_t delete_self = 0x00010000;   // DELETE
inline constexpr std::uint32_t read_control = 0x00020000;
inline constexpr std::uint32_t write_dac = 0x00040000;
inline constexpr std::uint32_t write_owner = 0x00080000;
inline constexpr std::uint32_t synchronize = 0x00100000;
// FILE_GENERIC_READ | FILE_GENERIC_EXECUTE (0x1200a9).
inline constexpr std::uint32_t read_execute =
    read_data | read_ea | execute | read_attributes | read_control | synchronize;
// Data write and create, without self-delete.
inline constexpr std::uint32_t data_write = write_data | append_data | write_ea | write_attributes;
// FILE_ALL_ACCESS (0x1f01ff).
inline constexpr std::uint32_t all = 0x001f01ff;
// What a writable grant may never contain.
inline constexpr std::uint32_t forbidden_in_grant = write_dac | write_owner | delete_child;
}  // namespace access

struct ace_spec {
  trustee who = trustee::appcontainer;
  bool allow = true;
  std::uint32_t mask = 0;
  bool inherit = true;       // OBJECT_INHERIT_ACE | CONTAINER_INHERIT_ACE (directories only)
  bool inherit_only = false; // INHERIT_ONLY_ACE: applies to descendants, not to the path itself
  bool operator==(const ace_spec&) const = default;
};

// Why a path gets its ACL change; the precedence order is
// denied > protected_read_only > writable > readable (docs/policy.md).
enum class acl_role { readable, writable, protected_read_only, denied };
std::string_view to_string(acl_role role) noexcept;

// The low-integrity fallback's mandatory label on a path (SYSTEM_MANDATORY_LABEL_ACE
// with SYSTEM_MANDATORY_LABEL_NO_WRITE_UP, OI CI on directories): `low`
// (S-1-16-4096) lets the low-integrity command write a writable root;
// `medium` (S-1-16-8192), set explicitly on a denied or protected path inside
// such a root, stops the inherited low label there (docs/windows-backend.md,
// "Without an AppContainer"). Leased and restored like the DACL.
enum class mandatory_label { none, low, medium };
std::string_view to_string(mandatory_label label) noexcept;
// The SID of a label ("S-1-16-4096", "S-1-16-8192"); empty for none.
std::string_view label_sid(mandatory_label label) noexcept;

// One temporary DACL change (a lease entry). The launcher records the
// original descriptor of `path` durably before it applies any entry.
struct acl_change {
  std::string path;            // absolute Windows path
  acl_role role = acl_role::readable;
  bool directory = true;
  bool created_at_launch = false;  // {run_tmp}: made by the launcher, removed after the run
  // SE_DACL_PROTECTED: inherited ACEs stop at this path (their effect is
  // copied in as explicit ACEs, without the package groups').
  bool protect_dacl = false;
  // Allow ACEs for the two package groups already on the path are removed
  // (they would otherwise grant what the policy denies).
  bool mask_package_allows = false;
  std::vector<ace_spec> aces;
  // The low-integrity fallback's label change (none with an AppContainer,
  // where `aces` carry the change instead).
  mandatory_label label = mandatory_label::none;
  std::string source;          // the policy entry, e.g. "/filesystem/denied/3"
  bool operator==(const acl_change&) const = default;
};

// A policy entry that produces no change, and why (shadowed by a stronger
// entry, not a Windows path, nothing to protect).
struct acl_note {
  std::string entry;   // the policy's path as resolved
  std::string source;  // JSON pointer
  std::string reason;
  bool operator==(const acl_note&) const = default;
};

// Job Object limits. Absent = no limit of that kind.
struct job_limits {
  bool kill_on_close = true;                     // JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
  bool die_on_unhandled_exception = true;        // no error-reporting dialog keeps the tree alive
  std::optional<std::uint32_t> active_processes; // JOB_OBJECT_LIMIT_ACTIVE_PROCESS
  std::optional<std::uint64_t> job_memory_bytes; // JOB_OBJECT_LIMIT_JOB_MEMORY (committed, whole tree)
  std::optional<std::uint64_t> cpu_time_100ns;   // JOB_OBJECT_LIMIT_JOB_TIME (user time, whole tree)
  std::optional<std::uint64_t> timeout_ms;       // wall clock; TerminateJobObject when it fires
  bool operator==(const job_limits&) const = default;
};

// Per-request limits: each absent value takes the plan's; a value above the
// plan's is lowered to it (the policy's limits are upper bounds).
struct request_limits {
  std::optional<std::uint64_t> max_processes;
  std::optional<std::uint64_t> memory_bytes;
  std::optional<std::uint64_t> cpu_seconds;
  std::optional<std::uint64_t> timeout_ms;
};

struct token_spec {
  bool disable_max_privilege = true;  // CreateRestrictedToken(DISABLE_MAX_PRIVILEGE): SeChangeNotify only
  // Groups made deny-only (SidsToDisable): BUILTIN\Administrators.
  std::vector<std::string> deny_only_sids{"S-1-5-32-544"};
  bool appcontainer = true;           // PROC_THREAD_ATTRIBUTE_SECURITY_CAPABILITIES
  std::string appcontainer_name;      // profile name, unique per plan
  std::vector<std::string> capabilities;  // none: no network, no library access
  // The low-integrity fallback where the host has no AppContainer
  // (appcontainer false): SidsToRestrict as Chromium's sandbox builds a
  // restricted token (docs/windows-backend.md, "Without an AppContainer"),
  // "{user}" and "{logon}" resolved at launch from the caller's token, then
  // TokenIntegrityLevel = S-1-16-4096, read back in the child.
  bool low_integrity = false;
  std::vector<std::string> restricting_sids;
  bool operator==(const token_spec&) const = default;
};

struct command_spec {
  std::string application;        // absolute path of the executable (lpApplicationName)
  std::vector<std::string> argv;  // as the policy's caller gave it
  std::string command_line;       // UTF-8 of the quoted command line (CommandLineToArgvW rules)
  std::string working_directory;  // absolute
  // The image's identity when the plan was compiled (path_facts); the
  // launcher opens the image, refuses another object and holds it until the
  // run ends (docs/windows-backend.md, "The command"). 0: not known.
  std::uint32_t volume_serial = 0;
  std::uint64_t file_index = 0;
};

// The environment the command gets, built from scratch.
struct environment_spec {
  // Final entries, sorted by name without regard to case (the order Windows
  // expects in a block).
  std::vector<std::pair<std::string, std::string>> entries;
  // The CREATE_UNICODE_ENVIRONMENT block: "NAME=VALUE\0...\0\0" in UTF-16.
  std::u16string block;
};

class windows_plan : public plan_payload {
 public:
  windows_plan(const windows_plan&) = delete;
  windows_plan& operator=(const windows_plan&) = delete;
  windows_plan(windows_plan&&) = default;

  // The normalized policy with root tokens resolved.
  const sandbox_policy& policy() const noexcept { return policy_; }
  std::uint32_t format_version() const noexcept { return format_version_; }
  std::uint64_t identity() const noexcept { return identity_; }
  std::uint64_t process_token() const noexcept { return process_token_; }
  const std::string& platform_defaults() const noexcept { return platform_defaults_; }
  // Directories the platform lets every AppContainer read (System32, Program
  // Files, ...) as far as the host facts name them: where a command may live
  // without a readable root.
  const std::vector<std::string>& intrinsic_readable() const noexcept { return intrinsic_readable_; }
  // Absent when the plan was compiled without a command (explain).
  const std::optional<command_spec>& command() const noexcept { return command_; }
  const environment_spec& environment() const noexcept { return environment_; }
  // In the order the launcher applies them (parents before descendants);
  // restoration runs in reverse.
  const std::vector<acl_change>& acl_changes() const noexcept { return acl_changes_; }
  const std::vector<acl_note>& acl_notes() const noexcept { return acl_notes_; }
  const job_limits& limits() const noexcept { return limits_; }
  const token_spec& token() const noexcept { return token_; }
  // The per-run directory "{run_tmp}" resolves to, when the policy has one
  // (created by the launcher, removed after the run).
  const std::optional<std::string>& run_tmp() const noexcept { return run_tmp_; }
  const enforcement_contract& contract() const noexcept { return contract_; }
  const std::vector<std::string>& warnings() const noexcept { return warnings_; }
  bool from_reference_shape() const noexcept { return reference_shape_; }
  // Compiled on facts loaded from a record (host_facts::recorded): the
  // launcher refuses it (plan_recorded_facts).
  bool from_recorded_facts() const noexcept { return recorded_facts_; }
  // The ACL changes, token, job limits and environment names as stable text.
  std::string describe() const override;
  // The token, the job, the environment block and the DACL lease as a person
  // reads them (`cordon policy explain`; src/windows/explain.cpp).
  std::vector<plan_section> explain() const override;

 private:
  friend struct plan_builder;
  windows_plan() = default;

  sandbox_policy policy_;
  std::uint32_t format_version_ = 0;
  std::uint64_t identity_ = 0;
  std::uint64_t process_token_ = 0;
  std::string platform_defaults_;
  std::vector<std::string> intrinsic_readable_;
  std::optional<command_spec> command_;
  environment_spec environment_;
  std::vector<acl_change> acl_changes_;
  std::vector<acl_note> acl_notes_;
  job_limits limits_;
  token_spec token_;
  std::optional<std::string> run_tmp_;
  enforcement_contract contract_;
  std::vector<std::string> warnings_;
  bool reference_shape_ = false;
  bool recorded_facts_ = false;
};

// The job limits for one request under `plan`: the minimum of each plan limit
// and the request's value (a request cannot raise a limit the policy sets).
job_limits limits_for_request(const windows_plan& plan, const request_limits& request);

// A random value chosen once per process (never 0); plans carry it.
std::uint64_t windows_process_token() noexcept;

}  // namespace cordon::windows
