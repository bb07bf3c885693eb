// toml_document.h — reading a TOML manifest (gate manifests, docs/gates.md;
// extension manifests, docs/sidecars.md): the syntax step both share.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <toml++/toml.h>

namespace cordon::manifest {

// A TOML syntax error: toml++ stops at the first, with its line (1-based).
struct toml_syntax_error {
  int line = 0;
  std::string message;
};

// Parses `text`; `path` names the source in toml++'s positions. nullopt on
// a syntax error, described in `error`.
inline std::optional<toml::table> parse_toml(std::string_view text, const std::string& path, toml_syntax_error& error) {
  try {
    return toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    error = {static_cast<int>(e.source().begin.line), std::string(e.description())};
    return std::nullopt;
  }
}

// The directory a manifest's relative paths are resolved against.
inline std::string manifest_directory_of(const std::string& path) {
  auto slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace cordon::manifest
