// capability_request.cpp — request names, normalization, JSON, digests.
#include "cordon/governance/capability_request.h"

#include <algorithm>
#include <array>
#include <utility>

#include "core/sha256.h"
#include "governance/host_port.h"
#include "governance/json_util.h"

namespace cordon::governance {
namespace {

using detail::json;

constexpr std::array<std::pair<action_kind, std::string_view>, 10> kActions = {{
    {action_kind::python, "python"},
    {action_kind::process, "process"},
    {action_kind::shell, "shell"},
    {action_kind::filesystem_read, "filesystem_read"},
    {action_kind::filesystem_write, "filesystem_write"},
    {action_kind::network_outbound, "network_outbound"},
    {action_kind::environment_access, "environment_access"},
    {action_kind::secret_access, "secret_access"},
    {action_kind::artifact_activation, "artifact_activation"},
    {action_kind::exploration_execution, "exploration_execution"},
}};
constexpr std::array<std::pair<risk_level, std::string_view>, 4> kRisks = {{
    {risk_level::low, "low"}, {risk_level::medium, "medium"}, {risk_level::high, "high"}, {risk_level::critical, "critical"}}};

bool valid_variable_name(std::string_view name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

error invalid_at(const std::string& where, std::string why) { return detail::invalid(where, std::move(why)); }

result<void> check_texts(const std::vector<std::string>& list, const std::string& where) {
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (!detail::valid_text(list[i])) return invalid_at(where + "/" + std::to_string(i), "not UTF-8 text (or has a NUL)");
  }
  return ok;
}

json to_json_value(const capability_request& r, bool normalized) {
  auto sorted = [normalized](std::vector<std::string> list) {
    if (normalized) {
      std::sort(list.begin(), list.end());
      list.erase(std::unique(list.begin(), list.end()), list.end());
    }
    return list;
  };
  json out = {
      {"action", to_string(r.action)},
      {"risk", to_string(r.risk)},
      {"argv", r.argv},
      {"command", r.command},
      {"working_directory", r.working_directory},
      {"resources", {{"paths", sorted(r.paths)}, {"hosts", sorted(r.hosts)}, {"variables", sorted(r.variables)}}},
      {"tool", r.tool},
      {"subject_id", r.subject_id},
  };
  if (!normalized) {
    out["schema_version"] = capability_request_schema_version;
    out["trace_id"] = r.trace_id;
    out["boundary_revision"] = r.boundary_revision ? json(*r.boundary_revision) : json(nullptr);
    out["host_metadata"] = r.host_metadata;
  }
  return out;
}

}  // namespace

std::string_view to_string(action_kind kind) noexcept {
  for (const auto& [k, name] : kActions) {
    if (k == kind) return name;
  }
  return "unknown";
}

std::string_view to_string(risk_level risk) noexcept {
  for (const auto& [k, name] : kRisks) {
    if (k == risk) return name;
  }
  return "unknown";
}

std::optional<action_kind> action_kind_from_string(std::string_view name) noexcept {
  for (const auto& [k, spelling] : kActions) {
    if (spelling == name) return k;
  }
  return std::nullopt;
}

std::optional<risk_level> risk_level_from_string(std::string_view name) noexcept {
  for (const auto& [k, spelling] : kRisks) {
    if (spelling == name) return k;
  }
  return std::nullopt;
}

bool runs_command(action_kind kind) noexcept {
  return kind == action_kind::python || kind == action_kind::process || kind == action_kind::shell ||
         kind == action_kind::exploration_execution;
}

std::string sha256_digest(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  auto digest = cordon::detail::sha256(bytes);
  std::string out = "sha256:";
  for (auto b : digest) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 0xF]);
  }
  return out;
}

result<std::string> normalize_absolute_path(std::string_view path) {
  if (path.empty() || path.front() != '/') {
    return make_error(error_code::invalid_policy, "not an absolute path: \"" + std::string(path) + "\"");
  }
  std::vector<std::string_view> parts;
  std::size_t i = 0;
  while (i < path.size()) {
    auto next = path.find('/', i);
    if (next == std::string_view::npos) next = path.size();
    auto part = path.substr(i, next - i);
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    i = next + 1;
  }
  std::string out;
  for (auto part : parts) {
    out += '/';
    out += part;
  }
  return out.empty() ? std::string("/") : out;
}

result<void> normalize_capability_request(capability_request& r) {
  bool needs_argv = runs_command(r.action) && r.action != action_kind::shell;
  if (r.action == action_kind::shell) {
    if (r.command.empty()) return invalid_at("/command", "a shell request needs a command");
    if (!r.argv.empty()) return invalid_at("/argv", "a shell request carries its command in \"command\", not argv");
  } else if (needs_argv) {
    if (r.argv.empty() || r.argv[0].empty()) return invalid_at("/argv", "this action needs a non-empty argv");
    if (!r.command.empty()) return invalid_at("/command", "only a shell request has a command line");
  } else if (!r.argv.empty() || !r.command.empty()) {
    return invalid_at(r.argv.empty() ? "/command" : "/argv", "this action runs no command");
  }
  if (!detail::valid_text(r.command)) return invalid_at("/command", "not UTF-8 text (or has a NUL)");
  for (auto* list : {&r.argv, &r.paths, &r.hosts, &r.variables}) {
    std::string where = list == &r.argv ? "/argv" : list == &r.paths ? "/resources/paths"
                        : list == &r.hosts ? "/resources/hosts" : "/resources/variables";
    if (auto checked = check_texts(*list, where); !checked) return checked;
  }
  for (const auto* s : {&r.tool, &r.trace_id, &r.subject_id, &r.working_directory}) {
    if (!detail::valid_text(*s)) return invalid_at("", "a request string is not UTF-8 text (or has a NUL)");
  }
  for (const auto& [key, value] : r.host_metadata) {
    if (!detail::valid_text(key) || !detail::valid_text(value)) {
      return invalid_at("/host_metadata", "host metadata must be UTF-8 text");
    }
  }
  if (!r.working_directory.empty()) {
    auto normal = normalize_absolute_path(r.working_directory);
    if (!normal) return invalid_at("/working_directory", normal.error_value().message);
    r.working_directory = *normal;
  }
  for (std::size_t i = 0; i < r.paths.size(); ++i) {
    auto normal = normalize_absolute_path(r.paths[i]);
    if (!normal) return invalid_at("/resources/paths/" + std::to_string(i), normal.error_value().message);
    r.paths[i] = *normal;
  }
  for (std::size_t i = 0; i < r.hosts.size(); ++i) {
    auto destination = detail::parse_destination(r.hosts[i]);
    if (!destination) return invalid_at("/resources/hosts/" + std::to_string(i), destination.error_value().message);
    r.hosts[i] = detail::format_destination(*destination);
  }
  for (std::size_t i = 0; i < r.variables.size(); ++i) {
    if (!valid_variable_name(r.variables[i])) {
      return invalid_at("/resources/variables/" + std::to_string(i), "not a variable name: \"" + r.variables[i] + "\"");
    }
  }
  return ok;
}

result<capability_request> capability_request_from_json(std::string_view text) {
  auto doc = detail::parse_document(text);
  if (!doc) return std::move(doc).error_value();
  const json& j = *doc;
  if (auto keys = detail::check_keys(j, {"schema_version", "action", "risk", "argv", "command", "working_directory",
                                         "resources", "tool", "trace_id", "subject_id", "boundary_revision",
                                         "host_metadata"}, "");
      !keys) {
    return std::move(keys).error_value();
  }
  capability_request r;
  auto version = j.find("schema_version");
  if (version == j.end() || !version->is_number_integer() || *version != capability_request_schema_version) {
    return invalid_at("/schema_version", "schema_version must be 1");
  }
  auto action = detail::get_string(j, "action", "", true);
  if (!action) return std::move(action).error_value();
  auto kind = action_kind_from_string(*action);
  if (!kind) return invalid_at("/action", "unknown action \"" + *action + "\"");
  r.action = *kind;
  auto risk = detail::get_string(j, "risk", "", true);
  if (!risk) return std::move(risk).error_value();
  auto level = risk_level_from_string(*risk);
  if (!level) return invalid_at("/risk", "unknown risk \"" + *risk + "\" (low, medium, high, critical)");
  r.risk = *level;
  auto argv = detail::get_strings(j, "argv", "");
  if (!argv) return std::move(argv).error_value();
  r.argv = std::move(*argv);
  for (auto [key, field] : {std::pair{"command", &r.command}, std::pair{"working_directory", &r.working_directory},
                            std::pair{"tool", &r.tool}, std::pair{"trace_id", &r.trace_id},
                            std::pair{"subject_id", &r.subject_id}}) {
    auto value = detail::get_string(j, key, "", false);
    if (!value) return std::move(value).error_value();
    *field = std::move(*value);
  }
  if (auto res = j.find("resources"); res != j.end()) {
    if (auto keys = detail::check_keys(*res, {"paths", "hosts", "variables"}, "/resources"); !keys) {
      return std::move(keys).error_value();
    }
    for (auto [key, field] : {std::pair{"paths", &r.paths}, std::pair{"hosts", &r.hosts},
                              std::pair{"variables", &r.variables}}) {
      auto list = detail::get_strings(*res, key, "/resources");
      if (!list) return std::move(list).error_value();
      *field = std::move(*list);
    }
  }
  if (auto rev = j.find("boundary_revision"); rev != j.end() && !rev->is_null()) {
    if (!rev->is_number_unsigned()) return invalid_at("/boundary_revision", "expected a revision number");
    r.boundary_revision = rev->get<std::uint64_t>();
  }
  if (auto meta = j.find("host_metadata"); meta != j.end()) {
    if (!meta->is_object()) return invalid_at("/host_metadata", "expected an object of strings");
    for (const auto& [key, value] : meta->items()) {
      if (!value.is_string()) return invalid_at("/host_metadata/" + key, "expected a string");
      r.host_metadata[key] = value.get<std::string>();
    }
  }
  if (auto normal = normalize_capability_request(r); !normal) return std::move(normal).error_value();
  return r;
}

std::string canonical_json(const capability_request& request) {
  return detail::canonical(to_json_value(request, false));
}

std::string normalized_form(const capability_request& request) {
  return detail::canonical(to_json_value(request, true));
}

std::string request_digest(const capability_request& request) { return sha256_digest(canonical_json(request)); }

}  // namespace cordon::governance
