// content_trust.cpp — provenance labels, the trust guardrail, the renderer.
#include "cordon/governance/content_trust.h"

#include <array>

namespace cordon::governance {
namespace {

constexpr std::array<std::pair<trust_level, std::string_view>, 6> kTrust = {{{trust_level::system, "system"},
                                                                            {trust_level::application, "application"},
                                                                            {trust_level::user, "user"},
                                                                            {trust_level::retrieved, "retrieved"},
                                                                            {trust_level::tool_output, "tool_output"},
                                                                            {trust_level::untrusted, "untrusted"}}};

std::string escape(std::string_view text, bool attribute) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"':
        if (attribute) {
          out += "&quot;";
          break;
        }
        out += c;
        break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace

std::string_view to_string(trust_level t) noexcept {
  for (const auto& [k, name] : kTrust) {
    if (k == t) return name;
  }
  return "untrusted";
}

std::optional<trust_level> trust_level_from_string(std::string_view s) noexcept {
  for (const auto& [k, name] : kTrust) {
    if (name == s) return k;
  }
  return std::nullopt;
}

std::string_view to_string(guardrail_stage s) noexcept {
  switch (s) {
    case guardrail_stage::input: return "input";
    case guardrail_stage::retrieval: return "retrieval";
    case guardrail_stage::tool_output: return "tool_output";
    case guardrail_stage::memory_write: return "memory_write";
  }
  return "input";
}

bool is_reserved_metadata_key(std::string_view key) noexcept {
  return key == "trust" || key == "source" || key == "source_id" || key == "source_uri" ||
         key.substr(0, 15) == "cordon.content.";
}

void apply_provenance(std::map<std::string, std::string>& metadata, const content_provenance& p) {
  for (auto bare : {"trust", "source", "source_id", "source_uri"}) metadata.erase(bare);
  metadata[std::string(key_trust)] = std::string(to_string(p.trust));
  metadata[std::string(key_source)] = p.source;
  if (p.source_id.empty()) metadata.erase(std::string(key_source_id));
  else metadata[std::string(key_source_id)] = p.source_id;
  if (p.source_uri.empty()) metadata.erase(std::string(key_source_uri));
  else metadata[std::string(key_source_uri)] = p.source_uri;
}

result<void> set_extension_metadata(std::map<std::string, std::string>& metadata, const std::string& key,
                                    std::string value) {
  if (is_reserved_metadata_key(key)) {
    return make_error(error_code::invalid_policy, "\"" + key + "\" is reserved for content provenance", key);
  }
  metadata[key] = std::move(value);
  return ok;
}

result<content_provenance> read_provenance(const std::map<std::string, std::string>& metadata) {
  auto trust = metadata.find(std::string(key_trust));
  if (trust == metadata.end()) return make_error(error_code::invalid_policy, "no trust label", std::string(key_trust));
  auto level = trust_level_from_string(trust->second);
  if (!level) {
    return make_error(error_code::invalid_policy, "unknown trust label \"" + trust->second + "\"", std::string(key_trust));
  }
  content_provenance p;
  p.trust = *level;
  auto get = [&](std::string_view key) {
    auto it = metadata.find(std::string(key));
    return it == metadata.end() ? std::string() : it->second;
  };
  p.source = get(key_source);
  p.source_id = get(key_source_id);
  p.source_uri = get(key_source_uri);
  return p;
}

guardrail_verdict content_trust_guardrail::check(guardrail_stage stage, const content_item& item) const {
  auto p = read_provenance(item.metadata);
  std::string where = "at the " + std::string(to_string(stage)) + " stage";
  if (!p) return {false, p.error_value().message + " " + where + " (fails closed)"};
  bool privileged = p->trust == trust_level::system || p->trust == trust_level::application;
  if (item.role == content_role::system && !privileged) {
    return {false, std::string(to_string(p->trust)) + " content cannot take the system role " + where};
  }
  if ((stage == guardrail_stage::retrieval || stage == guardrail_stage::tool_output) && privileged) {
    return {false, "content " + where + " came from outside and cannot claim " + std::string(to_string(p->trust)) + " trust"};
  }
  return {true, {}};
}

std::string render_untrusted(const std::string& text, const content_provenance& p) {
  std::string out = "<cordon-context trust=\"" + escape(to_string(p.trust), true) + "\" source=\"" + escape(p.source, true) + "\"";
  if (!p.source_id.empty()) out += " source_id=\"" + escape(p.source_id, true) + "\"";
  if (!p.source_uri.empty()) out += " source_uri=\"" + escape(p.source_uri, true) + "\"";
  out += ">\n" + escape(text, false) + "\n</cordon-context>";
  return out;
}

}  // namespace cordon::governance
