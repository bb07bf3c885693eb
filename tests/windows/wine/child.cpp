// tests/windows/wine/child.cpp — the program the wine tests launch. Each mode
// prints what the child itself observes, so a test compares the parent's
// intent with the child's view:
//   argv ARGS...       each argument on its own line (CommandLineToArgvW)
//   env                every environment entry, one per line
//   token              in-job, Administrators state, privileges, AppContainer
//   err TEXT           TEXT on stderr
//   exit N             exit with N
//   sleep MS           sleep
//   spawn MS           start "sleep MS" as a grandchild, print its pid, sleep MS
//   spawn-exit MS      start "sleep MS", print its pid, exit at once
//   write PATH         create PATH
//   handle VALUE       is VALUE (decimal) a valid handle here?
//   read PATH          open PATH for reading and print "read ok" or "read failed N"
//   connect IP PORT    TCP connect to an IPv4 address; "connect ok" or "connect failed N"
//                      (scripts/windows-ci.ps1's AppContainer network probes)
#include <winsock2.h>
#include <ws2tcpip.h>
#include <windows.h>
#include <shellapi.h>
#include <sddl.h>

#include <cstdio>
#include <cwchar>
#include <string>

namespace {

std::wstring self() {
  wchar_t buf[MAX_PATH];
  GetModuleFileNameW(nullptr, buf, MAX_PATH);
  return buf;
}

DWORD spawn_sleeper(const wchar_t* ms) {
  std::wstring line = L"child sleep " + std::wstring(ms);
  STARTUPINFOW si{};
  si.cb = sizeof si;
  PROCESS_INFORMATION pi{};
  if (!CreateProcessW(self().c_str(), line.data(), nullptr, nullptr, FALSE, 0, nullptr, nullptr, &si, &pi)) return 0;
  CloseHandle(pi.hThread);
  CloseHandle(pi.hProcess);
  return pi.dwProcessId;
}

int read_file(const wchar_t* path) {
  HANDLE f = CreateFileW(path, GENERIC_READ, FILE_SHARE_READ, nullptr, OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, nullptr);
  if (f == INVALID_HANDLE_VALUE) {
    std::printf("read failed %lu\n", GetLastError());
    return 1;
  }
  CloseHandle(f);
  std::printf("read ok\n");
  return 0;
}

int connect_to(const wchar_t* ip, const wchar_t* port) {
  WSADATA wsa;
  if (WSAStartup(MAKEWORD(2, 2), &wsa) != 0) {
    std::printf("connect failed wsastartup\n");
    return 1;
  }
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<u_short>(_wtoi(port)));
  if (InetPtonW(AF_INET, ip, &to.sin_addr) != 1) return 2;
  SOCKET s = socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);
  if (s == INVALID_SOCKET) {
    std::printf("connect failed %d\n", WSAGetLastError());
    return 1;
  }
  const int r = connect(s, reinterpret_cast<const sockaddr*>(&to), sizeof to);
  const int err = WSAGetLastError();
  closesocket(s);
  if (r != 0) {
    std::printf("connect failed %d\n", err);
    return 1;
  }
  std::printf("connect ok\n");
  return 0;
}

int token() {
  BOOL in_job = FALSE;
  IsProcessInJob(GetCurrentProcess(), nullptr, &in_job);
  HANDLE t = nullptr;
  OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &t);
  DWORD size = 0;
  GetTokenInformation(t, TokenGroups, nullptr, 0, &size);
  std::string groups(size, '\0');
  GetTokenInformation(t, TokenGroups, groups.data(), size, &size);
  PSID admins = nullptr;
  ConvertStringSidToSidW(L"S-1-5-32-544", &admins);
  const char* admin_state = "absent";
  const auto* tg = reinterpret_cast<const TOKEN_GROUPS*>(groups.data());
  for (DWORD i = 0; i < tg->GroupCount; ++i) {
    if (EqualSid(tg->Groups[i].Sid, admins)) {
      admin_state = (tg->Groups[i].Attributes & SE_GROUP_USE_FOR_DENY_ONLY) ? "deny-only" : "enabled";
    }
  }
  GetTokenInformation(t, TokenPrivileges, nullptr, 0, &size);
  std::string privs(size, '\0');
  GetTokenInformation(t, TokenPrivileges, privs.data(), size, &size);
  DWORD ac = 0;
  const BOOL ac_ok = GetTokenInformation(t, TokenIsAppContainer, &ac, sizeof ac, &size);
  std::printf("in_job=%d\nadministrators=%s\nprivileges=%lu\nappcontainer=%s\n", in_job ? 1 : 0, admin_state,
              static_cast<unsigned long>(reinterpret_cast<const TOKEN_PRIVILEGES*>(privs.data())->PrivilegeCount),
              ac_ok ? (ac ? "1" : "0") : "unreadable");
  return 0;
}

}  // namespace

int wmain(int, wchar_t**) {
  int argc = 0;
  wchar_t** argv = CommandLineToArgvW(GetCommandLineW(), &argc);
  if (argc < 2) return 2;
  const std::wstring mode = argv[1];
  if (mode == L"argv") {
    for (int i = 2; i < argc; ++i) {
      char buf[4096];
      WideCharToMultiByte(CP_UTF8, 0, argv[i], -1, buf, sizeof buf, nullptr, nullptr);
      std::printf("%s\n", buf);
    }
  } else if (mode == L"env") {
    wchar_t* block = GetEnvironmentStringsW();
    for (const wchar_t* p = block; *p != 0; p += std::wcslen(p) + 1) {
      char buf[8192];
      WideCharToMultiByte(CP_UTF8, 0, p, -1, buf, sizeof buf, nullptr, nullptr);
      std::printf("%s\n", buf);
    }
  } else if (mode == L"token") {
    return token();
  } else if (mode == L"err" && argc > 2) {
    std::fwprintf(stderr, L"%ls\n", argv[2]);
  } else if (mode == L"exit" && argc > 2) {
    return _wtoi(argv[2]);
  } else if (mode == L"sleep" && argc > 2) {
    Sleep(static_cast<DWORD>(_wtoi(argv[2])));
  } else if ((mode == L"spawn" || mode == L"spawn-exit") && argc > 2) {
    std::printf("grandchild=%lu\n", static_cast<unsigned long>(spawn_sleeper(argv[2])));
    std::fflush(stdout);
    if (mode == L"spawn") Sleep(static_cast<DWORD>(_wtoi(argv[2])));
  } else if (mode == L"write" && argc > 2) {
    HANDLE f = CreateFileW(argv[2], GENERIC_WRITE, 0, nullptr, CREATE_ALWAYS, 0, nullptr);
    if (f == INVALID_HANDLE_VALUE) {
      std::printf("write failed %lu\n", GetLastError());
      return 1;
    }
    CloseHandle(f);
  } else if (mode == L"handle" && argc > 2) {
    DWORD flags = 0;
    HANDLE h = reinterpret_cast<HANDLE>(static_cast<ULONG_PTR>(_wtoi64(argv[2])));
    std::printf("valid=%d\n", GetHandleInformation(h, &flags) ? 1 : 0);
  } else if (mode == L"read" && argc > 2) {
    return read_file(argv[2]);
  } else if (mode == L"connect" && argc > 3) {
    return connect_to(argv[2], argv[3]);
  } else {
    return 2;
  }
  std::fflush(stdout);
  return 0;
}
