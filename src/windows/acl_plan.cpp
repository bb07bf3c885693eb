// src/windows/acl_plan.cpp — see acl_plan.h.
#include "windows/acl_plan.h"

#include <algorithm>

#include "windows/paths.h"

namespace cordon::windows::detail {
namespace {

int strength(acl_role role) {
  switch (role) {
    case acl_role::denied: return 3;
    case acl_role::protected_read_only: return 2;
    case acl_role::writable: return 1;
    case acl_role::readable: return 0;
  }
  return 0;
}

bool is_grant(acl_role role) { return role == acl_role::readable || role == acl_role::writable; }

control control_of(acl_role role) {
  switch (role) {
    case acl_role::readable: return control::filesystem_read;
    case acl_role::writable: return control::filesystem_write;
    default: return control::filesystem_deny;
  }
}

blocker path_blocker(blocker_code code, const acl_entry& e, std::string subject, std::string reason) {
  return make_windows_blocker(code, control_of(e.role), std::move(subject), std::move(reason) + " (" + e.source + ")");
}

// Facts for a path the launcher creates ({run_tmp}): its parent's, as a fresh directory.
path_facts facts_of(const acl_entry& e, const host_facts& facts) {
  if (e.created_at_launch) return path_facts{true, true, false, 1, {}, false};
  if (auto f = find_path(facts, e.path)) return *f;
  if (facts.reference_shape) return path_facts{true, true, false, 1, {}, false};
  return {};
}

// Every existing component of `path` (the path itself included) must be a
// plain file or directory, and the path must sit on a volume whose ACLs persist.
void check_location(const acl_entry& e, const host_facts& facts, acl_decision& out) {
  for (const auto& step : ancestors_and_self(e.path)) {
    if (e.created_at_launch && same_path(step, e.path)) continue;
    auto f = find_path(facts, step);
    if (f && f->reparse_point) {
      out.blockers.push_back(path_blocker(blocker_code::root_reparse_point, e, step,
                                          "is a reparse point (symbolic link, junction or mount point)"));
      return;
    }
  }
  const volume_facts* volume = find_volume(facts, e.path);
  if (volume == nullptr) {
    out.blockers.push_back(path_blocker(blocker_code::root_volume_unknown, e, e.path, "is on no known local volume"));
  } else if (!volume->persistent_acls) {
    out.blockers.push_back(path_blocker(blocker_code::root_acls_not_persistent, e, e.path,
                                        "volume " + volume->root + " (" + volume->filesystem +
                                            ") keeps no persistent ACLs"));
  }
}

}  // namespace

std::vector<ace_spec> aces_for(acl_role role, bool directory, bool readable) {
  const bool inherit = directory;
  switch (role) {
    case acl_role::readable:
      return {{trustee::appcontainer, true, access::read_execute, inherit, false}};
    case acl_role::writable: {
      std::vector<ace_spec> aces{{trustee::appcontainer, true, access::read_execute | access::data_write, inherit, false}};
      // Self-delete for what lies below the root, never for the root itself,
      // and never FILE_DELETE_CHILD, WRITE_DAC or WRITE_OWNER.
      if (directory) aces.push_back({trustee::appcontainer, true, access::delete_self, true, true});
      return aces;
    }
    case acl_role::protected_read_only: {
      constexpr std::uint32_t no_change = access::data_write | access::delete_self | access::delete_child |
                                          access::write_dac | access::write_owner;
      std::vector<ace_spec> aces{{trustee::appcontainer, false, no_change, inherit, false},
                                 {trustee::all_application_packages, false, no_change, inherit, false},
                                 {trustee::all_restricted_application_packages, false, no_change, inherit, false}};
      if (readable) aces.push_back({trustee::appcontainer, true, access::read_execute, inherit, false});
      return aces;
    }
    case acl_role::denied:
      return {{trustee::appcontainer, false, access::all, inherit, false},
              {trustee::all_application_packages, false, access::all, inherit, false},
              {trustee::all_restricted_application_packages, false, access::all, inherit, false}};
  }
  return {};
}

acl_decision decide_acl_changes(const std::vector<acl_entry>& entries, const host_facts& facts) {
  acl_decision out;
  std::vector<const acl_entry*> applied;
  for (const auto& e : entries) {
    // The strongest other entry covering this path decides it when it is at least as strong.
    const acl_entry* cover = nullptr;
    for (const auto& other : entries) {
      if (&other == &e || !is_within(e.path, other.path)) continue;
      if (strength(other.role) < strength(e.role)) continue;
      // Of two identical entries (same path, same role), the first one applies.
      if (same_path(other.path, e.path) && other.role == e.role && &other > &e) continue;
      if (cover == nullptr || strength(other.role) > strength(cover->role)) cover = &other;
    }
    if (cover != nullptr) {
      out.notes.push_back({e.path, e.source,
                           "decided by " + std::string(to_string(cover->role)) + " " + cover->path + " (" +
                               cover->source + ")"});
      continue;
    }
    applied.push_back(&e);
  }

  for (const acl_entry* e : applied) {
    const path_facts f = facts_of(*e, facts);
    if (!f.exists) {
      if (is_grant(e->role)) {
        out.blockers.push_back(path_blocker(blocker_code::root_missing, *e, e->path, "does not exist"));
        continue;
      }
      const bool inside_writable = std::any_of(applied.begin(), applied.end(), [&](const acl_entry* w) {
        return w->role == acl_role::writable && is_within(e->path, w->path);
      });
      if (inside_writable) {
        out.blockers.push_back(path_blocker(blocker_code::absent_inside_writable, *e, e->path,
                                            "does not exist inside a writable root, so the command could "
                                            "create it unprotected; create it first"));
      } else {
        out.notes.push_back({e->path, e->source, "does not exist, and no writable root contains it"});
      }
      continue;
    }
    check_location(*e, facts, out);
    if (is_grant(e->role)) {
      if (!f.directory && f.link_count > 1) {
        out.blockers.push_back(path_blocker(blocker_code::hard_links, *e, e->path,
                                            "has " + std::to_string(f.link_count) +
                                                " hard links; a grant would reach every alias"));
      }
      // Hard-linked files the gatherer's scan found, and any the facts list below the root.
      std::vector<std::string> linked_files = f.multi_link_descendants;
      for (const auto& [path, pf] : facts.paths) {
        if (!pf.directory && pf.link_count > 1 && !same_path(path, e->path) && is_within(path, e->path)) {
          linked_files.push_back(path);
        }
      }
      for (const auto& linked : linked_files) {
        // A file inside a denied or protected subtree gets no inherited grant.
        const bool sheltered = std::any_of(applied.begin(), applied.end(), [&](const acl_entry* d) {
          return !is_grant(d->role) && is_within(d->path, e->path) && is_within(linked, d->path);
        });
        if (!sheltered) {
          out.blockers.push_back(path_blocker(blocker_code::hard_links, *e, linked,
                                              "has more than one hard link; the grant on " + e->path +
                                                  " would reach its aliases"));
        }
      }
      if (f.scan_truncated) {
        out.blockers.push_back(path_blocker(blocker_code::scan_truncated, *e, e->path,
                                            "too large to scan for hard-linked files; name smaller roots"));
      }
    }
    acl_change change;
    change.path = e->path;
    change.role = e->role;
    change.directory = f.directory;
    change.created_at_launch = e->created_at_launch;
    change.protect_dacl = !is_grant(e->role);
    change.mask_package_allows = !is_grant(e->role);
    const bool granted = std::any_of(applied.begin(), applied.end(), [&](const acl_entry* g) {
      return is_grant(g->role) && is_within(e->path, g->path);
    });
    change.aces = aces_for(e->role, f.directory, granted);
    change.source = e->source;
    out.changes.push_back(std::move(change));
  }
  // Parents first: a descendant's protected DACL is set after its ancestors'
  // inheritable grants have propagated, so the grant cannot overwrite it.
  std::stable_sort(out.changes.begin(), out.changes.end(),
                   [](const acl_change& a, const acl_change& b) { return depth(a.path) < depth(b.path); });
  return out;
}

}  // namespace cordon::windows::detail
