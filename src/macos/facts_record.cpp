// facts_record.cpp — the macOS backend's recorded host facts (backend.h; the
// format is docs/host-facts.md). A record describes a Mac; facts loaded from
// one are never `native`, so no plan compiled from them launches.
#include <limits>

#include "core/facts_record.h"
#include "macos/backend.h"
#include "macos/macos_plan.h"

namespace cordon::macos_impl {

result<host_facts> macos_backend::load_host_facts(std::string_view record, const compile_options& options) const {
  auto opened = core::facts_reader::open(record, "macos");
  if (!opened) return std::move(opened).error_value();
  core::facts_reader& r = *opened;
  macos_host_facts mac;
  mac.aliases = standard_macos_aliases();
  std::uint64_t port = 0;
  r.string("os_version", mac.os_version);
  r.string("home", mac.home);
  r.string("workspace", mac.workspace);
  r.string("user_temp_dir", mac.user_temp_dir);
  r.objects("aliases", [&, first = true](core::facts_reader& a) mutable {
    if (first) mac.aliases.clear();
    first = false;
    path_alias alias;
    a.string("link", alias.link);
    a.string("target", alias.target);
    mac.aliases.push_back(std::move(alias));
  });
  r.strings("homebrew_bin", mac.homebrew_bin);
  r.string("sandbox_exec", mac.sandbox_exec);
  r.boolean("sandbox_exec_present", mac.sandbox_exec_present);
  r.integer("broker_port", std::numeric_limits<std::uint16_t>::max(), port);
  if (auto done = r.finish(); !done) return std::move(done).error_value();
  mac.native = false;
  mac.broker_port = static_cast<std::uint16_t>(port);
  if (!options.home.empty()) mac.home = options.home;
  if (!options.workspace.empty()) mac.workspace = options.workspace;
  mac.home = canonical_macos_path(mac.home, mac.aliases);
  if (!mac.workspace.empty()) mac.workspace = canonical_macos_path(mac.workspace, mac.aliases);
  host_facts facts = to_host_facts(mac);
  facts.recorded = true;  // a description of a Mac: its plans never launch
  return facts;
}

result<std::string> macos_backend::record_host_facts(const host_facts& facts) const {
  const auto* mac = backend_facts_as<macos_host_facts>(facts);
  if (mac == nullptr) return make_error(error_code::unsupported_platform, "the host facts carry no macOS record");
  nlohmann::ordered_json j = core::facts_record("macos");
  j["os_version"] = mac->os_version;
  j["home"] = mac->home;
  j["workspace"] = mac->workspace;
  j["user_temp_dir"] = mac->user_temp_dir;
  nlohmann::ordered_json aliases = nlohmann::ordered_json::array();
  for (const auto& a : mac->aliases) aliases.push_back({{"link", a.link}, {"target", a.target}});
  j["aliases"] = aliases;
  j["homebrew_bin"] = mac->homebrew_bin;
  j["sandbox_exec"] = mac->sandbox_exec;
  j["sandbox_exec_present"] = mac->sandbox_exec_present;
  j["broker_port"] = mac->broker_port;
  return j.dump(2) + "\n";
}

}  // namespace cordon::macos_impl
