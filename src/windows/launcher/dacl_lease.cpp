// src/windows/launcher/dacl_lease.cpp — see dacl_lease.h.
// windows.h (through win32.h) must precede the other Windows headers.
#include "windows/launcher/win32.h"

#include "windows/launcher/dacl_lease.h"

#include <aclapi.h>
#include <sddl.h>

#include <cstdio>

#include "cordon/windows/launcher.h"
#include "windows/paths.h"

namespace cordon::windows::launcher {
namespace {

using win32::local_ptr;

constexpr std::size_t kStripLimit = 200000;  // entries visited when removing the AppContainer SID

struct sid_holder {
  local_ptr<void> sid;
  PSID get() const { return sid.get(); }
};

result<sid_holder> sid_from(const std::string& text) {
  PSID sid = nullptr;
  if (!ConvertStringSidToSidW(win32::widen(text).c_str(), &sid)) return win32::last_error("ConvertStringSidToSidW(" + text + ")");
  return sid_holder{local_ptr<void>(sid)};
}

std::uint64_t own_start_time() {
  FILETIME created{}, exited{}, kernel{}, user{};
  GetProcessTimes(GetCurrentProcess(), &created, &exited, &kernel, &user);
  return (static_cast<std::uint64_t>(created.dwHighDateTime) << 32) | created.dwLowDateTime;
}

// The DACL of an open object and its protection flag, as SDDL.
struct descriptor {
  local_ptr<void> sd;
  PACL dacl = nullptr;
  bool is_protected = false;
};

result<descriptor> read_dacl(HANDLE h, const std::string& path) {
  PACL dacl = nullptr;
  PSECURITY_DESCRIPTOR sd = nullptr;
  const DWORD rc = GetSecurityInfo(h, SE_FILE_OBJECT, DACL_SECURITY_INFORMATION, nullptr, nullptr, &dacl, nullptr, &sd);
  if (rc != ERROR_SUCCESS) return win32::last_error("GetSecurityInfo(" + path + ")", rc);
  descriptor d;
  d.sd.reset(sd);
  d.dacl = dacl;
  SECURITY_DESCRIPTOR_CONTROL control = 0;
  DWORD revision = 0;
  if (!GetSecurityDescriptorControl(sd, &control, &revision)) return win32::last_error("GetSecurityDescriptorControl(" + path + ")");
  d.is_protected = (control & SE_DACL_PROTECTED) != 0;
  return d;
}

result<std::string> to_sddl(const descriptor& d, const std::string& path) {
  wchar_t* text = nullptr;
  if (!ConvertSecurityDescriptorToStringSecurityDescriptorW(d.sd.get(), SDDL_REVISION_1, DACL_SECURITY_INFORMATION, &text,
                                                            nullptr)) {
    return win32::last_error("ConvertSecurityDescriptorToStringSecurityDescriptorW(" + path + ")");
  }
  std::string s = win32::narrow(text);
  LocalFree(text);
  return s;
}

result<void> set_dacl(HANDLE h, PACL dacl, bool make_protected, const std::string& path) {
  const SECURITY_INFORMATION info =
      DACL_SECURITY_INFORMATION | (make_protected ? PROTECTED_DACL_SECURITY_INFORMATION : UNPROTECTED_DACL_SECURITY_INFORMATION);
  const DWORD rc = SetSecurityInfo(h, SE_FILE_OBJECT, info, nullptr, nullptr, dacl, nullptr);
  if (rc != ERROR_SUCCESS) return win32::last_error("SetSecurityInfo(" + path + ")", rc);
  return ok;
}

// The mandatory label of an open object as SDDL: "S:(ML;...)", or "S:" when
// it has none (Windows then reads it as medium).
result<std::string> read_label_sddl(HANDLE h, const std::string& path) {
  PSECURITY_DESCRIPTOR sd = nullptr;
  PACL sacl = nullptr;
  const DWORD rc = GetSecurityInfo(h, SE_FILE_OBJECT, LABEL_SECURITY_INFORMATION, nullptr, nullptr, nullptr, &sacl, &sd);
  if (rc != ERROR_SUCCESS) return win32::last_error("GetSecurityInfo(" + path + ", label)", rc);
  local_ptr<void> own(sd);
  wchar_t* text = nullptr;
  if (!ConvertSecurityDescriptorToStringSecurityDescriptorW(sd, SDDL_REVISION_1, LABEL_SECURITY_INFORMATION, &text,
                                                            nullptr)) {
    return win32::last_error("ConvertSecurityDescriptorToStringSecurityDescriptorW(" + path + ", label)");
  }
  std::string s = win32::narrow(text);
  LocalFree(text);
  return s.rfind("S:", 0) == 0 ? s : "S:" + s;
}

// Sets the label of `h` to the one `sddl` holds ("S:" = none).
result<void> set_label_sddl(HANDLE h, const std::string& sddl, const std::string& path) {
  PSECURITY_DESCRIPTOR sd = nullptr;
  if (!ConvertStringSecurityDescriptorToSecurityDescriptorW(win32::widen(sddl).c_str(), SDDL_REVISION_1, &sd, nullptr)) {
    return win32::last_error("ConvertStringSecurityDescriptorToSecurityDescriptorW(" + path + ", label)");
  }
  local_ptr<void> own(sd);
  BOOL present = FALSE, defaulted = FALSE;
  PACL sacl = nullptr;
  if (!GetSecurityDescriptorSacl(sd, &present, &sacl, &defaulted)) return win32::last_error("GetSecurityDescriptorSacl");
  ACL empty{};
  if (!present || sacl == nullptr) {
    if (!InitializeAcl(&empty, sizeof empty, ACL_REVISION)) return win32::last_error("InitializeAcl");
    sacl = &empty;
  }
  const DWORD rc = SetSecurityInfo(h, SE_FILE_OBJECT, LABEL_SECURITY_INFORMATION, nullptr, nullptr, nullptr, sacl);
  if (rc != ERROR_SUCCESS) return win32::last_error("SetSecurityInfo(" + path + ", label)", rc);
  return ok;
}

// The SDDL of the change's label: no-write-up, inherited by files and
// directories below a directory ("LW" low, "ME" medium).
std::string label_sddl_of(const acl_change& change) {
  return std::string("S:(ML;") + (change.directory ? "OICI" : "") + ";NW;;;" +
         (change.label == mandatory_label::low ? "LW" : "ME") + ")";
}

// The label read back is the one asked for: same level, no-write-up.
bool label_read_back(const std::string& now, const acl_change& change) {
  const std::string level = change.label == mandatory_label::low ? ";;;LW)" : ";;;ME)";
  return now.find("(ML;") != std::string::npos && now.find("NW") != std::string::npos &&
         now.find(level) != std::string::npos;
}

bool is_sid(const ACE_HEADER* ace, PSID sid) {
  // EqualSid takes non-const SIDs and only reads them.
  auto* any = const_cast<ACE_HEADER*>(ace);
  if (ace->AceType == ACCESS_ALLOWED_ACE_TYPE) return EqualSid(&reinterpret_cast<ACCESS_ALLOWED_ACE*>(any)->SidStart, sid);
  if (ace->AceType == ACCESS_DENIED_ACE_TYPE) return EqualSid(&reinterpret_cast<ACCESS_DENIED_ACE*>(any)->SidStart, sid);
  return false;
}

// A copy of `original` without the ACEs `drop` rejects; with `explicit_only`
// every kept ACE loses its INHERITED flag (a protected DACL keeps the effect
// of what it inherited, now explicitly).
template <class Drop>
result<local_ptr<ACL>> copy_acl(PACL original, bool clear_inherited, Drop drop) {
  ACL_SIZE_INFORMATION size{};
  if (original != nullptr && !GetAclInformation(original, &size, sizeof size, AclSizeInformation)) {
    return win32::last_error("GetAclInformation");
  }
  const DWORD bytes = sizeof(ACL) + size.AclBytesInUse + 16;
  local_ptr<ACL> copy(static_cast<ACL*>(LocalAlloc(LPTR, bytes)));
  if (!copy || !InitializeAcl(copy.get(), bytes, ACL_REVISION)) return win32::last_error("InitializeAcl");
  for (DWORD i = 0; original != nullptr && i < size.AceCount; ++i) {
    void* ace = nullptr;
    if (!GetAce(original, i, &ace)) return win32::last_error("GetAce");
    auto* header = static_cast<ACE_HEADER*>(ace);
    if (drop(header)) continue;
    const BYTE saved = header->AceFlags;
    if (clear_inherited) header->AceFlags = static_cast<BYTE>(header->AceFlags & ~INHERITED_ACE);
    const BOOL added = AddAce(copy.get(), ACL_REVISION, MAXDWORD, ace, header->AceSize);
    header->AceFlags = saved;
    if (!added) return win32::last_error("AddAce");
  }
  return copy;
}

struct trustee_sids {
  sid_holder appcontainer, all_packages, restricted_packages;
  PSID of(trustee t) const {
    switch (t) {
      case trustee::appcontainer: return appcontainer.get();
      case trustee::all_application_packages: return all_packages.get();
      case trustee::all_restricted_application_packages: return restricted_packages.get();
    }
    return nullptr;
  }
};

// The change's new DACL from the original one (docs/windows-backend.md, "ACL changes").
result<local_ptr<ACL>> build_dacl(const descriptor& original, const acl_change& change, const trustee_sids& sids) {
  auto base = copy_acl(original.dacl, change.protect_dacl, [&](const ACE_HEADER* ace) {
    return change.mask_package_allows && ace->AceType == ACCESS_ALLOWED_ACE_TYPE &&
           (is_sid(ace, sids.all_packages.get()) || is_sid(ace, sids.restricted_packages.get()));
  });
  if (!base) return std::move(base).error_value();
  std::vector<EXPLICIT_ACCESS_W> entries;
  for (const auto& ace : change.aces) {
    EXPLICIT_ACCESS_W ea{};
    ea.grfAccessPermissions = ace.mask;
    ea.grfAccessMode = ace.allow ? GRANT_ACCESS : DENY_ACCESS;
    ea.grfInheritance = !ace.inherit ? NO_INHERITANCE
                                     : (OBJECT_INHERIT_ACE | CONTAINER_INHERIT_ACE | (ace.inherit_only ? INHERIT_ONLY_ACE : 0));
    ea.Trustee.TrusteeForm = TRUSTEE_IS_SID;
    ea.Trustee.TrusteeType = TRUSTEE_IS_WELL_KNOWN_GROUP;
    ea.Trustee.ptstrName = static_cast<LPWSTR>(sids.of(ace.who));
    entries.push_back(ea);
  }
  PACL merged = nullptr;
  const DWORD rc = SetEntriesInAclW(static_cast<ULONG>(entries.size()), entries.data(), base->get(), &merged);
  if (rc != ERROR_SUCCESS) return win32::last_error("SetEntriesInAclW(" + change.path + ")", rc);
  return local_ptr<ACL>(merged);
}

// Every ACE of the change is in the DACL read back (same type and SID, at
// least the mask), and the protection flag is as asked.
bool verify(const descriptor& now, const acl_change& change, const trustee_sids& sids, std::string& why) {
  if (change.protect_dacl && !now.is_protected) {
    why = "the DACL is not protected";
    return false;
  }
  ACL_SIZE_INFORMATION size{};
  if (now.dacl == nullptr || !GetAclInformation(now.dacl, &size, sizeof size, AclSizeInformation)) {
    why = "no DACL read back";
    return false;
  }
  for (const auto& want : change.aces) {
    bool found = false;
    for (DWORD i = 0; i < size.AceCount && !found; ++i) {
      void* raw = nullptr;
      if (!GetAce(now.dacl, i, &raw)) continue;
      const auto* header = static_cast<const ACE_HEADER*>(raw);
      const BYTE type = want.allow ? ACCESS_ALLOWED_ACE_TYPE : ACCESS_DENIED_ACE_TYPE;
      if (header->AceType != type || !is_sid(header, sids.of(want.who))) continue;
      const ACCESS_MASK mask = reinterpret_cast<const ACCESS_ALLOWED_ACE*>(raw)->Mask;
      found = (mask & want.mask) == want.mask;
    }
    if (!found) {
      why = std::string(want.allow ? "allow" : "deny") + " ACE for " + std::string(to_string(want.who)) + " is missing";
      return false;
    }
  }
  return true;
}

result<void> restore_one(HANDLE h, const detail::lease_entry& e) {
  if (e.original_sddl.rfind("S:", 0) == 0) return set_label_sddl(h, e.original_sddl, e.path);
  PSECURITY_DESCRIPTOR sd = nullptr;
  if (!ConvertStringSecurityDescriptorToSecurityDescriptorW(win32::widen(e.original_sddl).c_str(), SDDL_REVISION_1, &sd,
                                                            nullptr)) {
    return win32::last_error("ConvertStringSecurityDescriptorToSecurityDescriptorW(" + e.path + ")");
  }
  local_ptr<void> own(sd);
  BOOL present = FALSE, defaulted = FALSE;
  PACL dacl = nullptr;
  if (!GetSecurityDescriptorDacl(sd, &present, &dacl, &defaulted)) return win32::last_error("GetSecurityDescriptorDacl");
  return set_dacl(h, present ? dacl : nullptr, e.dacl_protected, e.path);
}

// Explicit ACEs naming `sid` on anything below `root`: what the AppContainer
// created during the run carries its SID in its own DACL.
std::size_t strip_sid_below(const std::string& root, PSID sid, std::vector<std::string>& failures) {
  std::size_t stripped = 0, visited = 0;
  std::vector<std::string> pending{root};
  while (!pending.empty() && visited < kStripLimit) {
    const std::string dir = pending.back();
    pending.pop_back();
    WIN32_FIND_DATAW data;
    HANDLE find = FindFirstFileExW(win32::widen(dir + "\\*").c_str(), FindExInfoBasic, &data, FindExSearchNameMatch, nullptr, 0);
    if (find == INVALID_HANDLE_VALUE) continue;
    do {
      const std::wstring name = data.cFileName;
      if (name == L"." || name == L"..") continue;
      ++visited;
      const std::string child = dir + "\\" + win32::narrow(name);
      if ((data.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT) != 0) continue;
      if ((data.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) != 0) pending.push_back(child);
      PACL dacl = nullptr;
      PSECURITY_DESCRIPTOR sd = nullptr;
      if (GetNamedSecurityInfoW(win32::widen(child).c_str(), SE_FILE_OBJECT, DACL_SECURITY_INFORMATION, nullptr, nullptr,
                                &dacl, nullptr, &sd) != ERROR_SUCCESS) {
        continue;
      }
      local_ptr<void> own(sd);
      bool has = false;
      auto copy = copy_acl(dacl, false, [&](const ACE_HEADER* ace) {
        const bool mine = (ace->AceFlags & INHERITED_ACE) == 0 && is_sid(ace, sid);
        has = has || mine;
        return mine;
      });
      if (!has) continue;
      if (!copy || SetNamedSecurityInfoW(const_cast<LPWSTR>(win32::widen(child).c_str()), SE_FILE_OBJECT,
                                         DACL_SECURITY_INFORMATION, nullptr, nullptr, copy->get(), nullptr) != ERROR_SUCCESS) {
        failures.push_back(child);
      } else {
        ++stripped;
      }
    } while (FindNextFileW(find, &data));
    FindClose(find);
  }
  return stripped;
}

bool remove_tree(const std::string& root) {
  WIN32_FIND_DATAW data;
  HANDLE find = FindFirstFileExW(win32::widen(root + "\\*").c_str(), FindExInfoBasic, &data, FindExSearchNameMatch, nullptr, 0);
  if (find != INVALID_HANDLE_VALUE) {
    do {
      const std::wstring name = data.cFileName;
      if (name == L"." || name == L"..") continue;
      const std::string child = root + "\\" + win32::narrow(name);
      const bool dir = (data.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) != 0;
      const bool link = (data.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT) != 0;
      SetFileAttributesW(win32::widen(child).c_str(), FILE_ATTRIBUTE_NORMAL);
      if (dir && !link) {
        remove_tree(child);
      } else if (dir) {
        RemoveDirectoryW(win32::widen(child).c_str());  // the link, never its target
      } else {
        DeleteFileW(win32::widen(child).c_str());
      }
    } while (FindNextFileW(find, &data));
    FindClose(find);
  }
  return RemoveDirectoryW(win32::widen(root).c_str()) != 0;
}

std::string step(const std::string& what, const result<void>& r) {
  return what + (r ? ": ok" : ": failed: " + r.error_value().message);
}

}  // namespace

result<void> write_durably(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  win32::unique_handle f(CreateFileW(win32::widen(tmp).c_str(), GENERIC_WRITE, 0, nullptr, CREATE_ALWAYS,
                                     FILE_ATTRIBUTE_NORMAL | FILE_FLAG_WRITE_THROUGH, nullptr));
  if (!f) return win32::last_error("CreateFileW(" + tmp + ")");
  DWORD written = 0;
  if (!WriteFile(f.get(), text.data(), static_cast<DWORD>(text.size()), &written, nullptr) || written != text.size()) {
    return win32::last_error("WriteFile(" + tmp + ")");
  }
  if (!FlushFileBuffers(f.get())) return win32::last_error("FlushFileBuffers(" + tmp + ")");
  f.reset();
  if (!MoveFileExW(win32::widen(tmp).c_str(), win32::widen(path).c_str(), MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH)) {
    return win32::last_error("MoveFileExW(" + path + ")");
  }
  return ok;
}

result<std::string> default_lease_directory() {
  wchar_t buf[MAX_PATH];
  const DWORD n = GetEnvironmentVariableW(L"LOCALAPPDATA", buf, MAX_PATH);
  if (n == 0 || n >= MAX_PATH) return make_error(error_code::launch_failed, "LOCALAPPDATA is not set: no place for the lease record");
  std::string dir = win32::narrow(buf) + "\\cordon";
  CreateDirectoryW(win32::widen(dir).c_str(), nullptr);
  dir += "\\leases";
  if (!CreateDirectoryW(win32::widen(dir).c_str(), nullptr) && GetLastError() != ERROR_ALREADY_EXISTS) {
    return win32::last_error("CreateDirectoryW(" + dir + ")");
  }
  return dir;
}

result<std::unique_ptr<dacl_lease>> dacl_lease::take(const windows_plan& plan, const std::string& appcontainer_name,
                                                    const std::string& appcontainer_sid, const std::string& lease_directory,
                                                    std::optional<std::uint32_t> lock_wait_ms, bool& read_back,
                                                    std::vector<std::string>& lines) {
  std::unique_ptr<dacl_lease> lease(new dacl_lease());
  // Leases are serialized machine-wide: one set of temporary ACLs at a time
  // keeps the recorded originals the host's (docs/windows-backend.md, "Leases").
  std::string note;
  auto lock = machine_lock::acquire(lock_wait_ms, note);
  if (!lock) return std::move(lock).error_value();
  lease->lock_.emplace(std::move(*lock));
  if (!note.empty()) lines.push_back(note);
  read_back = true;
  trustee_sids sids;
  // The low-integrity fallback's plans change labels only: no AppContainer SID.
  if (plan.token().appcontainer) {
    auto ac = sid_from(appcontainer_sid);
    auto all = sid_from(std::string(well_known_sid(trustee::all_application_packages)));
    auto restricted = sid_from(std::string(well_known_sid(trustee::all_restricted_application_packages)));
    if (!ac) return std::move(ac).error_value();
    if (!all) return std::move(all).error_value();
    if (!restricted) return std::move(restricted).error_value();
    sids.appcontainer = std::move(*ac);
    sids.all_packages = std::move(*all);
    sids.restricted_packages = std::move(*restricted);
  }

  auto& rec = lease->record_;
  rec.owner_pid = GetCurrentProcessId();
  rec.owner_start_time = own_start_time();
  rec.plan_identity = plan.identity();
  rec.appcontainer_name = appcontainer_name;
  rec.appcontainer_sid = appcontainer_sid;
  lease->record_path_ = lease_directory + "\\lease-" + std::to_string(rec.owner_pid) + "-" + std::to_string(plan.identity()) + ".json";

  // {run_tmp} first: it must exist to be opened, and is recorded for removal.
  for (const auto& change : plan.acl_changes()) {
    if (!change.created_at_launch) continue;
    if (!CreateDirectoryW(win32::widen(change.path).c_str(), nullptr)) return win32::last_error("CreateDirectoryW(" + change.path + ")");
    rec.created.push_back(change.path);
  }
  // Every path opened and its original read before anything changes.
  std::vector<descriptor> originals;
  for (const auto& change : plan.acl_changes()) {
    const bool label = change.label != mandatory_label::none;
    // A label is set with WRITE_OWNER (SetSecurityInfo, LABEL_SECURITY_INFORMATION).
    auto opened = open_path(change.path, label ? WRITE_DAC | WRITE_OWNER : WRITE_DAC);
    if (!opened) return std::move(opened).error_value();
    auto d = read_dacl(opened->leaf(), change.path);
    if (!d) return std::move(d).error_value();
    auto sddl = label ? read_label_sddl(opened->leaf(), change.path) : to_sddl(*d, change.path);
    if (!sddl) return std::move(sddl).error_value();
    rec.entries.push_back({change.path, opened->file_id, *sddl, d->is_protected, detail::lease_state::pending, 0});
    if (change.role == acl_role::writable && change.directory) lease->writable_roots_.push_back(change.path);
    lease->opened_.push_back(std::move(*opened));
    originals.push_back(std::move(*d));
  }
  if (auto w = write_durably(lease->record_path_, detail::lease_record_to_json(rec)); !w) return std::move(w).error_value();
  lines.push_back("lease: " + std::to_string(rec.entries.size()) + " originals recorded in " + lease->record_path_);

  for (std::size_t i = 0; i < plan.acl_changes().size(); ++i) {
    const acl_change& change = plan.acl_changes()[i];
    HANDLE h = lease->opened_[i].leaf();
    if (change.label != mandatory_label::none) {
      if (auto s = set_label_sddl(h, label_sddl_of(change), change.path); !s) return std::move(s).error_value();
      auto now = read_label_sddl(h, change.path);
      if (!now || !label_read_back(*now, change)) {
        read_back = false;
        lines.push_back("lease: " + change.path + " did not read back as labelled " +
                        std::string(to_string(change.label)) + ": " + (now ? *now : now.error_value().message));
      }
      continue;
    }
    auto dacl = build_dacl(originals[i], change, sids);
    if (!dacl) return std::move(dacl).error_value();  // the destructor restores what was applied
    const bool make_protected = change.protect_dacl || originals[i].is_protected;
    if (auto s = set_dacl(h, dacl->get(), make_protected, change.path); !s) return std::move(s).error_value();
    auto now = read_dacl(h, change.path);
    std::string why;
    if (!now || !verify(*now, change, sids, why)) {
      read_back = false;
      lines.push_back("lease: " + change.path + " did not read back as changed: " + (now ? why : now.error_value().message));
    }
  }
  return lease;
}

std::vector<std::string> dacl_lease::release() {
  std::vector<std::string> out;
  if (released_) return out;
  released_ = true;
  std::vector<std::string> failures;
  std::size_t index = record_.entries.size();
  // restore_entries walks last-first; the handle of entry i is opened_[i].
  const std::size_t pending = detail::restore_entries(record_, [&](const detail::lease_entry& e) -> result<void> {
    for (std::size_t i = record_.entries.size(); i-- > 0;) {
      if (&record_.entries[i] == &e) index = i;
    }
    return restore_one(opened_[index].leaf(), e);
  }, failures);
  out.push_back(pending == 0 ? "restore DACLs: ok (" + std::to_string(record_.entries.size()) + " entries)"
                             : "restore DACLs: failed: " + std::to_string(pending) + " entries still pending");
  for (const auto& f : failures) out.push_back("restore DACLs: " + f);
  if (!record_.appcontainer_sid.empty() && !writable_roots_.empty()) {
    auto sid = sid_from(record_.appcontainer_sid);
    std::vector<std::string> strip_failures;
    std::size_t stripped = 0;
    for (const auto& root : writable_roots_) {
      if (sid) stripped += strip_sid_below(root, sid->get(), strip_failures);
    }
    out.push_back(strip_failures.empty() && sid
                      ? "remove AppContainer SID from created files: ok (" + std::to_string(stripped) + ")"
                      : "remove AppContainer SID from created files: failed: " + std::to_string(strip_failures.size()) + " files");
  }
  opened_.clear();  // the boundary's handles go only after restoration
  for (const auto& dir : record_.created) {
    out.push_back(step("remove " + dir, remove_tree(dir) ? result<void>(ok) : win32::last_error("RemoveDirectoryW")));
  }
  if (record_.complete()) {
    out.push_back(step("delete lease record", DeleteFileW(win32::widen(record_path_).c_str())
                                                  ? result<void>(ok)
                                                  : win32::last_error("DeleteFileW(" + record_path_ + ")")));
  } else {
    out.push_back(step("keep lease record for the next start", write_durably(record_path_, detail::lease_record_to_json(record_))));
  }
  return out;
}

dacl_lease::~dacl_lease() {
  if (!released_) release();
}

result<void> recover_stale_leases_impl(const std::string& dir, std::optional<std::uint32_t> lock_wait_ms,
                                       std::vector<std::string>& report) {
  // Listed and restored under the lock: a run that holds it may be writing its record.
  std::string note;
  auto lock = machine_lock::acquire(lock_wait_ms, note);
  if (!lock) return std::move(lock).error_value();
  if (!note.empty()) report.push_back(note);
  WIN32_FIND_DATAW data;
  HANDLE find = FindFirstFileExW(win32::widen(dir + "\\lease-*.json").c_str(), FindExInfoBasic, &data, FindExSearchNameMatch,
                                 nullptr, 0);
  if (find == INVALID_HANDLE_VALUE) return ok;
  std::vector<std::string> files;
  do files.push_back(dir + "\\" + win32::narrow(data.cFileName));
  while (FindNextFileW(find, &data));
  FindClose(find);
  bool all_restored = true;
  for (const auto& file : files) {
    win32::unique_handle f(CreateFileW(win32::widen(file).c_str(), GENERIC_READ, FILE_SHARE_READ, nullptr, OPEN_EXISTING, 0, nullptr));
    if (!f) return win32::last_error("CreateFileW(" + file + ")");
    std::string text(1 << 20, '\0');
    DWORD got = 0;
    if (!ReadFile(f.get(), text.data(), static_cast<DWORD>(text.size()), &got, nullptr)) return win32::last_error("ReadFile(" + file + ")");
    f.reset();
    text.resize(got);
    auto rec = detail::lease_record_from_json(text);
    if (!rec) return make_error(error_code::launch_failed, "lease record " + file + ": " + rec.error_value().message);
    // A live owner's lease is not stale.
    win32::unique_handle owner(OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, rec->owner_pid));
    if (owner) {
      FILETIME c{}, e{}, k{}, u{};
      GetProcessTimes(owner.get(), &c, &e, &k, &u);
      const std::uint64_t start = (static_cast<std::uint64_t>(c.dwHighDateTime) << 32) | c.dwLowDateTime;
      DWORD code = 0;
      if (start == rec->owner_start_time && GetExitCodeProcess(owner.get(), &code) && code == STILL_ACTIVE) {
        report.push_back(file + ": owner " + std::to_string(rec->owner_pid) + " is running; left alone");
        continue;
      }
    }
    std::vector<std::string> failures;
    const std::size_t pending = detail::restore_entries(*rec, [&](const detail::lease_entry& e) -> result<void> {
      const bool label = e.original_sddl.rfind("S:", 0) == 0;
      auto opened = open_path(e.path, label ? WRITE_DAC | WRITE_OWNER : WRITE_DAC);
      if (!opened) return std::move(opened).error_value();
      if (opened->file_id != e.file_id) {
        return make_error(error_code::launch_failed, e.path + " is another object than the one leased (" + opened->file_id + ")");
      }
      return restore_one(opened->leaf(), e);
    }, failures);
    for (const auto& failure : failures) report.push_back(file + ": " + failure);
    for (const auto& created : rec->created) remove_tree(created);
    if (!rec->appcontainer_name.empty()) {
      auto removed = system_appcontainer_provider().remove(rec->appcontainer_name);
      report.push_back(step(file + ": delete AppContainer profile " + rec->appcontainer_name, removed));
    }
    if (pending == 0) {
      DeleteFileW(win32::widen(file).c_str());
      report.push_back(file + ": restored " + std::to_string(rec->entries.size()) + " entries of a crashed run");
    } else {
      all_restored = false;
      (void)write_durably(file, detail::lease_record_to_json(*rec));
      report.push_back(file + ": " + std::to_string(pending) + " entries still pending");
    }
  }
  if (!all_restored) {
    return make_error(error_code::launch_failed, "a crashed run's DACL lease could not be restored; no new run until it is");
  }
  return ok;
}

}  // namespace cordon::windows::launcher

namespace cordon::windows {

result<void> recover_stale_leases(const std::string& lease_directory, std::vector<std::string>& report,
                                  std::optional<std::uint32_t> lock_wait_ms) {
  return launcher::recover_stale_leases_impl(lease_directory, lock_wait_ms, report);
}

}  // namespace cordon::windows
