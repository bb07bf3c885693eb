// src/windows/launcher/restricted_token.cpp — see restricted_token.h.
// windows.h (through win32.h) must precede the other Windows headers.
#include "windows/launcher/win32.h"

#include "windows/launcher/restricted_token.h"

#include <sddl.h>

#include <vector>

namespace cordon::windows::launcher {
namespace {

// GetTokenInformation into a buffer of the size it asks for.
std::vector<BYTE> token_info(HANDLE token, TOKEN_INFORMATION_CLASS cls) {
  DWORD size = 0;
  GetTokenInformation(token, cls, nullptr, 0, &size);
  if (size == 0) return {};
  std::vector<BYTE> buf(size);
  if (!GetTokenInformation(token, cls, buf.data(), size, &size)) return {};
  return buf;
}

// The SID `text` names in `own`'s context ("{user}", "{logon}" or SID text),
// appended to `sids`; false when the token has no such SID ("{logon}" in a
// service's token), an error when it cannot be read.
result<bool> add_restricting_sid(HANDLE own, const std::string& text, std::vector<win32::local_ptr<void>>& sids) {
  PSID found = nullptr;
  std::vector<BYTE> info;
  if (text == "{user}") {
    info = token_info(own, TokenUser);
    if (info.empty()) return win32::last_error("GetTokenInformation(TokenUser)");
    found = reinterpret_cast<const TOKEN_USER*>(info.data())->User.Sid;
  } else if (text == "{logon}") {
    info = token_info(own, TokenGroups);
    if (info.empty()) return win32::last_error("GetTokenInformation(TokenGroups)");
    const auto* groups = reinterpret_cast<const TOKEN_GROUPS*>(info.data());
    for (DWORD i = 0; i < groups->GroupCount; ++i) {
      if ((groups->Groups[i].Attributes & SE_GROUP_LOGON_ID) == SE_GROUP_LOGON_ID) found = groups->Groups[i].Sid;
    }
    if (found == nullptr) return false;
  } else {
    PSID sid = nullptr;
    if (!ConvertStringSidToSidW(win32::widen(text).c_str(), &sid)) {
      return win32::last_error("ConvertStringSidToSidW(" + text + ")");
    }
    sids.emplace_back(sid);
    return true;
  }
  // A copy the list owns (the token's buffer goes away).
  const DWORD length = GetLengthSid(found);
  void* copy = LocalAlloc(LMEM_FIXED, length);
  if (copy == nullptr || !CopySid(length, copy, found)) {
    if (copy != nullptr) LocalFree(copy);
    return win32::last_error("CopySid(" + text + ")");
  }
  sids.emplace_back(copy);
  return true;
}

// TokenIntegrityLevel = low (S-1-16-4096) on `token`.
result<void> lower_to_low_integrity(HANDLE token) {
  PSID low = nullptr;
  if (!ConvertStringSidToSidW(L"S-1-16-4096", &low)) return win32::last_error("ConvertStringSidToSidW(S-1-16-4096)");
  win32::local_ptr<void> own_low(low);
  TOKEN_MANDATORY_LABEL label{};
  label.Label.Sid = low;
  label.Label.Attributes = SE_GROUP_INTEGRITY;
  if (!SetTokenInformation(token, TokenIntegrityLevel, &label, sizeof label + GetLengthSid(low))) {
    return win32::last_error("SetTokenInformation(TokenIntegrityLevel, low)");
  }
  return ok;
}

}  // namespace

result<win32::unique_handle> create_restricted_token(const token_spec& spec) {
  HANDLE self = nullptr;
  if (!OpenProcessToken(GetCurrentProcess(), TOKEN_DUPLICATE | TOKEN_QUERY | TOKEN_ASSIGN_PRIMARY | TOKEN_ADJUST_DEFAULT,
                        &self)) {
    return win32::last_error("OpenProcessToken");
  }
  win32::unique_handle own(self);
  std::vector<win32::local_ptr<void>> sids;
  std::vector<SID_AND_ATTRIBUTES> disable;
  for (const auto& text : spec.deny_only_sids) {
    PSID sid = nullptr;
    if (!ConvertStringSidToSidW(win32::widen(text).c_str(), &sid)) return win32::last_error("ConvertStringSidToSidW(" + text + ")");
    sids.emplace_back(sid);
    disable.push_back({sid, 0});
  }
  std::vector<win32::local_ptr<void>> restricting_sids;
  std::vector<SID_AND_ATTRIBUTES> restrict;
  if (spec.low_integrity) {
    for (const auto& text : spec.restricting_sids) {
      auto added = add_restricting_sid(own.get(), text, restricting_sids);
      if (!added) return std::move(added).error_value();
    }
    for (const auto& sid : restricting_sids) restrict.push_back({sid.get(), 0});
  }
  HANDLE restricted = nullptr;
  const DWORD flags = spec.disable_max_privilege ? DISABLE_MAX_PRIVILEGE : 0;
  if (!CreateRestrictedToken(own.get(), flags, static_cast<DWORD>(disable.size()), disable.data(), 0, nullptr,
                             static_cast<DWORD>(restrict.size()), restrict.empty() ? nullptr : restrict.data(),
                             &restricted)) {
    return win32::last_error("CreateRestrictedToken");
  }
  win32::unique_handle token(restricted);
  if (spec.low_integrity) {
    if (auto lowered = lower_to_low_integrity(token.get()); !lowered) return std::move(lowered).error_value();
  }
  return token;
}

token_readback read_back_token(HANDLE token) {
  token_readback r;
  auto privs = token_info(token, TokenPrivileges);
  auto groups = token_info(token, TokenGroups);
  auto integrity = token_info(token, TokenIntegrityLevel);
  DWORD is_ac = 0, size = 0;
  const bool ac_ok = GetTokenInformation(token, TokenIsAppContainer, &is_ac, sizeof is_ac, &size) != 0;
  r.read = !privs.empty() && !groups.empty() && !integrity.empty() && ac_ok;
  if (!privs.empty()) {
    const auto* tp = reinterpret_cast<const TOKEN_PRIVILEGES*>(privs.data());
    r.only_change_notify = true;
    for (DWORD i = 0; i < tp->PrivilegeCount; ++i) {
      LUID luid = tp->Privileges[i].Luid;
      wchar_t name[128];
      DWORD len = 128;
      std::string n = LookupPrivilegeNameW(nullptr, &luid, name, &len) ? win32::narrow(name) : "(unknown)";
      if (n != "SeChangeNotifyPrivilege") r.only_change_notify = false;
      r.privileges.push_back(n);
    }
  }
  if (!groups.empty()) {
    const auto* tg = reinterpret_cast<const TOKEN_GROUPS*>(groups.data());
    PSID admins = nullptr;
    ConvertStringSidToSidW(L"S-1-5-32-544", &admins);
    win32::local_ptr<void> own_admins(admins);
    r.administrators_deny_only = true;
    for (DWORD i = 0; i < tg->GroupCount; ++i) {
      if (admins != nullptr && EqualSid(tg->Groups[i].Sid, admins) &&
          (tg->Groups[i].Attributes & SE_GROUP_USE_FOR_DENY_ONLY) == 0) {
        r.administrators_deny_only = false;
      }
    }
  }
  if (!integrity.empty()) {
    const auto* label = reinterpret_cast<const TOKEN_MANDATORY_LABEL*>(integrity.data());
    const UCHAR count = *GetSidSubAuthorityCount(label->Label.Sid);
    r.integrity_rid = count > 0 ? *GetSidSubAuthority(label->Label.Sid, count - 1u) : 0;
  }
  r.appcontainer = ac_ok && is_ac != 0;
  r.restricted = IsTokenRestricted(token) != 0;
  std::string line = "token: " + std::to_string(r.privileges.size()) + " privileges";
  line += r.only_change_notify ? " (SeChangeNotify only)" : " (more than SeChangeNotify)";
  line += r.administrators_deny_only ? ", Administrators deny-only" : ", Administrators enabled";
  char il[32];
  std::snprintf(il, sizeof il, ", integrity 0x%lx", static_cast<unsigned long>(r.integrity_rid));
  line += il;
  line += r.appcontainer ? ", AppContainer" : ", not an AppContainer";
  line += r.restricted ? ", restricting SIDs" : ", no restricting SIDs";
  if (!ac_ok) line += " (TokenIsAppContainer unreadable)";
  r.lines.push_back(line);
  return r;
}

}  // namespace cordon::windows::launcher
