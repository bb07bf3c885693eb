// src/windows/low_integrity.h — the low-integrity fallback where the host has
// no AppContainer (docs/windows-backend.md, "Without an AppContainer"): the
// command runs with a restricted token at low integrity, and the policy's
// writable roots get a low mandatory label so that it can write there and
// nowhere else a medium label (or none, which Windows reads as medium) guards.
#pragma once

#include <string>
#include <vector>

#include "cordon/windows/plan.h"
#include "windows/acl_plan.h"

namespace cordon::windows::detail {

// The fallback's label changes, in the AppContainer decision's precedence
// and with its checks (roots exist, no reparse point, persistent ACLs, no
// hard-linked file reached by a writable root): each writable root a `low`
// label; each denied or protected path inside a labelled root a `medium`
// label (it stops the inherited low one). Readable roots and denials outside
// every labelled root need no change (notes): low integrity reads up, and
// writes up are already refused by no-write-up.
acl_decision decide_label_changes(const std::vector<acl_entry>& entries, const host_facts& facts);

// The restricted token's SidsToRestrict, as Chromium's sandbox builds its
// interactive restricted token: the user and logon SIDs ("{user}",
// "{logon}", resolved at launch), Everyone, BUILTIN\Users and RESTRICTED.
std::vector<std::string> fallback_restricting_sids();

// The plan and report warning that names the fallback and what it does not
// confine.
std::string fallback_warning();

}  // namespace cordon::windows::detail
