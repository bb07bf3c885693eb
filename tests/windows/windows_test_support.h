// tests/windows/windows_test_support.h — a recorded Windows host shape and a
// policy that compiles on it, for the compiler's unit tests.
#pragma once

#include <algorithm>
#include <string>

#include "cordon/policy.h"
#include "cordon/windows/compile.h"

namespace cordon::windows::testing {

inline path_facts dir() { return path_facts{true, true, false, 1, {}, false}; }
inline path_facts file(std::uint32_t links = 1) { return path_facts{true, false, false, links, {}, false}; }
inline path_facts link() { return path_facts{true, true, true, 1, {}, false}; }

// Windows 10 with C: (NTFS) and E: (FAT32), user "ada", workspace C:\work.
inline host_facts sample_host() {
  host_facts f;
  f.windows_version = "10.0.19045";
  f.appcontainer_available = true;
  f.volumes = {{"C:\\", "NTFS", true}, {"E:\\", "FAT32", false}};
  f.user_profile = "C:\\Users\\ada";
  f.temp_directory = "C:\\Users\\ada\\AppData\\Local\\Temp";
  f.system_root = "C:\\Windows";
  for (const char* d : {"C:\\", "C:\\Users", "C:\\Users\\ada", "C:\\Users\\ada\\AppData", "C:\\Users\\ada\\AppData\\Local",
                        "C:\\Users\\ada\\AppData\\Local\\Temp", "C:\\work", "C:\\work\\src", "C:\\work\\.git",
                        "C:\\work\\.git\\hooks", "C:\\Users\\ada\\.ssh", "C:\\Windows", "C:\\Windows\\System32",
                        "C:\\tools", "E:\\", "E:\\stick"}) {
    f.paths[d] = dir();
  }
  f.paths["C:\\Windows\\System32\\cmd.exe"] = file();
  f.paths["C:\\tools\\build.exe"] = file();
  f.paths["C:\\tools\\setup.bat"] = file();
  f.paths["C:\\work\\run.exe"] = file();
  f.environment = {{"Path", "C:\\Windows\\System32;C:\\tools"}, {"USERNAME", "ada"}, {"SystemRoot", "C:\\Windows"}};
  return f;
}

// Accepts `unverified` for every control the policy's content implies: the
// only way a Windows plan compiles here (compile.h, "unverified").
inline void accept_unverified(sandbox_policy& p) {
  for (const auto& [c, level] : required_enforcement(p)) {
    if (level == enforcement_level::enforced) p.enforcement[c] = enforcement_level::unverified;
  }
}

// workspace-write, shaped for Windows.
inline sandbox_policy sample_policy() {
  sandbox_policy p;
  p.name = "windows-sample";
  p.filesystem.read = read_mode::restricted;
  p.filesystem.readable = {"{workspace}"};
  p.filesystem.writable = {"{workspace}", "{run_tmp}"};
  p.filesystem.protected_read_only = {"{workspace}/.git/hooks"};
  p.filesystem.denied = {"{home}/.ssh"};
  p.environment.set = {{"PATH", "C:\\Windows\\System32;C:\\tools"}};
  accept_unverified(p);
  return p;
}

inline windows_compile_options sample_options(std::vector<std::string> argv = {}) {
  windows_compile_options o;
  o.workspace = "C:\\work";
  o.argv = std::move(argv);
  return o;
}

inline bool has_blocker(const windows_compile_result& r, blocker_code code) {
  if (!r.failure) return false;
  return std::any_of(r.failure->blockers.begin(), r.failure->blockers.end(),
                     [&](const blocker& b) { return has_cause(b, code); });
}

}  // namespace cordon::windows::testing
