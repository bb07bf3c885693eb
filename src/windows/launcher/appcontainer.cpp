// src/windows/launcher/appcontainer.cpp — the system's AppContainer profiles,
// through userenv.dll functions resolved at run time: a direct import would
// load on hosts without them (wine) and abort the process when called.
// windows.h (through win32.h) must precede the other Windows headers.
#include "windows/launcher/win32.h"

#include <sddl.h>
#include <userenv.h>

#include "cordon/windows/launcher.h"

namespace cordon::windows {
namespace {

using create_fn = HRESULT(WINAPI*)(PCWSTR, PCWSTR, PCWSTR, PSID_AND_ATTRIBUTES, DWORD, PSID*);
using derive_fn = HRESULT(WINAPI*)(PCWSTR, PSID*);
using delete_fn = HRESULT(WINAPI*)(PCWSTR);

template <class F>
F resolve(const char* name) {
  HMODULE userenv = LoadLibraryExW(L"userenv.dll", nullptr, LOAD_LIBRARY_SEARCH_SYSTEM32);
  if (userenv == nullptr) return nullptr;
  return reinterpret_cast<F>(reinterpret_cast<void*>(GetProcAddress(userenv, name)));
}

error missing(const char* name) {
  return make_error(error_code::launch_failed,
                    std::string("AppContainer: userenv.dll does not export ") + name + "; refusing to launch without it");
}

error hresult(const char* step, HRESULT hr) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08lx", static_cast<unsigned long>(hr));
  return make_error(error_code::launch_failed, std::string("AppContainer: ") + step + " failed with HRESULT " + buf);
}

class system_provider final : public appcontainer_provider {
 public:
  result<std::string> create(const std::string& name) const override {
    auto create = resolve<create_fn>("CreateAppContainerProfile");
    auto derive = resolve<derive_fn>("DeriveAppContainerSidFromAppContainerName");
    if (create == nullptr) return missing("CreateAppContainerProfile");
    if (derive == nullptr) return missing("DeriveAppContainerSidFromAppContainerName");
    const std::wstring wname = win32::widen(name);
    PSID sid = nullptr;
    HRESULT hr = create(wname.c_str(), wname.c_str(), L"cordon sandbox run", nullptr, 0, &sid);
    if (hr == HRESULT_FROM_WIN32(ERROR_ALREADY_EXISTS)) hr = derive(wname.c_str(), &sid);
    if (FAILED(hr) || sid == nullptr) return hresult("CreateAppContainerProfile", hr);
    wchar_t* text = nullptr;
    const bool converted = ConvertSidToStringSidW(sid, &text) != 0;
    FreeSid(sid);  // the profile functions allocate with AllocateAndInitializeSid
    if (!converted) return win32::last_error("ConvertSidToStringSidW(AppContainer SID)");
    std::string out = win32::narrow(text);
    LocalFree(text);
    return out;
  }

  result<void> remove(const std::string& name) const override {
    auto remove = resolve<delete_fn>("DeleteAppContainerProfile");
    if (remove == nullptr) return missing("DeleteAppContainerProfile");
    const HRESULT hr = remove(win32::widen(name).c_str());
    if (FAILED(hr)) return hresult("DeleteAppContainerProfile", hr);
    return ok;
  }
};

}  // namespace

const appcontainer_provider& system_appcontainer_provider() {
  static const system_provider provider;
  return provider;
}

bool running_on_wine() {
  HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");
  return ntdll != nullptr && GetProcAddress(ntdll, "wine_get_version") != nullptr;
}

}  // namespace cordon::windows
