// manifest.cpp — reading the gate manifest with toml++ (header-only here, so
// the CLI loads no extra shared library: docs/benchmarks.md counts each one).
#include "gates/manifest.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#define TOML_HEADER_ONLY 1
#define TOML_EXCEPTIONS 1
#include <toml++/toml.h>

#include "cordon/policy_json.h"
#include "cordon/profiles.h"
#include "manifest/digest.h"
#include "manifest/manifest_text.h"
#include "manifest/toml_document.h"

namespace cordon::gates {

using manifest::manifest_directory_of;
using manifest::parse_toml;
using manifest::read_manifest_text;
using manifest::sha256_digest;
using manifest::stays_inside;
using manifest::toml_syntax_error;
using manifest::valid_name;

namespace {

int line_of(const toml::node& node) { return static_cast<int>(node.source().begin.line); }
int line_of(const toml::key& key) { return static_cast<int>(key.source().begin.line); }

class gate_reader {
 public:
  explicit gate_reader(std::vector<manifest_error>& errors) : errors_(errors) {}

  gate_spec read(const toml::table& table) {
    gate_spec gate;
    gate.line = line_of(table);
    const toml::node* cmd = nullptr;
    for (auto&& [key, node] : table) {
      std::string_view k = key.str();
      if (k == "name") string(node, k, gate.name);
      else if (k == "cmd") cmd = &node;
      else if (k == "shell") boolean(node, k, gate.shell);
      else if (k == "accept_findings") boolean(node, k, gate.accept_findings);
      else if (k == "env") read_os(node, gate.os);
      else if (k == "timeout_sec") read_timeout(node, gate.timeout_ms);
      else if (k == "sandbox_policy") read_policy(node, gate);
      else if (k == "workdir") read_workdir(node, gate.workdir);
      else if (k == "needs") string_list(node, k, gate.needs);
      else if (k == "setenv") read_setenv(node, gate.setenv);
      else fail(line_of(key), "unknown key '" + std::string(k) + "' in [[gate]]");
    }
    if (!table.contains("name")) fail(gate.line, "[[gate]] has no 'name'");
    else if (!gate.name.empty() && !valid_name(gate.name)) {
      fail(line_of(*table.get("name")), "gate name '" + gate.name + "' must be 1-100 of [A-Za-z0-9._-]");
    }
    if (cmd == nullptr) fail(gate.line, "[[gate]] has no 'cmd'");
    else read_cmd(*cmd, gate);
    return gate;
  }

 private:
  void fail(int line, std::string message) { errors_.push_back({line, std::move(message)}); }

  void string(const toml::node& node, std::string_view key, std::string& out) {
    if (auto s = node.value<std::string>(); s && node.is_string()) out = *s;
    else fail(line_of(node), "'" + std::string(key) + "' must be a string");
  }
  void boolean(const toml::node& node, std::string_view key, bool& out) {
    if (node.is_boolean()) out = *node.value<bool>();
    else fail(line_of(node), "'" + std::string(key) + "' must be true or false");
  }
  void string_list(const toml::node& node, std::string_view key, std::vector<std::string>& out) {
    const toml::array* array = node.as_array();
    if (array == nullptr) return fail(line_of(node), "'" + std::string(key) + "' must be an array of strings");
    for (const auto& item : *array) {
      if (!item.is_string()) return fail(line_of(item), "'" + std::string(key) + "' must be an array of strings");
      out.push_back(*item.value<std::string>());
    }
  }
  void read_cmd(const toml::node& node, gate_spec& gate) {
    if (node.is_string()) {
      // A string is a shell command line: only when the manifest says so, so
      // that quoting is never guessed.
      if (!gate.shell) return fail(line_of(node), "'cmd' is a string: write an argv array, or set shell = true");
      gate.argv = {"/bin/sh", "-c", *node.value<std::string>()};
      return;
    }
    if (gate.shell) return fail(line_of(node), "shell = true needs 'cmd' as one string");
    string_list(node, "cmd", gate.argv);
    if (node.is_array() && gate.argv.empty()) fail(line_of(node), "'cmd' must not be empty");
  }
  void read_os(const toml::node& node, target_os& out) {
    static const std::map<std::string, target_os, std::less<>> names = {
        {"any", target_os::any}, {"linux", target_os::linux_os}, {"macos", target_os::macos},
        {"windows", target_os::windows}};
    auto s = node.value<std::string>();
    auto it = s && node.is_string() ? names.find(*s) : names.end();
    if (it == names.end()) return fail(line_of(node), "'env' must be one of linux, macos, windows, any");
    out = it->second;
  }
  void read_timeout(const toml::node& node, std::optional<std::uint64_t>& out) {
    double seconds = 0;
    if (node.is_integer()) seconds = static_cast<double>(*node.value<std::int64_t>());
    else if (node.is_floating_point()) seconds = *node.value<double>();
    else return fail(line_of(node), "'timeout_sec' must be a number of seconds");
    // The same ceiling as a policy's timeout (include/cordon/policy.h).
    if (!(seconds >= 0.001) || seconds > static_cast<double>(max_timeout_ms) / 1000.0) {
      return fail(line_of(node), "'timeout_sec' must be at least 0.001 and at most 10^12");
    }
    out = static_cast<std::uint64_t>(seconds * 1000.0 + 0.5);
  }
  void read_policy(const toml::node& node, gate_spec& gate) {
    if (const toml::table* table = node.as_table()) {
      toml::table copy = *table;
      // The inline table is the policy JSON's object; schema_version 1 is implied.
      if (!copy.contains("schema_version")) copy.insert("schema_version", policy_schema_version);
      std::ostringstream json;
      json << toml::json_formatter{copy};
      gate.policy = policy_kind::inline_table;
      gate.policy_ref = "inline";
      gate.policy_json = json.str();
      return;
    }
    if (!node.is_string()) return fail(line_of(node), "'sandbox_policy' must be a profile name, a file or a table");
    std::string ref = *node.value<std::string>();
    auto names = builtin_profile_names();
    bool is_profile = std::find(names.begin(), names.end(), ref) != names.end();
    gate.policy = is_profile ? policy_kind::profile : policy_kind::file;
    gate.policy_ref = ref;
    if (!is_profile && ref.find_first_of("/\\") == std::string::npos && ref.find(".json") == std::string::npos &&
        manifest::classify_path(ref, manifest::path_style::windows) == manifest::path_kind::relative) {
      // Kept as a profile name: another OS's profile can be named here; it is
      // an error only for a gate that runs on this host (load_gate_policy).
      gate.policy = policy_kind::profile;
    }
  }
  void read_workdir(const toml::node& node, std::string& out) {
    string(node, "workdir", out);
    if (node.is_string() && !stays_inside(out)) {
      fail(line_of(node), "'workdir' must be a relative path inside the manifest's directory, without '..'");
    }
  }
  void read_setenv(const toml::node& node, std::vector<std::pair<std::string, std::string>>& out) {
    const toml::table* table = node.as_table();
    if (table == nullptr) return fail(line_of(node), "'setenv' must be a table of NAME = \"value\"");
    for (auto&& [key, value] : *table) {
      std::string name(key.str());
      // An environment entry is NAME=VALUE up to a NUL (execve(2)).
      if (name.empty() || name.find_first_of(std::string("=\0", 2)) != std::string::npos) {
        const bool nul = name.find('\0') != std::string::npos;
        fail(line_of(key), "bad variable name " + (nul ? std::string("(it holds a NUL)") : "'" + name + "'"));
      } else if (!value.is_string()) {
        fail(line_of(value), "setenv." + name + " must be a string");
      } else if (value.value<std::string>()->find('\0') != std::string::npos) {
        fail(line_of(value), "setenv." + name + " must not contain NUL");
      } else {
        out.emplace_back(name, *value.value<std::string>());
      }
    }
  }

  std::vector<manifest_error>& errors_;
};

void check_graph(const std::vector<gate_spec>& gates, std::vector<manifest_error>& errors) {
  std::map<std::string, const gate_spec*> by_name;
  for (const auto& g : gates) {
    if (g.name.empty()) continue;
    auto [it, inserted] = by_name.emplace(g.name, &g);
    if (!inserted) {
      errors.push_back({g.line, "duplicate gate name '" + g.name + "' (first at line " +
                                    std::to_string(it->second->line) + ")"});
    }
  }
  bool unknown = false;
  for (const auto& g : gates) {
    for (const auto& n : g.needs) {
      if (!by_name.contains(n)) {
        errors.push_back({g.line, "gate '" + g.name + "' needs '" + n + "', which is not a gate"});
        unknown = true;
      }
    }
  }
  if (unknown) return;
  // Depth-first search; a gate met again while on the path closes a cycle.
  std::map<std::string, int> state;  // 0 unseen, 1 on the path, 2 done
  std::vector<std::string> path;
  std::function<bool(const gate_spec&)> visit = [&](const gate_spec& g) {
    state[g.name] = 1;
    path.push_back(g.name);
    for (const auto& n : g.needs) {
      if (state[n] == 1) {
        std::string cycle;
        auto at = std::find(path.begin(), path.end(), n);
        for (; at != path.end(); ++at) cycle += *at + " -> ";
        errors.push_back({by_name[n]->line, "needs cycle: " + cycle + n});
        return false;
      }
      if (state[n] == 0 && !visit(*by_name[n])) return false;
    }
    path.pop_back();
    state[g.name] = 2;
    return true;
  };
  for (const auto& g : gates) {
    if (!g.name.empty() && state[g.name] == 0 && !visit(g)) return;
  }
}

}  // namespace

std::string_view to_string(target_os os) noexcept {
  switch (os) {
    case target_os::any: return "any";
    case target_os::linux_os: return "linux";
    case target_os::macos: return "macos";
    case target_os::windows: return "windows";
  }
  return "any";
}

target_os host_os() noexcept {
#if defined(__APPLE__)
  return target_os::macos;
#elif defined(_WIN32)
  return target_os::windows;
#else
  return target_os::linux_os;
#endif
}

manifest_result parse_manifest(std::string_view text, const std::string& path) {
  manifest_result out;
  toml_syntax_error syntax;
  std::optional<toml::table> parsed = parse_toml(text, path, syntax);
  if (!parsed) {
    out.errors.push_back({syntax.line, syntax.message});
    return out;
  }
  toml::table root = std::move(*parsed);
  gate_manifest manifest;
  manifest.path = path;
  manifest.directory = manifest_directory_of(path);
  manifest.digest = sha256_digest(text);
  gate_reader reader(out.errors);
  for (auto&& [key, node] : root) {
    if (key.str() != "gate") {
      out.errors.push_back({line_of(key), "unknown top-level key '" + std::string(key.str()) + "' (only [[gate]])"});
      continue;
    }
    const toml::array* gates = node.as_array();
    if (gates == nullptr || !gates->is_array_of_tables()) {
      out.errors.push_back({line_of(node), "'gate' must be written as [[gate]] tables"});
      continue;
    }
    for (const auto& g : *gates) manifest.gates.push_back(reader.read(*g.as_table()));
  }
  if (manifest.gates.empty() && out.errors.empty()) out.errors.push_back({0, path + ": no [[gate]] in the manifest"});
  check_graph(manifest.gates, out.errors);
  std::stable_sort(out.errors.begin(), out.errors.end(),
                   [](const manifest_error& a, const manifest_error& b) { return a.line < b.line; });
  if (out.errors.empty()) out.manifest = std::move(manifest);
  return out;
}

manifest_result load_manifest(const std::string& path) {
  std::string failure;
  auto text = read_manifest_text(path, failure);
  if (!text) return {std::nullopt, {{0, failure}}};
  return parse_manifest(*text, path);
}

manifest::path_style path_style_of(target_os os) noexcept {
  if (os == target_os::any) return manifest::host_path_style();
  return os == target_os::windows ? manifest::path_style::windows : manifest::path_style::posix;
}

result<sandbox_policy> load_gate_policy(const gate_spec& gate, const std::string& manifest_directory) {
  switch (gate.policy) {
    case policy_kind::profile: return builtin_profile(gate.policy_ref);
    case policy_kind::inline_table: return sandbox_policy_from_json(gate.policy_json);
    case policy_kind::file: {
      auto file = manifest::resolve_manifest_path(manifest_directory, gate.policy_ref, path_style_of(gate.os));
      if (!file) {
        return make_error(error_code::usage_error,
                          "sandbox_policy '" + gate.policy_ref +
                              "' is relative to the current drive or to a drive's current directory; name the file "
                              "with a drive (C:\\x\\p.json), as a UNC path, or relative to the manifest");
      }
      return load_sandbox_policy(*file);
    }
  }
  return make_error(error_code::usage_error, "no policy");
}

}  // namespace cordon::gates
