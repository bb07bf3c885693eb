// extension.cpp — reading and checking an extension manifest (extension.h).
#include "sidecars/extension.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>
#include <toml++/toml.h>

#include "cordon/policy_json.h"
#include "cordon/profiles.h"
#include "core/sha256.h"
#include "manifest/digest.h"
#include "manifest/manifest_text.h"
#include "manifest/toml_document.h"
#include "posix/unique_fd.h"

namespace cordon::sidecars {
namespace {

namespace gov = cordon::governance;

int line_of(const toml::node& node) { return static_cast<int>(node.source().begin.line); }
int line_of(const toml::key& key) { return static_cast<int>(key.source().begin.line); }

bool hex64(std::string_view s) {
  if (s.size() != 64) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

class reader {
 public:
  explicit reader(std::vector<extension_error>& errors) : errors_(errors) {}

  void fail(int line, std::string message) { errors_.push_back({line, std::move(message)}); }

  std::optional<std::string> string(const toml::node& node, std::string_view key) {
    if (auto v = node.value<std::string>(); v && node.is_string()) return *v;
    fail(line_of(node), "'" + std::string(key) + "' must be a string");
    return std::nullopt;
  }

  std::vector<std::string> strings(const toml::node& node, std::string_view key) {
    std::vector<std::string> out;
    const toml::array* array = node.as_array();
    if (array == nullptr) {
      fail(line_of(node), "'" + std::string(key) + "' must be an array of strings");
      return out;
    }
    for (const auto& item : *array) {
      if (auto s = string(item, key)) out.push_back(*s);
    }
    return out;
  }

  void extension(const toml::table& table, extension_manifest& m) {
    bool have_command = false;
    for (auto&& [key, node] : table) {
      std::string_view k = key.str();
      if (k == "name") {
        if (auto s = string(node, k)) {
          m.name = *s;
          if (!manifest::valid_name(m.name)) fail(line_of(node), "'name' must be 1-100 characters of [A-Za-z0-9._-]");
        }
      } else if (k == "version") {
        if (auto s = string(node, k)) m.version = *s;
      } else if (k == "command") {
        m.command = strings(node, k);
        have_command = true;
        if (m.command.empty()) fail(line_of(node), "'command' must name a program");
      } else if (k == "protocol") {
        if (auto s = string(node, k)) {
          auto p = protocol_from_string(*s);
          if (!p) fail(line_of(node), "'protocol' must be mcp, lsp or raw");
          else m.proto = *p;
        }
      } else if (k == "handshake_timeout_sec") {
        auto v = node.value<double>();
        if (!v || !(*v > 0 && *v <= 86400)) fail(line_of(node), "'handshake_timeout_sec' must be a number in (0, 86400]");
        else m.handshake_timeout_sec = *v;
      } else if (k == "sandbox_policy") {
        if (auto s = string(node, k)) m.sandbox_policy = *s;
      } else {
        fail(line_of(key), "unknown key '" + std::string(k) + "' in [extension]");
      }
    }
    if (m.name.empty()) fail(line_of(table), "[extension] needs 'name'");
    if (!have_command) fail(line_of(table), "[extension] needs 'command'");
  }

  void grant(const toml::table& table, extension_manifest& m) {
    const std::size_t errors_before = errors_.size();
    gov::capability_request r;
    r.risk = gov::risk_level::high;
    bool have_action = false;
    for (auto&& [key, node] : table) {
      std::string_view k = key.str();
      if (k == "action") {
        if (auto s = string(node, k)) {
          auto a = gov::action_kind_from_string(*s);
          // A grant is what the extension may ask the host for; running
          // commands on the host is never one (its sandbox is its authority).
          if (!a || gov::runs_command(*a)) {
            fail(line_of(node), "'action' must be one of filesystem_read, filesystem_write, network_outbound, "
                                "environment_access, secret_access, artifact_activation");
          } else {
            r.action = *a;
            have_action = true;
          }
        }
      } else if (k == "risk") {
        if (auto s = string(node, k)) {
          auto risk = gov::risk_level_from_string(*s);
          if (!risk) fail(line_of(node), "'risk' must be low, medium, high or critical");
          else r.risk = *risk;
        }
      } else if (k == "tool") {
        if (auto s = string(node, k)) r.tool = *s;
      } else if (k == "paths") {
        r.paths = strings(node, k);
      } else if (k == "hosts") {
        r.hosts = strings(node, k);
      } else if (k == "variables") {
        r.variables = strings(node, k);
      } else {
        fail(line_of(key), "unknown key '" + std::string(k) + "' in [[grant]]");
      }
    }
    if (!have_action) fail(line_of(table), "[[grant]] needs 'action'");
    r.subject_id = m.name;
    if (errors_.size() > errors_before) return;  // normalizing a broken grant would only repeat it
    if (auto normal = gov::normalize_capability_request(r); !normal) {
      fail(line_of(table), "[[grant]]: " + normal.error_value().location + ": " + normal.error_value().message);
    }
    m.grants.push_back(std::move(r));
    m.grant_lines.push_back(line_of(table));
  }

  void file(const toml::table& table, extension_manifest& m) {
    extension_file f;
    f.line = line_of(table);
    for (auto&& [key, node] : table) {
      std::string_view k = key.str();
      if (k == "path") {
        if (auto s = string(node, k)) {
          f.path = *s;
          if (!manifest::stays_inside(f.path)) fail(line_of(node), "'path' must be relative to the manifest, without '..'");
        }
      } else if (k == "sha256") {
        if (auto s = string(node, k)) {
          f.sha256 = *s;
          if (!hex64(f.sha256)) fail(line_of(node), "'sha256' must be 64 lower-case hex digits");
        }
      } else {
        fail(line_of(key), "unknown key '" + std::string(k) + "' in [[file]]");
      }
    }
    if (f.path.empty() || f.sha256.empty()) fail(f.line, "[[file]] needs 'path' and 'sha256'");
    for (const auto& other : m.files) {
      if (other.path == f.path) fail(f.line, "file '" + f.path + "' is listed twice");
    }
    m.files.push_back(std::move(f));
  }

 private:
  std::vector<extension_error>& errors_;
};

std::string describe_grant(const gov::capability_request& r, std::size_t index) {
  std::string out = "grant " + std::to_string(index + 1) + " (" + std::string(gov::to_string(r.action));
  for (const auto* list : {&r.paths, &r.hosts, &r.variables}) {
    for (const auto& s : *list) out += " " + s;
  }
  if (!r.tool.empty()) out += ", tool " + r.tool;
  return out + ")";
}

}  // namespace

extension_result parse_extension_manifest(std::string_view text, const std::string& path) {
  extension_result out;
  manifest::toml_syntax_error syntax;
  std::optional<toml::table> parsed = manifest::parse_toml(text, path, syntax);
  if (!parsed) {
    out.errors.push_back({syntax.line, syntax.message});
    return out;
  }
  toml::table root = std::move(*parsed);
  extension_manifest m;
  m.path = path;
  m.directory = manifest::manifest_directory_of(path);
  m.digest = manifest::sha256_digest(text);
  reader r(out.errors);
  bool have_extension = false;
  for (auto&& [key, node] : root) {
    std::string_view k = key.str();
    const toml::array* array = node.as_array();
    if (k == "extension" && node.is_table()) {
      have_extension = true;
      r.extension(*node.as_table(), m);
    } else if ((k == "grant" || k == "file") && array != nullptr && array->is_array_of_tables()) {
      for (const auto& item : *array) {
        if (k == "grant") r.grant(*item.as_table(), m);
        else r.file(*item.as_table(), m);
      }
    } else if (k == "extension" || k == "grant" || k == "file") {
      out.errors.push_back({line_of(key), k == "extension" ? "'extension' must be a [extension] table"
                                                            : "'" + std::string(k) + "' must be [[" + std::string(k) + "]] tables"});
    } else {
      out.errors.push_back({line_of(key), "unknown top-level key '" + std::string(k) + "' ([extension], [[grant]], [[file]])"});
    }
  }
  if (!have_extension && out.errors.empty()) out.errors.push_back({0, path + ": no [extension] table"});
  std::stable_sort(out.errors.begin(), out.errors.end(),
                   [](const extension_error& a, const extension_error& b) { return a.line < b.line; });
  if (out.errors.empty()) out.manifest = std::move(m);
  return out;
}

extension_result load_extension_manifest(const std::string& path) {
  std::string failure;
  auto text = manifest::read_manifest_text(path, failure);
  if (!text) return {std::nullopt, {{0, failure}}};
  return parse_extension_manifest(*text, path);
}

std::vector<std::string> verify_extension_files(const extension_manifest& manifest) {
  std::vector<std::string> problems;
  for (const auto& f : manifest.files) {
    const std::string full = manifest.directory + "/" + f.path;
    unique_fd fd(::open(full.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
    struct stat st {};
    if (!fd || ::fstat(fd.get(), &st) != 0) {
      problems.push_back(f.path + ": cannot open: " + std::error_code(errno, std::generic_category()).message());
      continue;
    }
    if (!S_ISREG(st.st_mode)) {
      problems.push_back(f.path + ": not a regular file");
      continue;
    }
    std::string bytes;
    char buffer[65536];
    ssize_t n;
    while ((n = ::read(fd.get(), buffer, sizeof buffer)) > 0) bytes.append(buffer, static_cast<std::size_t>(n));
    if (n < 0) {
      problems.push_back(f.path + ": cannot read: " + std::error_code(errno, std::generic_category()).message());
      continue;
    }
    std::string actual = detail::sha256_hex(bytes);
    if (actual != f.sha256) problems.push_back(f.path + ": sha256 is " + actual + ", the manifest says " + f.sha256);
  }
  return problems;
}

std::vector<grant_decision> judge_grants(const extension_manifest& manifest, const gov::capability_policy& rules) {
  std::vector<grant_decision> out;
  for (std::size_t i = 0; i < manifest.grants.size(); ++i) {
    auto verdict = rules.evaluate(manifest.grants[i]);
    out.push_back({describe_grant(manifest.grants[i], i), verdict.decision, verdict.reason, verdict.rule_id});
  }
  return out;
}

result<sandbox_policy> load_policy_reference(const std::string& ref, const std::string& base_directory) {
  if (ref.find_first_of("/\\") == std::string::npos && ref.find(".json") == std::string::npos) {
    return builtin_profile(ref);
  }
  auto file = manifest::resolve_manifest_path(base_directory, ref, manifest::host_path_style());
  if (!file) {
    return make_error(error_code::usage_error, "sandbox_policy '" + ref +
                                                   "' is relative to the current drive or to a drive's current "
                                                   "directory; name the file with a drive or relative to the manifest");
  }
  return load_sandbox_policy(*file);
}

result<sandbox_policy> load_extension_policy(const extension_manifest& manifest) {
  return load_policy_reference(manifest.sandbox_policy, manifest.directory);
}

}  // namespace cordon::sidecars
