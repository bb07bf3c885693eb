// cordon/result.h — errors as values.
//
// Every fallible public function returns `result<T>`: either a value or a
// `cordon::error` carrying a stable `error_code`, a one-line message, the errno
// where there is one, and (for policy input) a location. The convention is
// written down in docs/errors.md.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <variant>

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
};

// The stable spelling of a code, e.g. "enforcement_unavailable".
std::string_view to_string(error_code code) noexcept;

struct error {
  error_code code = error_code::launch_failed;
  std::string message;   // one line, no trailing newline
  std::string location;  // JSON pointer, "line L, column C", or empty
  int sys_errno = 0;     // errno when a system call failed, else 0

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
