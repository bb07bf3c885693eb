// src/core/facts_record.h — the one format of a recorded host facts file
// (docs/host-facts.md), read and written field by field by each backend's
// load_host_facts() and record_host_facts() (cordon/backend.h).
//
// A record is one JSON object: "format" (facts_record_format), "platform"
// (the backend's), then the backend's own fields. Reading is strict: a field
// of the wrong type, an unknown field or a duplicated key is an error at its
// JSON pointer, and every error of a record is listed at once.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/json_pointer.h"
#include "cordon/result.h"

namespace cordon::core {

inline constexpr std::string_view facts_record_format = "cordon-host-facts-1";

// Reads one object of a record. Every getter leaves `out` as it was when the
// field is absent (the field's default) and records an error when it has
// another type; `finish()` adds one error per field nobody asked for.
class facts_reader {
 public:
  // The record's top level, after the format and platform are checked.
  // Errors: parse_error (not JSON: location "line L, column C"; or not a
  // record: not an object, another format, a duplicated key, with `errors`),
  // unsupported_platform (a record of another platform's facts).
  static result<facts_reader> open(std::string_view text, std::string_view platform);

  void boolean(std::string_view key, bool& out);
  void string(std::string_view key, std::string& out);
  void integer(std::string_view key, std::uint64_t max, std::uint64_t& out);
  void strings(std::string_view key, std::vector<std::string>& out);
  // Calls `each(reader)` for a nested object, when present.
  template <class F>
  void object(std::string_view key, F each);
  // Calls `each(reader)` for each element of an array of objects.
  template <class F>
  void objects(std::string_view key, F each);
  // Calls `each(name, reader)` for each member of an object of objects.
  template <class F>
  void members(std::string_view key, F each);
  // Each member of an object of strings, in document order.
  void string_pairs(std::string_view key, std::vector<std::pair<std::string, std::string>>& out);

  // parse_error with every error found in `errors` (unknown fields
  // included; location: the first one's), or success.
  result<void> finish();

 private:
  facts_reader(const nlohmann::ordered_json* node, std::string pointer, std::vector<policy_error>* errors)
      : node_(node), pointer_(std::move(pointer)), errors_(errors) {}
  const nlohmann::ordered_json* field(std::string_view key, nlohmann::ordered_json::value_t type, const char* what);
  void check_unknown();

  std::shared_ptr<nlohmann::ordered_json> root_;           // the top-level reader owns the document
  std::shared_ptr<std::vector<policy_error>> own_errors_;  // and the error list
  const nlohmann::ordered_json* node_ = nullptr;
  std::string pointer_;
  std::vector<policy_error>* errors_ = nullptr;
  std::set<std::string, std::less<>> seen_;
};

// A record's top level: {"format": ..., "platform": platform}; the backend
// adds its fields.
nlohmann::ordered_json facts_record(std::string_view platform);

template <class F>
void facts_reader::object(std::string_view key, F each) {
  const auto* o = field(key, nlohmann::ordered_json::value_t::object, "an object");
  if (o == nullptr) return;
  facts_reader r(o, detail::pointer_join(pointer_, key), errors_);
  each(r);
  r.check_unknown();
}

template <class F>
void facts_reader::objects(std::string_view key, F each) {
  const auto* a = field(key, nlohmann::ordered_json::value_t::array, "an array of objects");
  if (a == nullptr) return;
  const std::string at = detail::pointer_join(pointer_, key);
  for (std::size_t i = 0; i < a->size(); ++i) {
    const std::string p = detail::pointer_join(at, i);
    if (!(*a)[i].is_object()) {
      errors_->push_back({p, "must be an object"});
      continue;
    }
    facts_reader r(&(*a)[i], p, errors_);
    each(r);
    r.check_unknown();
  }
}

template <class F>
void facts_reader::members(std::string_view key, F each) {
  const auto* o = field(key, nlohmann::ordered_json::value_t::object, "an object of objects");
  if (o == nullptr) return;
  for (const auto& [name, value] : o->items()) {
    const std::string p = detail::pointer_join(detail::pointer_join(pointer_, key), name);
    if (!value.is_object()) {
      errors_->push_back({p, "must be an object"});
      continue;
    }
    facts_reader r(&value, p, errors_);
    each(name, r);
    r.check_unknown();
  }
}

}  // namespace cordon::core
