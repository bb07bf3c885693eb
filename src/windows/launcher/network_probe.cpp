// src/windows/launcher/network_probe.cpp — see network_probe.h.
// winsock2.h must precede windows.h (through win32.h).
#include <winsock2.h>
#include <ws2tcpip.h>

#include "windows/launcher/network_probe.h"

#include <vector>

namespace cordon::windows::launcher {
namespace {

constexpr DWORD probe_wait_ms = 15000;

// The one owner of a socket.
class unique_socket {
 public:
  explicit unique_socket(SOCKET s) : s_(s) {}
  unique_socket(const unique_socket&) = delete;
  unique_socket& operator=(const unique_socket&) = delete;
  ~unique_socket() {
    if (s_ != INVALID_SOCKET) closesocket(s_);
  }
  SOCKET get() const noexcept { return s_; }
  explicit operator bool() const noexcept { return s_ != INVALID_SOCKET; }

 private:
  SOCKET s_;
};

struct winsock {
  bool ok = false;
  winsock() {
    WSADATA data{};
    ok = WSAStartup(MAKEWORD(2, 2), &data) == 0;
  }
  ~winsock() {
    if (ok) WSACleanup();
  }
  winsock(const winsock&) = delete;
  winsock& operator=(const winsock&) = delete;
};

connect_probe_observation not_run(std::string reason) {
  connect_probe_observation o;
  o.reason = std::move(reason);
  return o;
}

std::string wsa_step(const char* step) { return std::string(step) + " failed with WSA error " + std::to_string(WSAGetLastError()); }

// True when a connection waits in the listener's backlog (select, no wait).
bool pending_connection(SOCKET listener) {
  fd_set readable;
  FD_ZERO(&readable);
  FD_SET(listener, &readable);
  timeval none{0, 0};
  return select(0, &readable, nullptr, nullptr, &none) > 0 && FD_ISSET(listener, &readable);
}

// The probe process, suspended, in the AppContainer, no handles inherited,
// started in `directory` (the system directory, which every AppContainer may
// read: the launcher's own may not be).
result<PROCESS_INFORMATION> start_probe(HANDLE token, PSID sid, const std::wstring& image, std::wstring& line,
                                        const std::wstring& directory) {
  SIZE_T size = 0;
  InitializeProcThreadAttributeList(nullptr, 1, 0, &size);
  std::vector<unsigned char> storage(size);
  auto* list = reinterpret_cast<LPPROC_THREAD_ATTRIBUTE_LIST>(storage.data());
  if (!InitializeProcThreadAttributeList(list, 1, 0, &size)) return win32::last_error("InitializeProcThreadAttributeList(probe)");
  SECURITY_CAPABILITIES caps{};
  caps.AppContainerSid = sid;
  caps.Capabilities = nullptr;  // as the command: no network capability
  caps.CapabilityCount = 0;
  if (!UpdateProcThreadAttribute(list, 0, PROC_THREAD_ATTRIBUTE_SECURITY_CAPABILITIES, &caps, sizeof caps, nullptr,
                                 nullptr)) {
    const error e = win32::last_error("UpdateProcThreadAttribute(probe SECURITY_CAPABILITIES)");
    DeleteProcThreadAttributeList(list);
    return e;
  }
  STARTUPINFOEXW si{};
  si.StartupInfo.cb = sizeof si;
  si.lpAttributeList = list;
  PROCESS_INFORMATION pi{};
  const DWORD flags = CREATE_SUSPENDED | EXTENDED_STARTUPINFO_PRESENT | CREATE_NO_WINDOW;
  const BOOL started =
      CreateProcessAsUserW(token, image.c_str(), line.data(), nullptr, nullptr, FALSE, flags, nullptr,
                           directory.c_str(), &si.StartupInfo, &pi);
  const DWORD code = GetLastError();
  DeleteProcThreadAttributeList(list);
  if (!started) return win32::last_error("CreateProcessAsUserW(network probe)", code);
  return pi;
}

}  // namespace

connect_probe_observation probe_appcontainer_connect(HANDLE token, PSID appcontainer_sid) {
  wchar_t system[MAX_PATH];
  const UINT n = GetSystemDirectoryW(system, MAX_PATH);
  if (n == 0 || n >= MAX_PATH) return not_run(win32::last_error("GetSystemDirectoryW").message);
  const std::string image = win32::narrow(std::wstring_view(system, n)) + "\\curl.exe";
  const DWORD attributes = GetFileAttributesW(win32::widen(image).c_str());
  if (attributes == INVALID_FILE_ATTRIBUTES || (attributes & FILE_ATTRIBUTE_DIRECTORY) != 0) {
    return not_run("no " + image);
  }
  winsock ws;
  if (!ws.ok) return not_run("WSAStartup failed");
  unique_socket listener(socket(AF_INET, SOCK_STREAM, IPPROTO_TCP));
  if (!listener) return not_run(wsa_step("socket"));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  int length = sizeof address;
  if (bind(listener.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) return not_run(wsa_step("bind"));
  if (listen(listener.get(), 4) != 0) return not_run(wsa_step("listen"));
  if (getsockname(listener.get(), reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    return not_run(wsa_step("getsockname"));
  }
  connect_probe_observation o;
  o.target = "127.0.0.1:" + std::to_string(ntohs(address.sin_port));
  // -q: no .curlrc; --noproxy: a proxy in the environment would be connected to instead.
  std::wstring line =
      win32::widen("\"" + image + "\" -q --noproxy 127.0.0.1 --silent --connect-timeout 5 http://" + o.target + "/");

  // The probe dies with this job, whatever happens here.
  win32::unique_handle job(CreateJobObjectW(nullptr, nullptr));
  if (!job) return not_run(win32::last_error("CreateJobObjectW(probe)").message);
  JOBOBJECT_EXTENDED_LIMIT_INFORMATION limits{};
  limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
  if (!SetInformationJobObject(job.get(), JobObjectExtendedLimitInformation, &limits, sizeof limits)) {
    return not_run(win32::last_error("SetInformationJobObject(probe)").message);
  }
  auto pi = start_probe(token, appcontainer_sid, win32::widen(image), line, std::wstring(system, n));
  if (!pi) {
    o.reason = pi.error_value().message;
    return o;
  }
  win32::unique_handle process(pi->hProcess), thread(pi->hThread);
  if (!AssignProcessToJobObject(job.get(), process.get()) || ResumeThread(thread.get()) == static_cast<DWORD>(-1)) {
    o.reason = win32::last_error("start the network probe").message;
    TerminateProcess(process.get(), 1);
    return o;
  }
  o.ran = true;
  if (WaitForSingleObject(process.get(), probe_wait_ms) != WAIT_OBJECT_0) {
    o.timed_out = true;
    TerminateJobObject(job.get(), 1);
    WaitForSingleObject(process.get(), 5000);
  }
  DWORD code = 0;
  GetExitCodeProcess(process.get(), &code);
  o.exit_code = code;
  o.connect_failed = !o.timed_out && curl_connect_failed(code);
  o.listener_saw_connection = pending_connection(listener.get());
  return o;
}

}  // namespace cordon::windows::launcher
