// cordon/governance/content_trust.h — where a piece of content came from,
// and a guardrail that keeps untrusted content out of the system role
// (docs/governance.md, "Content trust"). A defense in depth beside the
// capability policy, never a replacement for it: no model or network is
// involved, only labels, checks and rendering.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "cordon/result.h"

namespace cordon::governance {

// Most trusted first. There is no "unknown": content without a known label
// is refused by the guardrail.
enum class trust_level { system, application, user, retrieved, tool_output, untrusted };
std::string_view to_string(trust_level t) noexcept;
std::optional<trust_level> trust_level_from_string(std::string_view s) noexcept;

struct content_provenance {
  trust_level trust = trust_level::untrusted;
  std::string source;      // e.g. "knowledge", "web", "tool:bash", "memory"
  std::string source_id;   // optional: the record or call id
  std::string source_uri;  // optional: where it was fetched from
};

// The metadata keys that carry provenance. Extensions may not set these, nor
// the bare names "trust", "source", "source_id", "source_uri".
inline constexpr std::string_view key_trust = "cordon.content.trust";
inline constexpr std::string_view key_source = "cordon.content.source";
inline constexpr std::string_view key_source_id = "cordon.content.source_id";
inline constexpr std::string_view key_source_uri = "cordon.content.source_uri";
bool is_reserved_metadata_key(std::string_view key) noexcept;

// Writes the provenance into `metadata` (the authoritative keys above),
// removing a stale source_id / source_uri when `p` has none.
void apply_provenance(std::map<std::string, std::string>& metadata, const content_provenance& p);

// Sets an extension's key. Errors: invalid_policy (location = the key) for a
// reserved key: provenance is set only by apply_provenance.
result<void> set_extension_metadata(std::map<std::string, std::string>& metadata, const std::string& key,
                                    std::string value);

// The provenance recorded in `metadata`. Errors: invalid_policy when the
// trust label is missing or unknown.
result<content_provenance> read_provenance(const std::map<std::string, std::string>& metadata);

enum class content_role { system, user, assistant, tool };
enum class guardrail_stage { input, retrieval, tool_output, memory_write };
std::string_view to_string(guardrail_stage s) noexcept;

struct content_item {
  content_role role = content_role::user;
  std::string text;
  std::map<std::string, std::string> metadata;  // provenance keys and extension keys
};

struct guardrail_verdict {
  bool allowed = false;
  std::string reason;  // why it was refused; empty when allowed
};

// Fails closed: content without a known trust label is refused at every
// stage; only system or application content may have the system role; at
// the retrieval and tool-output stages content may not claim system or
// application trust (it came from outside).
class content_trust_guardrail {
 public:
  guardrail_verdict check(guardrail_stage stage, const content_item& item) const;
};

// Renders content as data for a model: inside
//   <cordon-context trust="T" source="S" [source_id=".."] [source_uri=".."]>
//   ...
//   </cordon-context>
// with '&', '<' and '>' of the content (and of attribute values, plus '"')
// escaped as XML entities, so that no delimiter can appear inside it.
std::string render_untrusted(const std::string& text, const content_provenance& provenance);

}  // namespace cordon::governance
