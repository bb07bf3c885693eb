// cordon/result.h — errors as values.
//
// Every fallible public function returns `result<T>`: either a value or a
// `cordon::error` carrying a stable `error_code`, a one-line message, the errno
// where there is one, and (for policy input) a location. The convention is
// written down in docs/errors.md.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "cordon/enforcement.h"
#include "cordon/policy.h"

namespace cordon {

// Stable error codes. The spelling returned by to_string() is part of the
// public contract (it appears in reports and on the command line); never
// rename a value, only add new ones.
enum class error_code {
  parse_error,               // input is not well-formed JSON; location = "line L, column C"
  invalid_policy,            // JSON is well-formed but the policy is not valid; location = JSON pointer
  unknown_profile,           // no built-in profile of that name
  backend_unavailable,       // the backend cannot run on this host at all
  unsupported_platform,      // the backend is for another operating system
  isolation_insufficient,    // backend's isolation level is below the policy's requirement
  enforcement_unavailable,   // a required control cannot be enforced at the required level
  plan_null,                 // launcher was given no plan
  plan_foreign,              // plan was compiled by another backend
  plan_other_platform,       // plan was compiled for another platform
  plan_stale,                // plan has another format version or comes from another process
  command_not_found,         // argv[0] could not be found inside the sandbox
  command_not_executable,    // argv[0] was found but could not be executed
  launch_failed,             // setting up the sandbox failed; errno and step in the message
  io_error,                  // reading or writing a file failed (errno set)
  usage_error,               // command-line usage is wrong
  invalid_destination,       // a network destination (host, port) is malformed; refuse the connection
  plan_recorded_facts,       // plan was compiled on recorded host facts (a description, never this host)
};

// The stable spelling of a code, e.g. "enforcement_unavailable".
std::string_view to_string(error_code code) noexcept;
// The code of a spelling; nullopt for an unknown one.
std::optional<error_code> error_code_from_string(std::string_view name) noexcept;

// One problem found in policy input: where (a JSON pointer, "line L, column
// C", or "" for the whole document) and why (one line).
struct policy_error {
  std::string location;
  std::string reason;
  bool operator==(const policy_error&) const = default;
};

// What a blocker is about: one control (gate 4), the backend itself (gate 2)
// or the isolation level (gate 3).
enum class blocker_subject { control, backend, isolation };

// Why a compile was refused, typed (docs/errors.md). For a control: the
// level the policy requires and the level this host delivers. For isolation:
// the levels are isolation levels. For the backend: `reason` says why it
// cannot run here.
struct blocker {
  blocker_subject subject = blocker_subject::control;
  cordon::control control = cordon::control::filesystem_read;  // subject == control
  enforcement_level required = enforcement_level::enforced;       // subject == control
  enforcement_level available = enforcement_level::not_enforced;  // subject == control
  isolation_level required_isolation = isolation_level::none;     // subject == isolation
  isolation_level available_isolation = isolation_level::none;    // subject == isolation
  std::string reason;  // one line naming the missing mechanism
  // A backend's stable code for the reason, when it has one (the Windows
  // backend's blocker_code spellings, e.g. "root_missing",
  // cordon/windows/compile.h), and what it is about (a path, a variable name,
  // a policy pointer). Empty for the driver's own blockers.
  std::string cause;
  std::string object;

  // A control that cannot reach `required` (available is what it gets).
  static blocker for_control(cordon::control which, enforcement_level required, enforcement_level available,
                             std::string reason);
  static blocker for_backend(std::string reason);
  static blocker for_isolation(isolation_level required, isolation_level available, std::string reason);

  // The stable spellings used by reports and the CLI: the control's name, or
  // "backend" / "isolation"; the levels' names ("available"/"unavailable" for
  // the backend).
  std::string subject_name() const;
  std::string required_name() const;
  std::string available_name() const;
  bool operator==(const blocker&) const = default;
};

struct error {
  error_code code = error_code::launch_failed;
  std::string message;   // one line, no trailing newline
  std::string location;  // JSON pointer, "line L, column C", or empty
  int sys_errno = 0;     // errno when a system call failed, else 0
  // Every problem found in policy input (parse_error, invalid_policy), each
  // with its own location; the first is also in message/location.
  std::vector<policy_error> errors;
  // Why a compile was refused (backend_unavailable, unsupported_platform,
  // isolation_insufficient, enforcement_unavailable).
  std::vector<blocker> blockers;

  // "code: message" with " (at location)" and ": strerror" when present.
  std::string describe() const;
};

// A value or an error. Deliberately small: C++20 has no std::expected.
template <class T>
class [[nodiscard]] result {
 public:
  result(T value) : state_(std::in_place_index<0>, std::move(value)) {}
  result(error err) : state_(std::in_place_index<1>, std::move(err)) {}

  bool has_value() const noexcept { return state_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }

  T& value() & { return std::get<0>(state_); }
  const T& value() const& { return std::get<0>(state_); }
  T&& value() && { return std::get<0>(std::move(state_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const error& error_value() const& { return std::get<1>(state_); }
  error&& error_value() && { return std::get<1>(std::move(state_)); }

 private:
  std::variant<T, error> state_;
};

// result<void>: success or an error.
struct ok_t {};
inline constexpr ok_t ok{};
template <>
class [[nodiscard]] result<void> {
 public:
  result(ok_t) {}
  result(error err) : err_(std::move(err)), failed_(true) {}
  bool has_value() const noexcept { return !failed_; }
  explicit operator bool() const noexcept { return !failed_; }
  const error& error_value() const& { return err_; }
  error&& error_value() && { return std::move(err_); }

 private:
  error err_;
  bool failed_ = false;
};

// Builds an error; `errno_value` defaults to 0.
error make_error(error_code code, std::string message, std::string location = {},
                 int errno_value = 0);

}  // namespace cordon
