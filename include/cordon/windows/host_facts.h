// cordon/windows/host_facts.h — what the Windows plan compiler knows about the
// host it compiles for.
//
// The compiler is a pure function of a policy and these facts
// (docs/windows-backend.md, "Host facts"). On Windows the launcher gathers
// them from the live system (gather_host_facts() in cordon/windows/launcher.h);
// on Linux, tests and `cordon policy explain --platform windows` pass a
// recorded or reference host shape. Facts grant nothing: a fact the launcher
// finds different at launch (a root that became a reparse point, a second
// hard link) refuses the launch.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cordon::windows {

// One mounted volume. `root` is a drive root such as "C:\".
struct volume_facts {
  std::string root;
  std::string filesystem;       // "NTFS", "ReFS", "FAT32", ...
  bool persistent_acls = false; // FILE_PERSISTENT_ACLS in GetVolumeInformationW
};

// One path as the host sees it, without following reparse points.
struct path_facts {
  bool exists = false;
  bool directory = false;
  bool reparse_point = false;      // FILE_ATTRIBUTE_REPARSE_POINT (symlink, junction, mount point, ...)
  std::uint32_t link_count = 1;    // nNumberOfLinks; files only
  // Files under a directory root that have more than one hard link, found by
  // the gatherer's bounded scan; `scan_truncated` when it stopped early.
  std::vector<std::string> multi_link_descendants;
  bool scan_truncated = false;
  // The object's identity by handle (dwVolumeSerialNumber, nFileIndex);
  // both 0 when not read (recorded shapes).
  std::uint32_t volume_serial = 0;
  std::uint64_t file_index = 0;
  // Directories at or below a directory root that hold a `.git` entry (a
  // repository's top, a worktree's or submodule's `.git` file), found by the
  // same scan: protect_vcs_metadata protects their metadata (the gatherer
  // also probes each file core::protected_vcs_files names below them).
  std::vector<std::string> repositories{};
};

struct host_facts {
  std::string windows_version;      // "10.0.19045", or wine's "6.1.7601"
  bool wine = false;                // ntdll exports wine_get_version
  // CreateAppContainerProfile, DeriveAppContainerSidFromAppContainerName and
  // DeleteAppContainerProfile resolve in userenv.dll (GetProcAddress). The
  // launcher still treats every AppContainer call that fails as fatal.
  bool appcontainer_available = false;
  bool job_objects = true;          // nested jobs (Windows 8+)
  std::vector<volume_facts> volumes;
  // Keyed by absolute Windows path ("C:\Users\ada\work"); compared without
  // regard to ASCII case. A path that is absent here does not exist.
  std::map<std::string, path_facts> paths;
  // The host environment (UTF-8, as the launcher read it), for `allow` and
  // `inherit: all`. Entries may differ only in case: the compiler rejects
  // passing such a pair.
  std::vector<std::pair<std::string, std::string>> environment;
  std::string user_profile;         // "{home}": %USERPROFILE%
  std::string temp_directory;       // parent of "{run_tmp}": GetTempPathW
  std::string system_root;          // %SystemRoot%, e.g. "C:\Windows"
  // A made-up shape for explaining plans without a Windows host: every path
  // absent from `paths` is taken to exist as a plain directory (one link, no
  // reparse point). The launcher refuses a plan compiled from such facts.
  bool reference_shape = false;
  // Loaded from a facts record (windows_backend::load_host_facts): a
  // description of a host, never this one; the launcher refuses a plan
  // compiled from it (plan_recorded_facts).
  bool recorded = false;
};

// The facts for `path` (ASCII case-insensitive lookup), or nullopt when the
// host does not have it.
std::optional<path_facts> find_path(const host_facts& facts, const std::string& path);

// The volume whose root is the longest prefix of `path`, or nullptr.
const volume_facts* find_volume(const host_facts& facts, const std::string& path);

// A reference host for explaining plans where there is no Windows host:
// Windows 10 22H2, one NTFS volume C:, AppContainer available, the user
// "user" with profile C:\Users\user and temp C:\Users\user\AppData\Local\Temp,
// `reference_shape` set. The shape is printed with every plan explained from it.
host_facts reference_host_facts();

}  // namespace cordon::windows
