// fs_error.h — the filesystem worker's refusals and failures as values
// (docs/fs-worker.md, "Error codes"). The code spellings are part of the
// protocol: never rename one, only add.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace cordon::fsworker {

struct fs_error {
  std::string code;     // stable spelling, e.g. "denied", "symlink", "hard_link"
  std::string message;  // one line
  std::string rule;     // the rule that refused, e.g. "filesystem.denied /ws/secret"; may be empty
  int sys_errno = 0;    // the errno of the system call that failed, else 0
};

inline fs_error make_fs_error(std::string code, std::string message, std::string rule = {}, int err = 0) {
  return fs_error{std::move(code), std::move(message), std::move(rule), err};
}

// A value or an fs_error (the worker's own small result type: its codes are
// the protocol's strings, not cordon::error_code).
template <class T>
class [[nodiscard]] fs_result {
 public:
  fs_result(T value) : state_(std::in_place_index<0>, std::move(value)) {}
  fs_result(fs_error err) : state_(std::in_place_index<1>, std::move(err)) {}
  bool ok() const noexcept { return state_.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }
  T& value() & { return std::get<0>(state_); }
  const T& value() const& { return std::get<0>(state_); }
  T&& value() && { return std::get<0>(std::move(state_)); }
  T* operator->() { return &value(); }
  T& operator*() & { return value(); }
  const fs_error& error() const& { return std::get<1>(state_); }

 private:
  std::variant<T, fs_error> state_;
};

struct fs_ok {};
using fs_status = fs_result<fs_ok>;

}  // namespace cordon::fsworker
