// src/windows/host_facts.cpp — lookups in the host facts, and the reference
// host shape used to explain plans on hosts that are not Windows.
#include "cordon/windows/host_facts.h"

#include "windows/paths.h"

namespace cordon::windows {

std::optional<path_facts> find_path(const host_facts& facts, const std::string& path) {
  if (auto it = facts.paths.find(path); it != facts.paths.end()) return it->second;
  for (const auto& [key, value] : facts.paths) {
    if (detail::same_path(key, path)) return value;
  }
  return std::nullopt;
}

const volume_facts* find_volume(const host_facts& facts, const std::string& path) {
  const volume_facts* best = nullptr;
  for (const auto& v : facts.volumes) {
    if (detail::is_within(path, v.root) && (best == nullptr || v.root.size() > best->root.size())) best = &v;
  }
  return best;
}

host_facts reference_host_facts() {
  host_facts f;
  f.windows_version = "10.0.19045 (reference shape)";
  f.appcontainer_available = true;
  f.volumes.push_back({"C:\\", "NTFS", true});
  f.user_profile = "C:\\Users\\user";
  f.temp_directory = "C:\\Users\\user\\AppData\\Local\\Temp";
  f.system_root = "C:\\Windows";
  f.reference_shape = true;
  return f;
}

}  // namespace cordon::windows
