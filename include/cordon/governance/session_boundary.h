// cordon/governance/session_boundary.h — the sandbox policy a session runs
// under, with a revision that only grows (docs/governance.md, "Session
// boundary").
//
// A session starts with a boundary (a sandbox policy) at revision 1. The
// boundary can only grow: a growth adds readable or writable paths, allowed
// hosts or passed-through environment names, nothing else, so no revision is
// ever narrower than the one before it. Each growth is a request made against
// a revision: one made against an old revision is rejected (the caller must
// look at the current boundary again); the grown policy must compile on this
// host (what cannot be enforced is refused before anyone is asked); an
// approval service shown the grown plan's levels must approve it; and every
// step is audited (module "session": boundary.rejected, boundary.refused,
// boundary.approval, boundary.grown).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cordon/governance/approval.h"
#include "cordon/governance/audit.h"
#include "cordon/governance/runtime.h"
#include "cordon/policy.h"
#include "cordon/result.h"

namespace cordon::governance {

enum class growth_kind { readable, writable, hosts, environment };
std::string_view to_string(growth_kind k) noexcept;
std::optional<growth_kind> growth_kind_from_string(std::string_view s) noexcept;

struct boundary_growth {
  std::uint64_t base_revision = 0;  // the revision the requester saw
  growth_kind kind = growth_kind::readable;
  // Paths (absolute or starting with {workspace}/{home}), "HOST[:PORT]"
  // allow rules (a `denied` network becomes `filtered` with these rules), or
  // variable names.
  std::vector<std::string> values;
  std::string reason;               // why the session needs it (shown to the approver)
  std::string subject_id;
};

struct boundary_revision {
  std::uint64_t revision = 0;
  std::string policy_digest;
  std::string growth;        // e.g. "writable: /work/out", empty for revision 1
  std::string approver;
  std::string reason;
  std::string timestamp;
};

enum class growth_status { grown, rejected, refused, denied };
std::string_view to_string(growth_status s) noexcept;

struct growth_result {
  growth_status status = growth_status::rejected;
  std::string reason;
  std::uint64_t revision = 0;  // the boundary's revision after the call
};

class session_boundary {
 public:
  // Errors: invalid_policy when `initial` does not validate.
  static result<session_boundary> create(std::string session_id, std::string workspace, sandbox_policy initial);

  const std::string& session_id() const noexcept { return session_id_; }
  const std::string& workspace() const noexcept { return workspace_; }
  std::uint64_t revision() const noexcept { return history_.size(); }
  const sandbox_policy& policy() const noexcept { return policy_; }
  const std::vector<boundary_revision>& history() const noexcept { return history_; }

  // The runtime's context for requests in this session, at the current revision.
  execution_context context(backend_preference backend = backend_preference::auto_select) const;

  // Grows the boundary (see the top of this file). `approvals` null: rejected.
  // An audit failure rejects the growth. Never throws except bad_alloc.
  growth_result grow(const boundary_growth& growth, approval_service* approvals, audit_sink& audit);

  // The session file: id, workspace, policy, history, and the approval ledger
  // that the CLI keeps with it.
  std::string to_json(const approval_ledger& ledger) const;
  // Errors: parse_error, invalid_policy (location = JSON pointer).
  static result<std::pair<session_boundary, approval_ledger>> from_json(std::string_view text);

 private:
  std::string session_id_;
  std::string workspace_;
  sandbox_policy policy_;
  std::vector<boundary_revision> history_;
};

}  // namespace cordon::governance
