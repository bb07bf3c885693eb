// src/windows/launcher/restricted_token.h — the child's token: privileges
// removed, Administrators deny-only; and what a token reads back as.
#pragma once

#include <string>
#include <vector>

#include "cordon/windows/plan.h"
#include "windows/launcher/win32.h"

namespace cordon::windows::launcher {

// CreateRestrictedToken(DISABLE_MAX_PRIVILEGE, SidsToDisable) from this
// process's token; for the low-integrity fallback (spec.low_integrity) also
// SidsToRestrict (spec.restricting_sids: "{user}" is the token's user SID,
// "{logon}" its logon SID, skipped when it has none) and TokenIntegrityLevel
// S-1-16-4096. Errors: launch_failed naming the failing call.
result<win32::unique_handle> create_restricted_token(const token_spec& spec);

struct token_readback {
  bool read = false;                  // every query below succeeded
  std::vector<std::string> privileges;  // names still present
  bool only_change_notify = false;    // privileges == {SeChangeNotifyPrivilege} or none
  bool administrators_deny_only = false;  // absent, or SE_GROUP_USE_FOR_DENY_ONLY
  bool appcontainer = false;          // TokenIsAppContainer
  bool restricted = false;            // IsTokenRestricted: it carries restricting SIDs
  DWORD integrity_rid = 0;            // e.g. 0x1000 low, 0x2000 medium, 0x3000 high
  std::vector<std::string> lines;
};

token_readback read_back_token(HANDLE token);

}  // namespace cordon::windows::launcher
