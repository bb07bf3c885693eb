// src/windows/launcher/win32.cpp — see win32.h.
#include "windows/launcher/win32.h"

#include "windows/environment.h"

namespace cordon::windows::win32 {

std::wstring widen(std::string_view utf8) {
  auto u16 = detail::utf8_to_utf16(utf8);
  if (!u16) return {};
  return std::wstring(u16->begin(), u16->end());
}

std::string narrow(std::wstring_view wide) {
  std::u16string u16(wide.begin(), wide.end());
  if (auto s = detail::utf16_to_utf8(u16)) return *s;
  for (auto& c : u16) {
    if (c >= 0xD800 && c <= 0xDFFF) c = 0xFFFD;
  }
  return detail::utf16_to_utf8(u16).value_or("");
}

error last_error(std::string_view step, DWORD code) {
  wchar_t* text = nullptr;
  const DWORD n = FormatMessageW(FORMAT_MESSAGE_ALLOCATE_BUFFER | FORMAT_MESSAGE_FROM_SYSTEM |
                                     FORMAT_MESSAGE_IGNORE_INSERTS,
                                 nullptr, code, 0, reinterpret_cast<wchar_t*>(&text), 0, nullptr);
  std::string message = std::string(step) + ": error " + std::to_string(code);
  if (n != 0 && text != nullptr) {
    std::string m = narrow(std::wstring_view(text, n));
    while (!m.empty() && (m.back() == '\n' || m.back() == '\r' || m.back() == ' ' || m.back() == '.')) m.pop_back();
    message += " (" + m + ")";
  }
  if (text != nullptr) LocalFree(text);
  // The code stays in the message: sys_errno is an errno, and strerror would misname it.
  return make_error(error_code::launch_failed, std::move(message));
}

}  // namespace cordon::windows::win32
