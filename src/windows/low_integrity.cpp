// src/windows/low_integrity.cpp — see low_integrity.h.
#include "windows/low_integrity.h"

#include <algorithm>

#include "windows/paths.h"

namespace cordon::windows::detail {

acl_decision decide_label_changes(const std::vector<acl_entry>& entries, const host_facts& facts) {
  std::vector<acl_entry> labelled;
  std::vector<acl_note> notes;
  for (const auto& e : entries) {
    if (e.role == acl_role::readable) {
      notes.push_back({e.path, e.source, "low integrity does not limit reads: no change (filesystem_read not enforced)"});
    } else {
      labelled.push_back(e);
    }
  }
  acl_decision decided = decide_acl_changes(labelled, facts);
  acl_decision out;
  out.blockers = std::move(decided.blockers);
  out.notes = std::move(notes);
  out.notes.insert(out.notes.end(), decided.notes.begin(), decided.notes.end());
  std::vector<std::string> writable;
  for (const auto& c : decided.changes) {
    if (c.role == acl_role::writable) writable.push_back(c.path);
  }
  for (auto& c : decided.changes) {
    c.aces.clear();
    c.protect_dacl = false;
    c.mask_package_allows = false;
    if (c.role == acl_role::writable) {
      c.label = mandatory_label::low;
    } else {
      const bool inside =
          std::any_of(writable.begin(), writable.end(), [&](const std::string& w) { return is_within(c.path, w); });
      if (!inside) {
        out.notes.push_back({c.path, c.source,
                             "outside every labelled root: low integrity cannot write it (no-write-up); reads "
                             "are not limited"});
        continue;
      }
      c.label = mandatory_label::medium;
    }
    out.changes.push_back(std::move(c));
  }
  return out;
}

std::vector<std::string> fallback_restricting_sids() {
  return {"{user}", "{logon}", "S-1-1-0", "S-1-5-32-545", "S-1-5-12"};
}

std::string fallback_warning() {
  return "no AppContainer on this host: low-integrity fallback (restricted token at integrity S-1-16-4096, writable "
         "roots given a low mandatory label for the run); it confines writes only: reads, the network and denied "
         "paths' contents are not confined";
}

}  // namespace cordon::windows::detail
