// src/windows/acl_plan.h — the DACL lease set: which paths get which ACEs,
// decided in the policy's precedence order
//   denied > protected_read_only > writable > readable > platform default
// for nested trees (docs/windows-backend.md, "ACL changes").
#pragma once

#include <string>
#include <vector>

#include "cordon/windows/compile.h"
#include "cordon/windows/host_facts.h"
#include "cordon/windows/plan.h"

namespace cordon::windows::detail {

// One resolved policy entry.
struct acl_entry {
  std::string path;    // absolute Windows path
  acl_role role = acl_role::readable;
  std::string source;  // JSON pointer of the policy entry
  bool created_at_launch = false;  // {run_tmp}
};

struct acl_decision {
  std::vector<acl_change> changes;  // parents before descendants
  std::vector<acl_note> notes;
  std::vector<blocker> blockers;
};

// Decides the changes. An entry applies only when no other entry covering it
// (the same path or an ancestor) has a role at least as strong: such an entry
// already decides the path, and applying a weaker explicit ACE below it would
// override an inherited deny. Readable and writable roots must exist; every
// applied path must have no reparse-point component, sit on a volume with
// persistent ACLs, and (for grants) not reach a file with more than one hard
// link. A denied or protected path that does not exist is a blocker inside a
// writable root (the command could create it) and a note elsewhere.
acl_decision decide_acl_changes(const std::vector<acl_entry>& entries, const host_facts& facts);

// The ACEs of each role, for a directory or a file (see plan.h's access
// masks). `readable` says whether a grant root covers the path: a protected
// path is readable only then (a protected DACL stops the grant's inherited
// ACE, so the read allow is explicit), never by being protected.
std::vector<ace_spec> aces_for(acl_role role, bool directory, bool readable = true);

}  // namespace cordon::windows::detail
