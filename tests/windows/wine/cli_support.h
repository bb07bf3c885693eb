// tests/windows/wine/cli_support.h — running cordon.exe from the wine tests:
// its exit status and output, files written and read back, and where the
// reports go (scripts/test-windows.sh validates them).
#pragma once

#include <string>

#include "cordon/policy_json.h"
#include "wine_support.h"

namespace cordon::windows::testing {

struct process_output {
  DWORD exit_code = 0;
  std::string out;
};

// Runs `cordon.exe ARGS` (from the suite's directory) to its end, stdout and
// stderr together. Exit 9999: it could not be started.
inline process_output run_cordon(const std::string& args) {
  temp_dir dir;
  const std::string out_file = dir.file("out.txt");
  SECURITY_ATTRIBUTES sa{sizeof sa, nullptr, TRUE};
  win32::unique_handle out(CreateFileW(win32::widen(out_file).c_str(), GENERIC_WRITE, FILE_SHARE_READ, &sa, CREATE_ALWAYS, 0, nullptr));
  STARTUPINFOW si{};
  si.cb = sizeof si;
  si.dwFlags = STARTF_USESTDHANDLES;
  si.hStdOutput = out.get();
  si.hStdError = out.get();
  si.hStdInput = GetStdHandle(STD_INPUT_HANDLE);
  std::wstring line = win32::widen("cordon " + args);
  PROCESS_INFORMATION pi{};
  process_output result;
  if (!CreateProcessW(win32::widen(exe_directory() + "\\cordon.exe").c_str(), line.data(), nullptr, nullptr, TRUE, 0, nullptr,
                      nullptr, &si, &pi)) {
    result.exit_code = 9999;
    return result;
  }
  WaitForSingleObject(pi.hProcess, 60000);
  GetExitCodeProcess(pi.hProcess, &result.exit_code);
  CloseHandle(pi.hProcess);
  CloseHandle(pi.hThread);
  out.reset();
  win32::unique_handle in(CreateFileW(win32::widen(out_file).c_str(), GENERIC_READ, FILE_SHARE_READ, nullptr, OPEN_EXISTING, 0, nullptr));
  std::string text(1 << 16, '\0');
  DWORD got = 0;
  ReadFile(in.get(), text.data(), static_cast<DWORD>(text.size()), &got, nullptr);
  text.resize(got);
  result.out = text;
  return result;
}

// Writes `text` to `path` (created or truncated).
inline void write_text(const std::string& path, const std::string& text) {
  win32::unique_handle f(CreateFileW(win32::widen(path).c_str(), GENERIC_WRITE, 0, nullptr, CREATE_ALWAYS, 0, nullptr));
  DWORD n = 0;
  WriteFile(f.get(), text.data(), static_cast<DWORD>(text.size()), &n, nullptr);
}

// `p` as policy JSON in DIR\policy.json; returns the path.
inline std::string write_policy(const temp_dir& dir, const sandbox_policy& p) {
  const std::string path = dir.file("policy.json");
  write_text(path, sandbox_policy_to_json(p));
  return path;
}

// The file's contents (up to 64 KiB), or "" when it cannot be opened.
inline std::string read_text(const std::string& path) {
  win32::unique_handle in(CreateFileW(win32::widen(path).c_str(), GENERIC_READ, FILE_SHARE_READ, nullptr, OPEN_EXISTING, 0, nullptr));
  if (in.get() == INVALID_HANDLE_VALUE) return {};
  std::string text(1 << 16, '\0');
  DWORD got = 0;
  ReadFile(in.get(), text.data(), static_cast<DWORD>(text.size()), &got, nullptr);
  text.resize(got);
  return text;
}

// Where a report goes: the directory CORDON_WINE_REPORTS names (set by
// scripts/test-windows.sh, which validates every report there against
// schemas/report.v1.schema.json after the suite), else `fallback`.
inline std::string report_path(const temp_dir& fallback, const std::string& name) {
  wchar_t dir[MAX_PATH];
  const DWORD n = GetEnvironmentVariableW(L"CORDON_WINE_REPORTS", dir, MAX_PATH);
  if (n == 0 || n >= MAX_PATH) return fallback.file(name);
  return win32::narrow(dir) + "\\" + name;
}

}  // namespace cordon::windows::testing
