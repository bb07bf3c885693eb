// tests/windows/wine/wine_support.h — helpers of the launcher tests that run
// under wine (and on a Windows runner): the child program, temporary
// directories, and plans for the live host.
#pragma once

#include <windows.h>
// after windows.h
#include <shellapi.h>

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cordon/policy.h"
#include "cordon/windows/compile.h"
#include "cordon/windows/launcher.h"
#include "windows/launcher/win32.h"

namespace cordon::windows::testing {

inline std::string exe_directory() {
  wchar_t buf[MAX_PATH];
  GetModuleFileNameW(nullptr, buf, MAX_PATH);
  std::string s = win32::narrow(buf);
  return s.substr(0, s.rfind('\\'));
}

inline std::string child_exe() { return exe_directory() + "\\cordon_wine_child.exe"; }

// "C:\a\b" -> "/C:/a/b", the policy spelling of a Windows path.
inline std::string policy_path(const std::string& windows_path) {
  std::string out = "/" + windows_path;
  for (char& c : out) c = c == '\\' ? '/' : c;
  while (out.size() > 4 && out.back() == '/') out.pop_back();
  return out;
}

// A fresh directory under the temporary directory, removed at the end.
class temp_dir {
 public:
  temp_dir() {
    wchar_t base[MAX_PATH];
    GetTempPathW(MAX_PATH, base);
    static int counter = 0;
    path_ = win32::narrow(base) + "cordon-wine-test-" + std::to_string(GetCurrentProcessId()) + "-" + std::to_string(++counter);
    CreateDirectoryW(win32::widen(path_).c_str(), nullptr);
  }
  ~temp_dir() {
    std::wstring from = win32::widen(path_);
    from.push_back(L'\0');
    SHFILEOPSTRUCTW op{};
    op.wFunc = FO_DELETE;
    op.pFrom = from.c_str();
    op.fFlags = FOF_NO_UI;
    SHFileOperationW(&op);
  }
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "\\" + name; }

 private:
  std::string path_;
};

inline bool exists(const std::string& path) {
  return GetFileAttributesW(win32::widen(path).c_str()) != INVALID_FILE_ATTRIBUTES;
}

// A policy for the plumbing tests: nothing wine cannot do is required. Each
// control wine fakes or lacks is accepted as `not_enforced` (the launcher
// lowers it there); everything else stays required at `unverified`.
inline sandbox_policy plumbing_policy() {
  sandbox_policy p;
  p.name = "wine-plumbing";
  p.filesystem.readable = {policy_path(exe_directory())};
  p.environment.set = {{"CORDON_TEST", "1"}};
  for (const auto& [c, level] : required_enforcement(p)) p.enforcement[c] = enforcement_level::unverified;
  for (control c : {control::filesystem_read, control::filesystem_write, control::filesystem_deny, control::network_deny,
                    control::privilege, control::process_tree_cleanup, control::process_count, control::memory, control::cpu}) {
    p.enforcement[c] = enforcement_level::not_enforced;
  }
  return p;
}

inline windows_compile_options options_for(std::vector<std::string> argv) {
  windows_compile_options o;
  o.workspace = exe_directory();
  o.argv = std::move(argv);
  return o;
}

// Compiles `p` for the live host with the child as argv[0].
inline windows_compile_result compile_live(const sandbox_policy& p, std::vector<std::string> args,
                                           bool (*edit_facts)(host_facts&) = nullptr) {
  args.insert(args.begin(), child_exe());
  const windows_compile_options o = options_for(args);
  host_facts facts = gather_host_facts(paths_to_probe(p, gather_host_facts({}), o));
  if (edit_facts != nullptr) edit_facts(facts);
  return compile_windows_plan(p, facts, o);
}

inline std::string describe(const windows_compile_result& r) {
  if (r) return "compiled";
  std::string s = r.failure->message;
  for (const auto& b : r.failure->blockers) s += "\n  " + b.cause + " " + b.subject_name() + ": " + b.reason;
  for (const auto& e : r.failure->errors) s += "\n  " + e.location + ": " + e.reason;
  return s;
}

inline std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    out.push_back(line);
    start = end + 1;
  }
  return out;
}

#define CORDON_SKIP_ON_WINE(reason) \
  if (::cordon::windows::running_on_wine()) GTEST_SKIP() << "wine: " << reason

}  // namespace cordon::windows::testing
