// manifest_text.h — what gate manifests (docs/gates.md) and extension
// manifests (docs/sidecars.md) share before their own fields: reading the
// file, the names a record may carry, relative paths that stay inside.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace cordon::manifest {

// A name a record file may carry: 1-100 characters of [A-Za-z0-9._-], not "." or "..".
bool valid_name(std::string_view name);
// How a platform spells paths. A manifest's path is judged by the rules of the
// platform its gate or sidecar runs on (docs/gates.md, "Paths").
enum class path_style { posix, windows };
// The style of the platform this binary was built for.
path_style host_path_style() noexcept;

// What a path is relative to, under `style`.
enum class path_kind {
  relative,    // to the manifest's directory
  absolute,    // posix: a leading '/'; windows: a drive, ':' and a separator ("C:\x", "C:/x"),
               // or a UNC or device path ("\\server\share\x", "//server/share/x", "\\?\C:\x")
  per_process, // windows only: "\x" (the current drive's root) or "C:x" (drive C's current
               // directory), whose meaning depends on the process: refused by every manifest
};
path_kind classify_path(std::string_view path, path_style style) noexcept;
// classify_path(path, style) == path_kind::absolute: the one rule for "absolute".
bool is_absolute_path(std::string_view path, path_style style) noexcept;

// A file a manifest names (a policy file), for a process on a `style`
// platform: `ref` itself when absolute, else `directory` + "/" + `ref`;
// nullopt for a per_process Windows path.
std::optional<std::string> resolve_manifest_path(std::string_view directory, std::string_view ref, path_style style);

// A relative path that stays under its base wherever the manifest is read:
// relative under both styles (no leading '/' or backslash, no drive), and no ".."
// component between '/' or backslash separators.
bool stays_inside(std::string_view path);
// A manifest file's bytes, or nullopt with "PATH: cannot read: strerror" in `failure`.
std::optional<std::string> read_manifest_text(const std::string& path, std::string& failure);

}  // namespace cordon::manifest
