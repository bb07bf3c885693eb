// src/windows/facts_record.cpp — the Windows backend's recorded host facts
// (cordon/windows/compile.h; the format is docs/host-facts.md).
#include <limits>

#include "core/facts_record.h"
#include "cordon/windows/compile.h"

namespace cordon::windows {
namespace {

void read_path(core::facts_reader& r, path_facts& p) {
  std::uint64_t links = 1, serial = 0;
  r.boolean("exists", p.exists);
  r.boolean("directory", p.directory);
  r.boolean("reparse_point", p.reparse_point);
  r.integer("link_count", std::numeric_limits<std::uint32_t>::max(), links);
  r.strings("multi_link_descendants", p.multi_link_descendants);
  r.boolean("scan_truncated", p.scan_truncated);
  r.strings("repositories", p.repositories);
  r.integer("volume_serial", std::numeric_limits<std::uint32_t>::max(), serial);
  r.integer("file_index", std::numeric_limits<std::uint64_t>::max(), p.file_index);
  p.link_count = static_cast<std::uint32_t>(links);
  p.volume_serial = static_cast<std::uint32_t>(serial);
}

}  // namespace

result<cordon::host_facts> windows_backend::load_host_facts(std::string_view record,
                                                            const compile_options& options) const {
  auto opened = core::facts_reader::open(record, "windows");
  if (!opened) return std::move(opened).error_value();
  core::facts_reader& r = *opened;
  host_facts f;
  std::string workspace;
  r.string("windows_version", f.windows_version);
  r.boolean("wine", f.wine);
  r.boolean("appcontainer_available", f.appcontainer_available);
  r.boolean("job_objects", f.job_objects);
  r.objects("volumes", [&](core::facts_reader& v) {
    volume_facts volume;
    v.string("root", volume.root);
    v.string("filesystem", volume.filesystem);
    v.boolean("persistent_acls", volume.persistent_acls);
    f.volumes.push_back(std::move(volume));
  });
  r.members("paths", [&](const std::string& path, core::facts_reader& p) { read_path(p, f.paths[path]); });
  r.string_pairs("environment", f.environment);
  r.string("user_profile", f.user_profile);
  r.string("temp_directory", f.temp_directory);
  r.string("system_root", f.system_root);
  r.boolean("reference_shape", f.reference_shape);
  r.string("workspace", workspace);
  if (auto done = r.finish(); !done) return std::move(done).error_value();
  f.recorded = true;  // a description of a Windows host: its plans never launch
  windows_compile_options invocation;
  invocation.workspace = options.workspace.empty() ? workspace : options.workspace;
  cordon::host_facts h = to_driver_facts(f, invocation);
  h.workspace = workspace;
  return h;
}

result<std::string> windows_backend::record_host_facts(const cordon::host_facts& facts) const {
  const auto* w = backend_facts_as<windows_backend_facts>(facts);
  if (w == nullptr) return make_error(error_code::unsupported_platform, "the host facts carry no Windows record");
  const host_facts& f = w->host;
  nlohmann::ordered_json j = core::facts_record("windows");
  j["windows_version"] = f.windows_version;
  j["wine"] = f.wine;
  j["appcontainer_available"] = f.appcontainer_available;
  j["job_objects"] = f.job_objects;
  nlohmann::ordered_json volumes = nlohmann::ordered_json::array();
  for (const auto& v : f.volumes) {
    volumes.push_back({{"root", v.root}, {"filesystem", v.filesystem}, {"persistent_acls", v.persistent_acls}});
  }
  j["volumes"] = volumes;
  nlohmann::ordered_json paths = nlohmann::ordered_json::object();
  for (const auto& [path, p] : f.paths) {
    paths[path] = {{"exists", p.exists},
                   {"directory", p.directory},
                   {"reparse_point", p.reparse_point},
                   {"link_count", p.link_count},
                   {"multi_link_descendants", p.multi_link_descendants},
                   {"scan_truncated", p.scan_truncated},
                   {"repositories", p.repositories},
                   {"volume_serial", p.volume_serial},
                   {"file_index", p.file_index}};
  }
  j["paths"] = paths;
  nlohmann::ordered_json environment = nlohmann::ordered_json::object();
  for (const auto& [name, value] : f.environment) environment[name] = value;
  j["environment"] = environment;
  j["user_profile"] = f.user_profile;
  j["temp_directory"] = f.temp_directory;
  j["system_root"] = f.system_root;
  j["reference_shape"] = f.reference_shape;
  j["workspace"] = facts.workspace;
  return j.dump(2) + "\n";
}

}  // namespace cordon::windows
