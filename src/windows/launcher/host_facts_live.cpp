// src/windows/launcher/host_facts_live.cpp — the host facts of the machine
// cordon.exe runs on: volumes and their ACL persistence, the paths a policy
// names (each ancestor too, read by handle without following reparse
// points), AppContainer support, the environment.
// windows.h (through win32.h) must precede the other Windows headers.
#include "windows/launcher/win32.h"

#include <winternl.h>

#include "cordon/windows/launcher.h"
#include "windows/launcher/path_boundary.h"
#include "core/vcs_metadata.h"
#include "windows/paths.h"
#include "windows/vcs_protection.h"

namespace cordon::windows {
namespace {

constexpr std::size_t kScanLimit = 100000;  // entries per root searched for hard-linked files

std::string windows_version() {
  using rtl_get_version = LONG(WINAPI*)(PRTL_OSVERSIONINFOW);
  auto fn = reinterpret_cast<rtl_get_version>(
      reinterpret_cast<void*>(GetProcAddress(GetModuleHandleW(L"ntdll.dll"), "RtlGetVersion")));
  RTL_OSVERSIONINFOW info{};
  info.dwOSVersionInfoSize = sizeof info;
  if (fn == nullptr || fn(&info) != 0) return "unknown";
  return std::to_string(info.dwMajorVersion) + "." + std::to_string(info.dwMinorVersion) + "." +
         std::to_string(info.dwBuildNumber);
}

bool appcontainer_exports() {
  HMODULE userenv = LoadLibraryExW(L"userenv.dll", nullptr, LOAD_LIBRARY_SEARCH_SYSTEM32);
  if (userenv == nullptr) return false;
  for (const char* name : {"CreateAppContainerProfile", "DeriveAppContainerSidFromAppContainerName", "DeleteAppContainerProfile"}) {
    if (GetProcAddress(userenv, name) == nullptr) return false;
  }
  return true;
}

std::vector<volume_facts> volumes() {
  std::vector<volume_facts> out;
  wchar_t drives[512];
  const DWORD n = GetLogicalDriveStringsW(512, drives);
  for (const wchar_t* d = drives; n != 0 && *d != 0; d += wcslen(d) + 1) {
    if (GetDriveTypeW(d) != DRIVE_FIXED) continue;  // local disks only: removable and network roots get no lease
    wchar_t fs[64] = {};
    DWORD flags = 0;
    if (!GetVolumeInformationW(d, nullptr, 0, nullptr, nullptr, &flags, fs, 64)) continue;
    out.push_back({win32::narrow(d), win32::narrow(fs), (flags & FILE_PERSISTENT_ACLS) != 0});
  }
  return out;
}

std::optional<path_facts> probe(const std::string& path) {
  HANDLE h = CreateFileW(win32::widen(path).c_str(), FILE_READ_ATTRIBUTES, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                         nullptr, OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT, nullptr);
  if (h == INVALID_HANDLE_VALUE) return std::nullopt;
  win32::unique_handle own(h);
  BY_HANDLE_FILE_INFORMATION info{};
  if (!GetFileInformationByHandle(h, &info)) return std::nullopt;
  path_facts f;
  f.exists = true;
  f.directory = (info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) != 0;
  f.reparse_point = (info.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT) != 0;
  f.link_count = info.nNumberOfLinks;
  f.volume_serial = info.dwVolumeSerialNumber;
  f.file_index = (static_cast<std::uint64_t>(info.nFileIndexHigh) << 32) | info.nFileIndexLow;
  return f;
}

std::string env(const wchar_t* name) {
  wchar_t buf[MAX_PATH];
  const DWORD n = GetEnvironmentVariableW(name, buf, MAX_PATH);
  return n == 0 || n >= MAX_PATH ? std::string() : win32::narrow(buf);
}

// `path` with each 8.3 short component ("C:\Users\RUNNER~1") in its long
// form (GetLongPathNameW): the path boundary compares the declared path with
// the final one and would refuse every root below a short name. A path that
// cannot be expanded (absent) is kept; the boundary then decides.
std::string long_path(const std::string& path) {
  if (path.find('~') == std::string::npos) return path;
  const std::wstring wide = win32::widen(path);
  const DWORD n = GetLongPathNameW(wide.c_str(), nullptr, 0);
  if (n == 0) return path;
  std::wstring out(n, L'\0');
  const DWORD m = GetLongPathNameW(wide.c_str(), out.data(), n);
  if (m == 0 || m >= n) return path;
  out.resize(m);
  return win32::narrow(out);
}

// Each repository's `.git` and the metadata files core::protected_vcs_files
// names, probed so that the compiler knows which exist.
void probe_vcs_files(const std::vector<std::string>& repositories, host_facts& f) {
  for (const auto& top : repositories) {
    std::vector<std::string> paths{detail::vcs_file_path(top, ".git")};
    for (const auto relative : core::protected_vcs_files) paths.push_back(detail::vcs_file_path(top, relative));
    for (const auto& path : paths) {
      if (f.paths.contains(path)) continue;
      if (auto probed = probe(path)) f.paths[path] = std::move(*probed);
    }
  }
}

}  // namespace

host_facts gather_host_facts(const std::vector<std::string>& paths_of_interest) {
  host_facts f;
  f.windows_version = windows_version();
  f.wine = running_on_wine();
  f.appcontainer_available = appcontainer_exports();
  f.job_objects = true;  // nested jobs: every Windows this launcher builds for (8 and later)
  f.volumes = volumes();
  f.user_profile = long_path(env(L"USERPROFILE"));
  wchar_t buf[MAX_PATH];
  DWORD n = GetTempPathW(MAX_PATH, buf);
  if (n != 0 && n < MAX_PATH) {
    f.temp_directory = long_path(win32::narrow(buf));  // TEMP may be 8.3 (GitHub-hosted runners)
    while (f.temp_directory.size() > 3 && f.temp_directory.back() == '\\') f.temp_directory.pop_back();
  }
  n = GetSystemWindowsDirectoryW(buf, MAX_PATH);
  if (n != 0 && n < MAX_PATH) f.system_root = win32::narrow(buf);
  if (wchar_t* block = GetEnvironmentStringsW(); block != nullptr) {
    for (const wchar_t* p = block; *p != 0; p += wcslen(p) + 1) {
      const std::wstring_view entry(p);
      const auto eq = entry.find(L'=', 1);
      // "=C:=C:\dir" entries are per-drive directories, not variables.
      if (entry.front() == L'=' || eq == std::wstring_view::npos) continue;
      f.environment.emplace_back(win32::narrow(entry.substr(0, eq)), win32::narrow(entry.substr(eq + 1)));
    }
    FreeEnvironmentStringsW(block);
  }
  for (const auto& path : paths_of_interest) {
    for (const auto& step : detail::ancestors_and_self(path)) {
      if (f.paths.contains(step)) continue;
      auto facts = probe(step);
      if (!facts) break;  // below a missing component nothing exists
      // A grant (with an AppContainer) or a low label (without one) reaches
      // every hard link of a file below a root; the same walk finds the
      // repositories protect_vcs_metadata protects.
      if (facts->directory && !facts->reparse_point && detail::same_path(step, path)) {
        facts->multi_link_descendants =
            launcher::find_multi_link_files(step, kScanLimit, facts->scan_truncated, &facts->repositories);
      }
      const std::vector<std::string> repositories = facts->repositories;
      f.paths[step] = std::move(*facts);
      probe_vcs_files(repositories, f);
    }
  }
  return f;
}

}  // namespace cordon::windows
