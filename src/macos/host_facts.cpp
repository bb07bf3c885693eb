// host_facts.cpp — the /private aliases and the example facts used off a Mac.
#include "macos/host_facts.h"

namespace cordon::macos_impl {

std::vector<path_alias> standard_macos_aliases() {
  return {{"/var", "/private/var"}, {"/tmp", "/private/tmp"}, {"/etc", "/private/etc"}};
}

macos_host_facts example_macos_host_facts(std::string home, std::string workspace) {
  macos_host_facts facts;
  facts.native = false;
  facts.os_version = "14.5";
  facts.aliases = standard_macos_aliases();
  facts.home = canonical_macos_path(home, facts.aliases);
  facts.workspace = workspace.empty() ? std::string() : canonical_macos_path(workspace, facts.aliases);
  facts.user_temp_dir = "/private/var/folders/zz/cordon/T";
  facts.sandbox_exec_present = true;
  facts.homebrew_bin = {"/opt/homebrew/bin", "/opt/homebrew/sbin"};
  facts.broker_port = 3128;
  return facts;
}

bool macos_path_within(const std::string& path, const std::string& root) {
  if (root == "/") return !path.empty() && path.front() == '/';
  if (path.size() < root.size() || path.compare(0, root.size(), root) != 0) return false;
  return path.size() == root.size() || path[root.size()] == '/';
}

std::string canonical_macos_path(const std::string& path, const std::vector<path_alias>& aliases) {
  for (const auto& alias : aliases) {
    if (macos_path_within(path, alias.link)) return alias.target + path.substr(alias.link.size());
  }
  return path;
}

std::string alias_spelling(const std::string& canonical, const std::vector<path_alias>& aliases) {
  for (const auto& alias : aliases) {
    if (macos_path_within(canonical, alias.target)) return alias.link + canonical.substr(alias.target.size());
  }
  return {};
}

}  // namespace cordon::macos_impl
