// DACL leases and the path boundary, as far as wine carries them: the lease
// record written before any change and removed once restored, a crashed
// run's record restored at the next start, hard links refused by handle.
// DACL enforcement itself is never judged under wine: its "denials" are unix
// permission bits.
#include <aclapi.h>
#include <sddl.h>

#include "windows/launcher/dacl_lease.h"
#include "windows/launcher/job_object.h"
#include "windows/launcher/path_boundary.h"
#include "windows/lease_record.h"
#include "wine_support.h"

namespace cordon::windows {
namespace {

using namespace testing;

std::string read_file(const std::string& path) {
  win32::unique_handle f(CreateFileW(win32::widen(path).c_str(), GENERIC_READ, FILE_SHARE_READ, nullptr, OPEN_EXISTING, 0, nullptr));
  if (!f) return {};
  std::string text(1 << 16, '\0');
  DWORD got = 0;
  ReadFile(f.get(), text.data(), static_cast<DWORD>(text.size()), &got, nullptr);
  text.resize(got);
  return text;
}

std::string sddl_of(const std::string& path) {
  PSECURITY_DESCRIPTOR sd = nullptr;
  if (GetNamedSecurityInfoW(win32::widen(path).c_str(), SE_FILE_OBJECT, DACL_SECURITY_INFORMATION, nullptr, nullptr, nullptr,
                            nullptr, &sd) != ERROR_SUCCESS) {
    return {};
  }
  wchar_t* text = nullptr;
  ConvertSecurityDescriptorToStringSecurityDescriptorW(sd, SDDL_REVISION_1, DACL_SECURITY_INFORMATION, &text, nullptr);
  std::string s = text != nullptr ? win32::narrow(text) : "";
  LocalFree(text);
  LocalFree(sd);
  return s;
}

std::vector<std::string> lease_files(const temp_dir& dir) {
  std::vector<std::string> out;
  WIN32_FIND_DATAW data;
  HANDLE find = FindFirstFileW(win32::widen(dir.file("lease-*.json")).c_str(), &data);
  if (find == INVALID_HANDLE_VALUE) return out;
  do out.push_back(dir.file(win32::narrow(data.cFileName)));
  while (FindNextFileW(find, &data));
  FindClose(find);
  return out;
}

// A plan whose only ACL change is a readable grant on `root`.
std::shared_ptr<const windows_plan> grant_plan(const temp_dir& root) {
  sandbox_policy p = plumbing_policy();
  p.filesystem.readable = {policy_path(root.path())};
  host_facts facts = gather_host_facts(paths_to_probe(p, gather_host_facts({}), options_for({})));
  facts.appcontainer_available = true;
  for (auto& v : facts.volumes) v.persistent_acls = true;
  auto built = compile_windows_plan(p, facts, options_for({}));
  EXPECT_TRUE(built.plan) << (built.failure ? built.failure->message : "");
  return built.plan;
}

TEST(WindowsLease, RecordIsWrittenBeforeTheChangeAndRemovedOnceRestored) {
  temp_dir root, leases;
  auto plan = grant_plan(root);
  ASSERT_TRUE(plan);
  ASSERT_EQ(plan->acl_changes().size(), 1u);
  const std::string before = sddl_of(root.path());
  bool read_back = true;
  std::vector<std::string> lines;
  auto lease = launcher::dacl_lease::take(*plan, "cordon.test", "S-1-15-2-1-2-3-4-5-6-7", leases.path(), std::nullopt, read_back, lines);
  ASSERT_TRUE(lease) << lease.error_value().describe();
  const auto files = lease_files(leases);
  ASSERT_EQ(files.size(), 1u);
  auto record = detail::lease_record_from_json(read_file(files[0]));
  ASSERT_TRUE(record) << record.error_value().describe();
  ASSERT_EQ(record->entries.size(), 1u);
  EXPECT_EQ(record->entries[0].original_sddl, before) << "the record holds the descriptor from before the change";
  EXPECT_EQ(record->entries[0].state, detail::lease_state::pending);
  if (running_on_wine()) {
    EXPECT_FALSE(read_back) << "wine keeps no ACE for an AppContainer SID; the read-back must say so";
  }
  const auto cleanup = (*lease)->release();
  EXPECT_TRUE((*lease)->complete());
  EXPECT_TRUE(lease_files(leases).empty());
  EXPECT_EQ(cleanup.front().rfind("restore DACLs: ok", 0), 0u) << cleanup.front();
  EXPECT_EQ(sddl_of(root.path()), before);
}

// Another holder of the machine-wide lease lock (machine_lock.h): here a
// thread, which is as foreign to the lock's owner as another process.
class lock_holder {
 public:
  lock_holder() : taken_(CreateEventW(nullptr, TRUE, FALSE, nullptr)), done_(CreateEventW(nullptr, TRUE, FALSE, nullptr)) {
    thread_.reset(CreateThread(nullptr, 0, &lock_holder::hold, this, 0, nullptr));
    WaitForSingleObject(taken_.get(), INFINITE);
  }
  ~lock_holder() {
    SetEvent(done_.get());
    WaitForSingleObject(thread_.get(), INFINITE);
  }
  lock_holder(const lock_holder&) = delete;
  lock_holder& operator=(const lock_holder&) = delete;

 private:
  static DWORD WINAPI hold(void* self) {
    auto* h = static_cast<lock_holder*>(self);
    win32::unique_handle mutex(CreateMutexW(nullptr, FALSE, launcher::machine_lock_name));
    WaitForSingleObject(mutex.get(), INFINITE);
    SetEvent(h->taken_.get());
    WaitForSingleObject(h->done_.get(), INFINITE);
    ReleaseMutex(mutex.get());
    return 0;
  }
  win32::unique_handle taken_, done_, thread_;
};

TEST(WindowsLease, ALeaseWaitsForTheMachineWideLockAndChangesNothingWithoutIt) {
  temp_dir root, leases;
  auto plan = grant_plan(root);
  ASSERT_TRUE(plan);
  const std::string before = sddl_of(root.path());
  bool read_back = true;
  std::vector<std::string> lines;
  {
    lock_holder other;
    auto refused = launcher::dacl_lease::take(*plan, "cordon.test", "S-1-15-2-1-2-3-4-5-6-7", leases.path(), 0u, read_back, lines);
    ASSERT_FALSE(refused) << "a lease was taken while another run held the lock";
    EXPECT_EQ(refused.error_value().code, error_code::launch_failed);
    EXPECT_NE(refused.error_value().message.find("holds the lease lock"), std::string::npos) << refused.error_value().message;
    EXPECT_TRUE(lease_files(leases).empty()) << "a record was written without the lock";
    EXPECT_EQ(sddl_of(root.path()), before);
    std::vector<std::string> report;
    EXPECT_FALSE(recover_stale_leases(leases.path(), report, 0u)) << "recovery ran without the lock";
  }
  auto lease = launcher::dacl_lease::take(*plan, "cordon.test", "S-1-15-2-1-2-3-4-5-6-7", leases.path(), 0u, read_back, lines);
  ASSERT_TRUE(lease) << lease.error_value().describe();  // the other holder is gone
  EXPECT_EQ(lease_files(leases).size(), 1u);
  (*lease)->release();
  EXPECT_EQ(sddl_of(root.path()), before);
}

TEST(WindowsLease, CrashedRunsLeaseIsRestoredAtTheNextStart) {
  temp_dir root, leases;
  auto opened = launcher::open_path(root.path(), 0);
  ASSERT_TRUE(opened) << opened.error_value().describe();
  detail::lease_record rec;
  rec.owner_pid = 0xFFFFFFF0u;  // no such process: the owner crashed
  rec.owner_start_time = 1;
  rec.entries.push_back({root.path(), opened->file_id, sddl_of(root.path()), false, detail::lease_state::pending, 0});
  opened->chain.clear();
  const std::string file = leases.file("lease-1-1.json");
  ASSERT_TRUE(launcher::write_durably(file, detail::lease_record_to_json(rec)));
  std::vector<std::string> report;
  auto r = recover_stale_leases(leases.path(), report);
  EXPECT_TRUE(r) << r.error_value().describe();
  EXPECT_FALSE(exists(file));
  ASSERT_FALSE(report.empty());
  EXPECT_NE(report.back().find("restored 1 entries of a crashed run"), std::string::npos) << report.back();
}

TEST(WindowsLease, ALeaseOnAReplacedObjectStaysPendingAndRefusesNewRuns) {
  temp_dir root, leases;
  detail::lease_record rec;
  rec.owner_pid = 0xFFFFFFF0u;
  rec.owner_start_time = 1;
  rec.entries.push_back({root.path(), "00000000:0000000000000000", "D:(A;;FA;;;SY)", false, detail::lease_state::pending, 0});
  const std::string file = leases.file("lease-2-2.json");
  ASSERT_TRUE(launcher::write_durably(file, detail::lease_record_to_json(rec)));
  std::vector<std::string> report;
  auto r = recover_stale_leases(leases.path(), report);
  ASSERT_FALSE(r);
  auto kept = detail::lease_record_from_json(read_file(file));
  ASSERT_TRUE(kept) << "the record must stay until restored";
  EXPECT_EQ(kept->entries[0].attempts, detail::max_restore_attempts);
  EXPECT_EQ(kept->entries[0].state, detail::lease_state::pending);
}

TEST(WindowsLease, ALiveOwnersLeaseIsLeftAlone) {
  temp_dir leases;
  detail::lease_record rec;
  rec.owner_pid = GetCurrentProcessId();
  FILETIME c{}, e{}, k{}, u{};
  GetProcessTimes(GetCurrentProcess(), &c, &e, &k, &u);
  rec.owner_start_time = (static_cast<std::uint64_t>(c.dwHighDateTime) << 32) | c.dwLowDateTime;
  rec.entries.push_back({"C:\\nowhere", "x", "D:(A;;FA;;;SY)", false, detail::lease_state::pending, 0});
  const std::string file = leases.file("lease-3-3.json");
  ASSERT_TRUE(launcher::write_durably(file, detail::lease_record_to_json(rec)));
  std::vector<std::string> report;
  EXPECT_TRUE(recover_stale_leases(leases.path(), report));
  EXPECT_TRUE(exists(file));
}

TEST(WindowsPathBoundary, FilesWithSeveralHardLinksAreRefusedByHandle) {
  temp_dir dir;
  const std::string a = dir.file("a.txt"), b = dir.file("b.txt");
  win32::unique_handle f(CreateFileW(win32::widen(a).c_str(), GENERIC_WRITE, 0, nullptr, CREATE_ALWAYS, 0, nullptr));
  f.reset();
  auto single = launcher::open_path(a, 0);
  ASSERT_TRUE(single) << single.error_value().describe();
  EXPECT_EQ(single->links, 1u);
  single->chain.clear();
  ASSERT_TRUE(CreateHardLinkW(win32::widen(b).c_str(), win32::widen(a).c_str(), nullptr));
  auto linked = launcher::open_path(a, 0);
  ASSERT_FALSE(linked);
  EXPECT_NE(linked.error_value().message.find("2 hard links"), std::string::npos) << linked.error_value().message;
  bool truncated = true;
  auto found = launcher::find_multi_link_files(dir.path(), 1000, truncated);
  EXPECT_FALSE(truncated);
  EXPECT_EQ(found.size(), 2u);
}

TEST(WindowsJob, ClosingTheJobKillsItsProcesses) {
  auto job = launcher::create_job(job_limits{});
  ASSERT_TRUE(job) << job.error_value().describe();
  std::wstring line = L"child sleep 30000";
  STARTUPINFOW si{};
  si.cb = sizeof si;
  PROCESS_INFORMATION pi{};
  ASSERT_TRUE(CreateProcessW(win32::widen(child_exe()).c_str(), line.data(), nullptr, nullptr, FALSE, CREATE_SUSPENDED, nullptr,
                             nullptr, &si, &pi))
      << "CreateProcessW: error " << GetLastError();
  win32::unique_handle process(pi.hProcess), thread(pi.hThread);
  ASSERT_TRUE(AssignProcessToJobObject(job->get(), process.get()));
  ResumeThread(thread.get());
  EXPECT_EQ(WaitForSingleObject(process.get(), 200), static_cast<DWORD>(WAIT_TIMEOUT));
  job->reset();
  EXPECT_EQ(WaitForSingleObject(process.get(), 5000), static_cast<DWORD>(WAIT_OBJECT_0));
}

}  // namespace
}  // namespace cordon::windows
