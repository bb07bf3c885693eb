// src/windows/launcher/path_boundary.cpp — see path_boundary.h.
#include "windows/launcher/path_boundary.h"

#include <cstdio>

#include "windows/paths.h"

namespace cordon::windows::launcher {
namespace {

error refuse(const std::string& path, const std::string& why) {
  return make_error(error_code::launch_failed, "path boundary: " + path + " " + why);
}

// GetFinalPathNameByHandleW without the "\\?\" prefix.
std::string final_path(HANDLE h) {
  wchar_t buf[1024];
  const DWORD n = GetFinalPathNameByHandleW(h, buf, 1024, FILE_NAME_NORMALIZED | VOLUME_NAME_DOS);
  if (n == 0 || n >= 1024) return {};
  std::string s = win32::narrow(std::wstring_view(buf, n));
  if (s.rfind("\\\\?\\", 0) == 0) s = s.substr(4);
  return s;
}

}  // namespace

result<opened_path> open_path(const std::string& path, DWORD leaf_access) {
  opened_path out;
  const auto steps = detail::ancestors_and_self(path);
  if (steps.empty()) return refuse(path, "is not an absolute path");
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const bool leaf = i + 1 == steps.size();
    const DWORD access = FILE_READ_ATTRIBUTES | READ_CONTROL | (leaf ? leaf_access : 0);
    HANDLE h = CreateFileW(win32::widen(steps[i]).c_str(), access, FILE_SHARE_READ | FILE_SHARE_WRITE, nullptr,
                           OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT, nullptr);
    if (h == INVALID_HANDLE_VALUE) return win32::last_error("path boundary: CreateFileW(" + steps[i] + ")");
    out.chain.emplace_back(h);
    BY_HANDLE_FILE_INFORMATION info{};
    if (!GetFileInformationByHandle(h, &info)) return win32::last_error("GetFileInformationByHandle(" + steps[i] + ")");
    if ((info.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT) != 0) {
      return refuse(steps[i], "is a reparse point (symbolic link, junction or mount point)");
    }
    const bool directory = (info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) != 0;
    if (!leaf && !directory) return refuse(steps[i], "is not a directory");
    if (leaf) {
      out.directory = directory;
      out.links = info.nNumberOfLinks;
      if (!directory && info.nNumberOfLinks > 1) {
        return refuse(path, "has " + std::to_string(info.nNumberOfLinks) + " hard links; a grant would reach every alias");
      }
      char id[40];
      std::snprintf(id, sizeof id, "%08lx:%08lx%08lx", static_cast<unsigned long>(info.dwVolumeSerialNumber),
                    static_cast<unsigned long>(info.nFileIndexHigh), static_cast<unsigned long>(info.nFileIndexLow));
      out.file_id = id;
      const std::string real = final_path(h);
      if (!real.empty() && !detail::same_path(real, path)) {
        return refuse(path, "is reached as " + real + "; name it by its own long path");
      }
    }
  }
  return out;
}

std::vector<std::string> find_multi_link_files(const std::string& root, std::size_t limit, bool& truncated,
                                               std::vector<std::string>* repositories) {
  std::vector<std::string> found;
  std::vector<std::string> pending{root};
  std::size_t visited = 0;
  truncated = false;
  while (!pending.empty()) {
    const std::string dir = pending.back();
    pending.pop_back();
    WIN32_FIND_DATAW data;
    HANDLE find = FindFirstFileExW(win32::widen(dir + "\\*").c_str(), FindExInfoBasic, &data, FindExSearchNameMatch,
                                   nullptr, 0);
    if (find == INVALID_HANDLE_VALUE) continue;
    do {
      const std::wstring name = data.cFileName;
      if (name == L"." || name == L"..") continue;
      if (++visited > limit) {
        truncated = true;
        FindClose(find);
        return found;
      }
      const std::string child = dir + "\\" + win32::narrow(name);
      if (repositories != nullptr && _wcsicmp(name.c_str(), L".git") == 0) repositories->push_back(dir);
      if ((data.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT) != 0) continue;  // never followed
      if ((data.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) != 0) {
        pending.push_back(child);
        continue;
      }
      HANDLE h = CreateFileW(win32::widen(child).c_str(), FILE_READ_ATTRIBUTES, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                             nullptr, OPEN_EXISTING, FILE_FLAG_OPEN_REPARSE_POINT, nullptr);
      // A file whose link count cannot be read counts as linked: unknown is not "one".
      if (h == INVALID_HANDLE_VALUE) {
        found.push_back(child + " (link count unreadable)");
        continue;
      }
      BY_HANDLE_FILE_INFORMATION info{};
      if (!GetFileInformationByHandle(h, &info) || info.nNumberOfLinks > 1) found.push_back(child);
      CloseHandle(h);
    } while (FindNextFileW(find, &data));
    FindClose(find);
  }
  return found;
}

}  // namespace cordon::windows::launcher
