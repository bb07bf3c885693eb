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
// A relative path that stays under its base: no leading '/', no ".." component.
bool stays_inside(std::string_view path);
// A manifest file's bytes, or nullopt with "PATH: cannot read: strerror" in `failure`.
std::optional<std::string> read_manifest_text(const std::string& path, std::string& failure);

}  // namespace cordon::manifest
