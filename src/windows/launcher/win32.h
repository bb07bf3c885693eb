// src/windows/launcher/win32.h — the launcher's small Windows helpers: one
// owning handle type, wide-string conversion, errors from GetLastError.
#pragma once
#if !defined(_WIN32)
#error "src/windows/launcher is built only for Windows (src/windows/cross)"
#endif

#include <windows.h>

#include <memory>
#include <string>
#include <string_view>

#include "cordon/result.h"

namespace cordon::windows::win32 {

// The one owner of a kernel handle (INVALID_HANDLE_VALUE and null are empty).
class unique_handle {
 public:
  unique_handle() = default;
  explicit unique_handle(HANDLE h) : h_(h == INVALID_HANDLE_VALUE ? nullptr : h) {}
  unique_handle(unique_handle&& o) noexcept : h_(o.release()) {}
  unique_handle& operator=(unique_handle&& o) noexcept {
    reset(o.release());
    return *this;
  }
  unique_handle(const unique_handle&) = delete;
  unique_handle& operator=(const unique_handle&) = delete;
  ~unique_handle() { reset(); }
  HANDLE get() const noexcept { return h_; }
  explicit operator bool() const noexcept { return h_ != nullptr; }
  HANDLE release() noexcept {
    HANDLE h = h_;
    h_ = nullptr;
    return h;
  }
  void reset(HANDLE h = nullptr) noexcept {
    if (h_ != nullptr) CloseHandle(h_);
    h_ = h;
  }

 private:
  HANDLE h_ = nullptr;
};

// Memory the system allocated with LocalAlloc (SDDL strings, ACLs, descriptors).
struct local_free {
  void operator()(void* p) const noexcept { LocalFree(p); }
};
template <class T>
using local_ptr = std::unique_ptr<T, local_free>;

std::wstring widen(std::string_view utf8);  // invalid UTF-8 -> empty
std::string narrow(std::wstring_view wide);  // lone surrogates -> U+FFFD

// error{launch_failed, "<step>: error N (system message)"} for GetLastError() = N.
error last_error(std::string_view step, DWORD code = GetLastError());

}  // namespace cordon::windows::win32
